"""Carrying out fix requests: one attempt per pending request, a draft pull request or a report on the issue.

    for each pending request (oldest first):
        plan    = plan_branch(...)            a new branch, the open PR's, or one a crash left pushed
        with open_worktree(...) as tree:      removed whatever happens
            baseline(...)                     the tests once before the model: a test command that cannot
                                              run, or tests that already fail, stop here (`blocked.py`)
            attempt = attempt_fix(...)        (a resumed branch is only tested again: no model run)
            push(...) ; ensure_pull(...)      only when the attempt passed its checks and the tests
        FixProposed + a comment on the issue, or FixFailed + a comment saying why; FixOffered + ONE comment
        with a link that opens the pull request when GitHub does not let this token open it (the repository
        does not allow GitHub Actions to create pull requests)

A request stays pending when its branch was pushed but GitHub's answer to opening the pull request was lost
(the next run opens it, `branches.py` finds the branch, without a second model run), and when rounds chose it
itself and it could not start (`blocked.py`: tried again later, no model run until it can). Every other
outcome answers the request, so a broken setup does not spend money every run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from rounds_bot.clock import month_start
from rounds_bot.config import Settings
from rounds_bot.diagnosis.budget import BudgetCaps, decide
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.errors import RoundsError, TrackerError
from rounds_bot.events import Fact
from rounds_bot.fixing.attempt import Attempt, Rules, attempt_fix, baseline, keep_attempt, retest_pushed
from rounds_bot.fixing.blocked import known_failing_base, record_blocked
from rounds_bot.fixing.branches import BranchPlan, plan_branch
from rounds_bot.fixing.editor import FixEditor
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.messages import (
    compare_link,
    failed_comment,
    not_started_comment,
    offered_comment,
    prefilled_link,
    proposed_comment,
    pull_body,
    pull_title,
    short_pull_body,
)
from rounds_bot.fixing.prompt import fix_brief, fix_prompt
from rounds_bot.fixing.publish import PullUnknown, PushRejected, ensure_pull, push
from rounds_bot.fixing.requests import FixRequest, pending_requests
from rounds_bot.fixing.testsetup import SETUP_HINT
from rounds_bot.fixing.worktree import Worktree, open_worktree
from rounds_bot.github.pulls import PullCreationRefused, PullsApi
from rounds_bot.models import Frozen
from rounds_bot.signature import Signature
from rounds_bot.store import Store


@dataclass
class FixRun:
    """What carrying out fix requests works with, for one run of `rounds fix`."""

    settings: Settings
    store: Store
    pulls: PullsApi
    checkout: Git
    editor: FixEditor
    now: datetime
    inherited_env: Mapping[str, str]
    notes: list[str] = field(default_factory=list)
    spent_usd: float = 0.0

    def rules(self) -> Rules:
        s = self.settings
        assert s.fix_test_command is not None  # fixes are off without it (`setup.fixes_off`)
        return Rules(
            test_command=s.fix_test_command,
            test_timeout_seconds=s.fix_test_timeout_seconds,
            protected=list(s.fix_protected_paths),
            max_diff_lines=s.fix_max_diff_lines,
            author=s.fix_author(),
            inherited_env=self.inherited_env,
        )


class FixOutcome(Frozen):
    signature_id: str
    issue_number: int
    status: Literal["proposed", "updated", "offered", "failed", "blocked", "waiting"]
    pr_number: int | None = None
    url: str = ""
    branch: str = ""
    reason: str = ""


def propose_fixes(run: FixRun) -> list[FixOutcome]:
    """Every pending request, oldest first."""
    return [carry_out(run, request) for request in pending_requests(run.store)]


def carry_out(run: FixRun, request: FixRequest) -> FixOutcome:
    signature = run.store.signature(request.signature_id)
    if signature is None:
        return _fail(run, request, "rounds knows no signature " + request.signature_id, [])
    record = run.store.latest_diagnosis(signature.id, ok_only=True)
    diagnosis = record.outcome.diagnosis if record is not None else None
    try:
        base = run.settings.fix_base_branch or str(run.pulls.repository_info()["default_branch"])
        plan = plan_branch(
            run.checkout,
            run.pulls,
            remote=run.settings.fix_remote,
            base=base,
            signature_id=signature.id,
            now=run.now,
        )
        waiting = _still_blocked(run, request, plan)
        if waiting is not None:
            return waiting
        return _in_worktree(run, request, signature, diagnosis, plan)
    except PullUnknown as unknown:
        run.notes.append(f"{signature.id}: {unknown}")
        return FixOutcome(
            signature_id=signature.id,
            issue_number=request.issue_number,
            status="waiting",
            reason=str(unknown),
        )
    except RoundsError as error:
        return _fail(run, request, "rounds could not complete the attempt", [str(error)])


def _in_worktree(
    run: FixRun, request: FixRequest, signature: Signature, diagnosis: Diagnosis | None, plan: BranchPlan
) -> FixOutcome:
    with open_worktree(run.checkout, plan.branch, plan.start) as tree:
        attempt = _attempt(run, request, signature, diagnosis, plan, tree)
        if attempt.blocked is not None:
            return _blocked(run, request, plan, attempt)
        if not attempt.ok:
            kept = None
            if run.settings.fix_keep_failed_branches and plan.kind != "resume":
                kept = keep_attempt(tree, signature.id, run.now, run.settings.fix_author())
            return _fail(run, request, attempt.reason, attempt.details, attempt, kept)
        try:
            if plan.kind != "resume":
                push(tree, run.settings.fix_remote, plan.branch)
        except PushRejected as rejected:
            return _fail(run, request, "the push was rejected", [str(rejected)], attempt)
        body = _body(request, signature, diagnosis, attempt)
        title = pull_title(request.issue_number, signature.id)
        try:
            published = ensure_pull(run.pulls, plan, title=title, body=body)
        except PullCreationRefused as refused:
            return _offered(run, request, plan, attempt, (title, body), refused)
    return _proposed(run, request, plan, attempt, published.number, published.url, published.updated)


def _attempt(
    run: FixRun,
    request: FixRequest,
    signature: Signature,
    diagnosis: Diagnosis | None,
    plan: BranchPlan,
    tree: Worktree,
) -> Attempt:
    rules = run.rules()
    if plan.kind == "resume":
        return retest_pushed(tree, rules, run.checkout.fetch(run.settings.fix_remote, plan.base))
    previous = f"commit {plan.start[:12]}" if plan.kind == "update" else None
    brief = fix_brief(signature, request.issue_number, diagnosis, previous)
    prompt = fix_prompt(
        tree.path,
        brief,
        test_command=rules.test_command,
        protected=rules.protected,
        max_diff_lines=rules.max_diff_lines,
    )
    refusal = _over_budget(run, run.editor.estimate_cost(prompt))
    if refusal is not None:
        return Attempt(ok=False, reason="the model budget does not allow it", details=[refusal])
    not_started = baseline(tree, rules, _starting_point(plan))
    if not_started is not None:
        return not_started
    attempt = attempt_fix(
        tree, run.checkout, run.editor, prompt, rules, issue=request.issue_number, sid=signature.id
    )
    if attempt.edit is not None and attempt.edit.cost_usd > 0:
        _book(run, signature.id, attempt.edit.cost_usd)
    return attempt


def _starting_point(plan: BranchPlan) -> str:
    """Where the attempt starts, for a sentence: the base branch, or the open pull request's branch."""
    where = f"`{plan.base}`" if plan.kind == "new" else f"the pull request's branch `{plan.branch}`"
    return f"{where} (commit `{plan.start[:12]}`)"


def _still_blocked(run: FixRun, request: FixRequest, plan: BranchPlan) -> FixOutcome | None:
    """A waiting automatic request whose tests already failed at this very commit: not tested again."""
    if request.trigger != "auto" or plan.kind == "resume":
        return None
    reason = known_failing_base(run.store, request, plan.start, run.rules().test_command)
    if reason is None:
        return None
    return FixOutcome(
        signature_id=request.signature_id,
        issue_number=request.issue_number,
        status="blocked",
        reason=f"{reason}; tried again once it has a new commit",
    )


def _blocked(run: FixRun, request: FixRequest, plan: BranchPlan, attempt: Attempt) -> FixOutcome:
    """No attempt could start: a person is answered at once, rounds' own choice waits (`blocked.py`)."""
    setup = attempt.blocked == "setup"
    hint = SETUP_HINT if setup else None
    reason = attempt.reason + (f"; {SETUP_HINT}" if setup else "")
    if request.trigger != "auto":
        again = "Ask again with `/rounds fix` once " + (
            "the fix job installs them." if setup else "the tests pass there."
        )
        comment = not_started_comment(attempt.reason, attempt.tests, hint=hint, again=again)
        return _fail(run, request, reason, [], attempt, comment=comment)
    if record_blocked(run.store, request, attempt, plan.start, run.now):
        again = "rounds chose this problem itself and tries again " + (
            "on its next runs." if setup else "once that branch has a new commit."
        )
        _comment(run, request, not_started_comment(attempt.reason, attempt.tests, hint=hint, again=again))
    return FixOutcome(
        signature_id=request.signature_id, issue_number=request.issue_number, status="blocked", reason=reason
    )


def _over_budget(run: FixRun, estimate: float) -> str | None:
    s = run.settings
    caps = BudgetCaps(
        per_diagnosis=s.claude_max_budget_usd, per_round=s.round_budget_usd, monthly=s.monthly_budget_usd
    )
    month = run.store.spent_since(month_start(run.now))
    decision = decide(estimate, spent_this_round=run.spent_usd, spent_this_month=month, caps=caps)
    return None if decision.allow else decision.reason


def _book(run: FixRun, signature_id: str, usd: float) -> None:
    run.spent_usd += usd
    with run.store.transaction():
        run.store.book_cost(
            run_id=f"fix-{run.now:%Y%m%dT%H%M%SZ}",
            signature_id=signature_id,
            usd=usd,
            model=run.settings.claude_model,
            note="fix proposal",
            at=run.now,
        )


def _body(request: FixRequest, signature: Signature, diagnosis: Diagnosis | None, attempt: Attempt) -> str:
    assert attempt.tests is not None
    return pull_body(
        issue_number=request.issue_number,
        signature_id=signature.id,
        asked_by=request.asked_by(),
        diagnosis=diagnosis,
        files=attempt.files,
        lines=(attempt.added, attempt.deleted),
        tests=attempt.tests,
    )


def _proposed(
    run: FixRun, request: FixRequest, plan: BranchPlan, attempt: Attempt, number: int, url: str, updated: bool
) -> FixOutcome:
    assert attempt.tests is not None
    payload = {**_tested_change(request, plan, attempt), "pr": number, "url": url, "updated": updated}
    _answer(run, request, Fact.FIX_PROPOSED, payload)
    _comment(
        run, request, proposed_comment(number, plan.branch, attempt.files, attempt.tests, updated=updated)
    )
    status: Literal["proposed", "updated"] = "updated" if updated else "proposed"
    return FixOutcome(
        signature_id=request.signature_id,
        issue_number=request.issue_number,
        status=status,
        pr_number=number,
        url=url,
    )


def _offered(
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
        **_tested_change(request, plan, attempt),
        "base": plan.base,
        "link": link,
        "refused": str(refused),
    }
    _answer(run, request, Fact.FIX_OFFERED, payload)
    _comment(run, request, offered_comment(prefilled, plan.branch, attempt.files, attempt.tests))
    return FixOutcome(
        signature_id=request.signature_id,
        issue_number=request.issue_number,
        status="offered",
        url=link,
        branch=plan.branch,
        reason="GitHub Actions may not open pull requests in this repository",
    )


def _fail(
    run: FixRun,
    request: FixRequest,
    reason: str,
    details: list[str],
    attempt: Attempt | None = None,
    kept: str | None = None,
    *,
    comment: str | None = None,
) -> FixOutcome:
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
    _answer(run, request, Fact.FIX_FAILED, payload)
    _comment(run, request, comment or failed_comment(reason, details, tests, kept))
    return FixOutcome(
        signature_id=request.signature_id, issue_number=request.issue_number, status="failed", reason=reason
    )


def _tested_change(request: FixRequest, plan: BranchPlan, attempt: Attempt) -> dict[str, Any]:
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
    }


def _answer(run: FixRun, request: FixRequest, fact: Fact, payload: dict[str, Any]) -> None:
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


def _comment(run: FixRun, request: FixRequest, body: str) -> None:
    if request.issue_number <= 0:
        return
    try:
        run.pulls.create_comment(request.issue_number, body)
    except TrackerError as error:
        run.notes.append(f"the comment on #{request.issue_number} could not be posted: {error}")
