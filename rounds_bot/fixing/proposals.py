"""Carrying out fix requests: one attempt per pending request, a draft pull request or a report on the issue.

    for each pending request (oldest first):
        plan    = plan_branch(...)            a new branch, the open PR's, or one a crash left pushed
        with open_worktree(...) as tree:      removed whatever happens
            attempt = attempt_fix(...)        (a resumed branch is only tested again: no model run)
            push(...) ; ensure_pull(...)      only when the attempt passed its checks and the tests
        FixProposed + a comment on the issue, or FixFailed + a comment saying why

A request stays pending only when its branch was pushed but GitHub's answer to opening the pull request was
lost: the next run opens it (`branches.py` finds the branch) without a second model run. Every other failure
answers the request, so a broken setup does not spend money every run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from rounds_bot.clock import month_start
from rounds_bot.config import Settings
from rounds_bot.diagnosis.budget import BudgetCaps, decide
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.errors import RoundsError, TrackerError
from rounds_bot.events import Fact
from rounds_bot.fixing.attempt import Attempt, Rules, attempt_fix, keep_attempt, retest_pushed
from rounds_bot.fixing.branches import BranchPlan, plan_branch
from rounds_bot.fixing.editor import FixEditor
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.messages import failed_comment, proposed_comment, pull_body, pull_title
from rounds_bot.fixing.prompt import fix_brief, fix_prompt
from rounds_bot.fixing.publish import PullUnknown, PushRejected, ensure_pull, push
from rounds_bot.fixing.requests import FixRequest, pending_requests
from rounds_bot.fixing.worktree import Worktree, open_worktree
from rounds_bot.github.pulls import PullsApi
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
    status: Literal["proposed", "updated", "failed", "waiting"]
    pr_number: int | None = None
    url: str = ""
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
        published = ensure_pull(run.pulls, plan, title=title, body=body)
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
    attempt = attempt_fix(
        tree, run.checkout, run.editor, prompt, rules, issue=request.issue_number, sid=signature.id
    )
    if attempt.edit is not None and attempt.edit.cost_usd > 0:
        _book(run, signature.id, attempt.edit.cost_usd)
    return attempt


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
    payload = {
        "request": request.key,
        "pr": number,
        "url": url,
        "branch": plan.branch,
        "commit": attempt.commit,
        "files": attempt.files,
        "added": attempt.added,
        "deleted": attempt.deleted,
        "tests": attempt.tests.summary(),
        "updated": updated,
        "issue": f"#{request.issue_number}",
        "resumed": plan.kind == "resume",
    }
    with run.store.transaction():
        run.store.append_event(
            Fact.FIX_PROPOSED,
            request.answer_key,
            signature_id=request.signature_id,
            run_id="fix",
            at=run.now,
            payload=payload,
        )
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


def _fail(
    run: FixRun,
    request: FixRequest,
    reason: str,
    details: list[str],
    attempt: Attempt | None = None,
    kept: str | None = None,
) -> FixOutcome:
    tests = attempt.tests if attempt is not None else None
    payload = {
        "request": request.key,
        "reason": reason,
        "details": details,
        "kept": kept,
        "tail": tests.tail if tests is not None else "",
        "files": attempt.files if attempt else [],
    }
    with run.store.transaction():
        run.store.append_event(
            Fact.FIX_FAILED,
            request.answer_key,
            signature_id=request.signature_id,
            run_id="fix",
            at=run.now,
            payload=payload,
        )
    _comment(run, request, failed_comment(reason, details, tests, kept))
    return FixOutcome(
        signature_id=request.signature_id, issue_number=request.issue_number, status="failed", reason=reason
    )


def _comment(run: FixRun, request: FixRequest, body: str) -> None:
    if request.issue_number <= 0:
        return
    try:
        run.pulls.create_comment(request.issue_number, body)
    except TrackerError as error:
        run.notes.append(f"the comment on #{request.issue_number} could not be posted: {error}")
