"""Whether an issue GitHub did not find is gone for good, before rounds files it again.

A 404 on one issue may be a passing fault as well as a disappearance: a replica not yet answering for an
issue filed a moment ago, a token that briefly cannot see the repository. Filing again on such a fault would
leave a twin, so a 404 (or a 410 without a reason) counts as "gone" only when GitHub confirms it twice over:
reading the issue finds nothing here (REST "Get an issue": 404 or 410 for an issue "transferred to or deleted
from a repository where the authenticated user lacks read access"), and a fresh, complete listing of rounds'
label, which proves the repository answers, does not hold it either, and a second read after that listing
finds nothing (a person may have removed the label, so the listing alone proves nothing). An issue filed
this very round is never confirmed gone: GitHub may not answer for it everywhere yet.
"""

from __future__ import annotations

from collections.abc import Collection

from rounds_bot.errors import TrackerError
from rounds_bot.github.refusals import IssueGone, IssueLocked, IssueNotConfirmed, moved_away
from rounds_bot.github.rest import GitHubApi


def confirm_gone(api: GitHubApi, number: int, label: str, filed_now: Collection[int]) -> IssueGone | None:
    """`IssueGone` when GitHub confirms issue `number` left the repository; None when it may still be here.
    A refusal of the confirming requests themselves (the repository no longer answering) is raised."""
    if number in filed_now:
        return None
    data = api.get_issue(number)
    if data is not None:  # still readable: here (the fault was passing), or followed to another repository
        return moved_away(number, str(data.get("url") or f"/repos/{api.repository}/issues/"), api.repository)
    listing = api.list_issues(label, since=None)  # complete: no watermark, no ETag
    if any(item.get("number") == number for item in listing.items):
        return None
    # the listing misses an issue whose label a person removed: read it once more, now that the listing
    # proved the repository answers (one request; an unlabelled listing since its creation could cost pages)
    if api.get_issue(number) is not None:
        return None
    return IssueGone(
        number,
        f"is no longer in {api.repository} (GitHub answered 404 to reading it, and it is not among the "
        "issues labelled for rounds: deleted, transferred to a repository this token cannot read, or "
        "converted to a discussion)",
    )


def gone_for_good(
    api: GitHubApi, refused: TrackerError, number: int, label: str, filed_now: Collection[int]
) -> IssueGone | None:
    """The refusal of a call on issue `number` as `IssueGone` if GitHub said or confirms the issue left the
    repository; None for any other refusal (it stops the call, and nothing is filed twice)."""
    if isinstance(refused, IssueGone):
        return refused
    if isinstance(refused, IssueNotConfirmed):
        return confirm_gone(api, number, label, filed_now)
    return None


def comment_settled(
    api: GitHubApi, refused: TrackerError, number: int, label: str, filed_now: Collection[int]
) -> IssueLocked | IssueGone | None:
    """Only a confirmed-gone or locked issue settles a refused comment (asking again would be refused
    again); None for any other refusal, which leaves it pending, delivered or found posted later."""
    if isinstance(refused, IssueLocked):
        return refused
    return gone_for_good(api, refused, number, label, filed_now)
