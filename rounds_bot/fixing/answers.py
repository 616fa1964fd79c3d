"""A fix request answered: the event that answers it and the one comment on its issue.

    proposed(...)   FixProposed + "rounds opened a draft pull request ..." (or pushed a new commit to it; a
                    pull request opened ready for review where GitHub has no drafts says so)
    offered(...)    FixOffered + ONE comment with a link that opens the pull request, when GitHub does not
                    let this token open it (the repository does not allow GitHub Actions to create pull
                    requests)
    fail(...)       FixFailed + why no pull request was opened, with the tail of the test output
    blocked(...)    no attempt could start, or be tested: the test command cannot run, or the tests already
                    fail without any change. A person's request is answered at once; rounds' own choice stays
                    pending (`blocked.py`) with one comment per kind

The answering event is written at once, keyed by the request (`FixRequest.answer_key`), so a crash after it
never answers twice and a second publishing of the same request (another run got there first) adds nothing.
"""

from __future__ import annotations

from typing import Any, Literal

from rounds_bot.errors import TrackerError
from rounds_bot.events import Fact
from rounds_bot.fixing.attempt import Attempt
from rounds_bot.fixing.blocked import record_blocked
from rounds_bot.fixing.branches import BranchPlan
from rounds_bot.fixing.messages import (
    compare_link,
    failed_comment,
    not_started_comment,
    offered_comment,
    prefilled_link,
    proposed_comment,
    short_pull_body,
)
from rounds_bot.fixing.requests import FixRequest
from rounds_bot.fixing.run import FixOutcome, FixRun
from rounds_bot.fixing.testsetup import SETUP_HINT
from rounds_bot.github.pulls import PullCreationRefused


def proposed(
    run: FixRun,
    request: FixRequest,
    plan: BranchPlan,
    attempt: Attempt,
    number: int,
    url: str,
    updated: bool,
    *,
    draft: bool = True,
) -> FixOutcome:
    """FixProposed and the comment; `draft=False`: GitHub has no drafts here, so it was opened for review."""
    assert attempt.tests is not None
    payload = {**tested_change(request, plan, attempt), "pr": number, "url": url, "updated": updated}
    if not draft:
        payload["draft"] = False
    answer(run, request, Fact.FIX_PROPOSED, payload)
    said = proposed_comment(number, plan.branch, attempt.files, attempt.tests, updated=updated, draft=draft)
    comment(run, request, said)
    status: Literal["proposed", "updated"] = "updated" if updated else "proposed"
    return FixOutcome(
        signature_id=request.signature_id,
        issue_number=request.issue_number,
        status=status,
        pr_number=number,
        url=url,
    )


def offered(
    run: FixRun,
    request: FixRequest,
    plan: BranchPlan,
    attempt: Attempt,
    pull: tuple[str, str],
    refused: PullCreationRefused,
) -> FixOutcome:
    """The branch is pushed, GitHub would not let this token open its pull request: ONE comment with a link
    that opens it, and FixOffered answers the request, so no later run tries (or comments) again."""
    assert attempt.tests is not None
    title, body = pull
    link = compare_link(run.settings.github_server_url, run.pulls.repository, plan.base, plan.branch)
    short = short_pull_body(request.issue_number, request.signature_id)
    prefilled = prefilled_link(link, title=title, body=body, short_body=short)
    payload = {
        **tested_change(request, plan, attempt),
        "base": plan.base,
        "link": link,
        "refused": str(refused),
    }
    answer(run, request, Fact.FIX_OFFERED, payload)
    comment(run, request, offered_comment(prefilled, plan.branch, attempt.files, attempt.tests))
    return FixOutcome(
        signature_id=request.signature_id,
        issue_number=request.issue_number,
        status="offered",
        url=link,
        branch=plan.branch,
        reason="GitHub Actions may not open pull requests in this repository",
    )


def fail(
    run: FixRun,
    request: FixRequest,
    reason: str,
    details: list[str],
    attempt: Attempt | None = None,
    kept: str | None = None,
    *,
    said: str | None = None,
) -> FixOutcome:
    """FixFailed and a comment (`said`, or the failure's) saying why no pull request was opened."""
    tests = attempt.tests if attempt is not None else None
    payload = {
        "request": request.key,
        "reason": reason,
        "details": details,
        "kept": kept,
        "tail": tests.tail if tests is not None else "",
        "files": attempt.files if attempt else [],
        "blocked": attempt.blocked if attempt is not None else None,
    }
    answer(run, request, Fact.FIX_FAILED, payload)
    comment(run, request, said or failed_comment(reason, details, tests, kept))
    return FixOutcome(
        signature_id=request.signature_id, issue_number=request.issue_number, status="failed", reason=reason
    )


def blocked(
    run: FixRun, request: FixRequest, start: str, attempt: Attempt, *, model_ran: bool = False
) -> FixOutcome:
    """No attempt could start, or its change could not be tested (`model_ran`): a person is answered at
    once, rounds' own choice waits (`blocked.py`)."""
    setup = attempt.blocked == "setup"
    hint = SETUP_HINT if setup else None
    reason = attempt.reason + (f"; {SETUP_HINT}" if setup else "")
    if request.trigger != "auto":
        again = "Ask again with `/rounds fix` once " + (
            "the fix-test job installs them." if setup else "the tests pass there."
        )
        said = not_started_comment(attempt.reason, attempt.tests, hint=hint, again=again, model_ran=model_ran)
        return fail(run, request, reason, [], attempt, said=said)
    if record_blocked(run.store, request, attempt, start, run.now):
        again = "rounds chose this problem itself and tries again " + (
            "on its next runs." if setup else "once that branch has a new commit."
        )
        said = not_started_comment(attempt.reason, attempt.tests, hint=hint, again=again, model_ran=model_ran)
        comment(run, request, said)
    return FixOutcome(
        signature_id=request.signature_id, issue_number=request.issue_number, status="blocked", reason=reason
    )


def tested_change(request: FixRequest, plan: BranchPlan, attempt: Attempt) -> dict[str, Any]:
    """What a proposed or offered fix records of its pushed, tested change."""
    assert attempt.tests is not None
    return {
        "request": request.key,
        "branch": plan.branch,
        "commit": attempt.commit,
        "files": attempt.files,
        "added": attempt.added,
        "deleted": attempt.deleted,
        "tests": attempt.tests.summary(),
        "issue": f"#{request.issue_number}",
        "resumed": plan.kind == "resume",
        "patch_sha256": attempt.patch_sha256,
    }


def answer(run: FixRun, request: FixRequest, fact: Fact, payload: dict[str, Any]) -> None:
    """The event that answers the request, written at once (a crash after it never answers twice)."""
    with run.store.transaction():
        run.store.append_event(
            fact,
            request.answer_key,
            signature_id=request.signature_id,
            run_id="fix",
            at=run.now,
            payload=payload,
        )


def comment(run: FixRun, request: FixRequest, body: str) -> None:
    if request.issue_number <= 0:
        return
    try:
        run.pulls.create_comment(request.issue_number, body)
    except TrackerError as error:
        run.notes.append(f"the comment on #{request.issue_number} could not be posted: {error}")
