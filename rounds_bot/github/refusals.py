"""What GitHub refuses about one issue, and what each refusal means for rounds.

From GitHub's REST reference ("Get an issue", "Update an issue", "Create an issue comment"):

- 410 Gone: the issue was deleted from the repository (or, with the message "Issues are disabled for this
  repo", the repository has no issues at all: that is not about one issue, and is left to `rest._translate`);
- 301 Moved Permanently: the issue was transferred to another repository; the client follows it, and a
  token that cannot read the new repository (a workflow's GITHUB_TOKEN sees its own repository only) then
  gets 404, which the reference gives for an issue "transferred to or deleted from a repository where the
  authenticated user lacks read access". An issue converted to a discussion is gone from the REST API too.
- 403 "Unable to create comment because issue is locked.": a locked conversation takes comments only from
  people with write access ("Locking conversations" in GitHub Docs); apps, a GITHUB_TOKEN among them, are
  refused whatever their `issues: write` (probot/stale#25, renovatebot/renovate#6215).

An issue gone from the repository is gone for good for rounds: its listing, `rounds db rebuild` and the
`/rounds` commands see this repository only, so the tracker files a new issue here (`IssueGone`). Gone means
confirmed: a 410 saying the issue was deleted, an edit answered by another repository's issue (`moved_away`),
or a 404 that a read and a fresh listing confirm (`gone.confirm_gone`). A bare 404, or a 410 without a reason,
may be a passing fault: it stops the call as before (`IssueNotConfirmed`) and is retried next round, because
a twin filed by mistake is worse than a round's delay. A locked issue still takes edits: only the comment is
dropped (`IssueLocked`).
"""

from __future__ import annotations

from typing import Literal

from rounds_bot.errors import TrackerError

# GitHub refuses issue and comment bodies over 65,536 characters.
MAX_BODY_CHARS = 65_536


class IssueGone(TrackerError):
    """Rounds' issue is no longer in the repository (deleted, transferred, converted to a discussion)."""

    def __init__(self, number: int, why: str) -> None:
        super().__init__(f"issue #{number} {why}")
        self.number = number
        self.why = why


class IssueLocked(TrackerError):
    """GitHub refused a write because the issue's conversation is locked."""


class IssueNotConfirmed(TrackerError):
    """A 404, or a 410 that does not say why, on a call about one issue: gone, or a passing fault (a replica
    not yet answering for an issue just filed, a token that briefly lost access). Only `gone.confirm_gone`
    may turn it into `IssueGone`; unconfirmed, it stops the call as any error does, and nothing is lost."""


# What GitHub says, lower-cased. A deleted issue: 410 "This issue was deleted" (REST "Get an issue" documents
# the 410; its message is the one GitHub's API answers). A locked conversation refusing a comment from an app
# or a GITHUB_TOKEN: 403 "Unable to create comment because issue is locked." (quoted in probot/stale#25,
# renovatebot/renovate#6215); "locked" elsewhere in a 403 (a permission refusal) is not this.
_DELETED = "issue was deleted"
_LOCKED = "unable to create comment because issue is locked"
IssueAction = Literal["edit", "comment", "read"]
_DOING: dict[IssueAction, str] = {"edit": "edit", "comment": "comment on", "read": "read the comments of"}


def issue_refusal(
    status: int, message: str, number: int, repository: str, action: IssueAction
) -> TrackerError | None:
    """The refusal of a call on issue `number`, if it is about that issue; None for anything else."""
    lowered = message.lower()
    if status == 410 and _DELETED in lowered:
        return IssueGone(number, f"was deleted from {repository} (GitHub answered 410 Gone: {message})")
    if status == 403 and _LOCKED in lowered:
        return IssueLocked(
            f"issue #{number} is locked: GitHub refused rounds' {action} ({message})",
            hint="the description is still updated; unlock the conversation to get rounds' comments"
            if action == "comment"
            else "unlock the conversation (or let a person with write access do it); rounds tries again "
            "next round",
        )
    if status == 404 or (status == 410 and "disabled" not in lowered):
        said = f": {message}" if message else " without a reason"
        return IssueNotConfirmed(
            f"cannot {_DOING[action]} issue #{number} in {repository}: GitHub answered {status}{said}",
            hint="deleted or transferred, or a passing fault: rounds checks again next round and files it "
            "again only once GitHub confirms it is gone",
        )
    return None


def moved_away(number: int, answered_url: str, repository: str) -> IssueGone | None:
    """An edit that followed a transfer into another repository the token may write to: the issue GitHub
    answered with is another repository's (`url` is `.../repos/{owner}/{repo}/issues/{number}`)."""
    if f"/repos/{repository}/issues/".lower() in answered_url.lower():
        return None
    where = answered_url.split("/repos/", 1)[-1].replace("/issues/", "#")
    return IssueGone(number, f"is no longer in {repository}: it was transferred to {where}")


def issues_disabled(what: str, repository: str, message: str) -> TrackerError:
    """A 410 not about one issue: "Create an issue" says "If issues are disabled in the repository, the API
    returns a `410 Gone` status", and GitHub's message then says so."""
    certain = "disabled" in message.lower()
    said = f" (GitHub said: {message})" if message else ""
    return TrackerError(
        f"cannot {what} in {repository}: GitHub answered 410 Gone{said}",
        # the hint promises only what holds: with GitHub's "disabled" message, every write waits in the
        # database for the next round; without a message the cause itself is unknown
        hint="enable them in the repository's settings (General, Features); nothing was lost: the next "
        "round files and updates what waits"
        if certain
        else "GitHub gave no reason: if issues are disabled, enable them in the repository's settings "
        "(General, Features); the next round tries again",
    )


def check_size(body: str, what: str) -> None:
    if len(body) > MAX_BODY_CHARS:
        raise TrackerError(
            f"{what} is {len(body):,} characters, over GitHub's limit of {MAX_BODY_CHARS:,}",
            hint="render_body truncates the stack trace to fit; a longer diagnosis must be shortened",
        )
