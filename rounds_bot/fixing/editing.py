"""The edit stage: each pending request's change, made by the model in a worktree and checked by rounds, as a
patch for the test and publishing stages. No code of the repository runs here.

    plan_request(run, request)     the signature, its diagnosis and the branch plan (`branches.py`); an
                                   automatic request known to fail at this very commit stops here; a
                                   request whose tests have not yet passed on its unchanged base in a
                                   test job is only probed, without the model (`blocked.needs_probe`)
    edit_planned(run, planned)     the budget; a worktree at the plan's start; the confined edit
                                   (`editor.py`: no shell); rounds' own checks (`checks.check_changes`:
                                   everything staged, the patch checked by `patchcheck`); the patch read back
                                   from exactly what was staged and checked -> `Staged(Proposal, patch)`, or
                                   a `Report` saying why not

The CLI offers the model no shell and git runs with SAFE_CONFIG, so nothing but the model has touched the
worktree when the patch is read. In GitHub Actions this is the fix-edit job: the model key and a read-only
token; it writes the bundle (`bundle.py`) and saves the database (the model's cost is booked here).
"""

from __future__ import annotations

from dataclasses import dataclass

from rounds_bot.clock import month_start
from rounds_bot.diagnosis.budget import BudgetCaps, decide
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.errors import RoundsError
from rounds_bot.fixing.attempt import keep_attempt
from rounds_bot.fixing.blocked import known_failing_base, needs_probe
from rounds_bot.fixing.branches import BranchPlan, plan_branch
from rounds_bot.fixing.bundle import Kind, Proposal, Report, Staged, sha256
from rounds_bot.fixing.checks import Guard, check_changes, patch
from rounds_bot.fixing.editor import EditRun
from rounds_bot.fixing.prompt import fix_brief, fix_prompt
from rounds_bot.fixing.requests import FixRequest, pending_requests
from rounds_bot.fixing.run import FixRun
from rounds_bot.fixing.staging import held_by_another_run, record_staged
from rounds_bot.fixing.worktree import Worktree, open_worktree
from rounds_bot.signature import Signature


@dataclass(frozen=True)
class Planned:
    """A request ready for its edit: what it is about, and where the change goes."""

    request: FixRequest
    signature: Signature
    diagnosis: Diagnosis | None
    plan: BranchPlan
    probe: bool = False


def edit_requests(run: FixRun, run_id: str = "") -> list[Staged | Report]:
    """Every pending request, oldest first: its change, or why there is none. A request is edited only
    once its tests passed on its unchanged base in an earlier test job; until then it is probed: the
    baseline runs before the model is paid, and before any file the model wrote exists.

    With the workflow run's `run_id` (the fix-edit job), each request carried into the bundle is recorded
    as staged in that run, and one another run staged and has not published yet is left to that run
    (`staging.py`); what was held back, or edited again after the hold, is said in `run.notes`."""
    results: list[Staged | Report] = []
    for request in pending_requests(run.store):
        if run_id:
            held, said = held_by_another_run(run.store, request, run_id, run.now)
            if said:
                run.notes.append(said)
            if held:
                continue
        planned = plan_request(run, request, probe=True)
        result = planned if isinstance(planned, Report) else edit_planned(run, planned)
        if run_id:
            record_staged(run.store, request, run_id, run.now)
        results.append(result)
    return results


def plan_request(run: FixRun, request: FixRequest, *, probe: bool) -> Planned | Report:
    signature = run.store.signature(request.signature_id)
    if signature is None:
        return report(request, "failed", "rounds knows no signature " + request.signature_id)
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
    except RoundsError as error:
        return report(request, "failed", "rounds could not complete the attempt", [str(error)])
    if request.trigger == "auto" and plan.kind != "resume":
        known = known_failing_base(run.store, request, plan.start, run.rules().test_command)
        if known is not None:
            return report(request, "blocked", f"{known}; tried again once it has a new commit")
    probing = probe and plan.kind != "resume" and needs_probe(run.store, request)
    return Planned(request, signature, diagnosis, plan, probe=probing)


def edit_planned(run: FixRun, planned: Planned) -> Staged | Report:
    """The change for a planned request (none for a resumed branch or a probe: only their tests run)."""
    if planned.plan.kind == "resume":
        return Staged(proposal(planned, "retest"))
    if planned.probe:
        return Staged(proposal(planned, "probe"))
    try:
        with open_worktree(run.checkout, planned.plan.branch, planned.plan.start) as tree:
            return _edit(run, planned, tree)
    except RoundsError as error:
        return report(planned.request, "failed", "rounds could not complete the attempt", [str(error)])


def _edit(run: FixRun, planned: Planned, tree: Worktree) -> Staged | Report:
    request, plan, rules = planned.request, planned.plan, run.rules()
    previous = f"commit {plan.start[:12]}" if plan.kind == "update" else None
    brief = fix_brief(planned.signature, request.issue_number, planned.diagnosis, previous, request=request)
    prompt = fix_prompt(
        tree.path,
        brief,
        test_command=rules.test_command,
        protected=rules.protected,
        max_diff_lines=rules.max_diff_lines,
    )
    refusal = over_budget(run, run.editor.estimate_cost(prompt))
    if refusal is not None:
        return report(request, "failed", "the model budget does not allow it", [refusal])
    guard = Guard.before(run.checkout, tree)
    edit = run.editor.edit(tree.path, prompt)
    if edit.cost_usd > 0:
        book(run, planned.signature.id, edit.cost_usd)
    if edit.status != "ok":
        return report(
            request, "failed", f"the model's run ended early ({edit.status})", [edit.detail], edit=edit
        )
    if edit.refused:
        details = [f"refused by the CLI: {refusal}" for refusal in edit.refused]
        return report(request, "failed", "the model tried to write outside the worktree", details, edit=edit)
    checked = check_changes(
        tree,
        guard,
        run.checkout,
        protected=rules.protected,
        max_diff_lines=rules.max_diff_lines,
        max_diff_bytes=rules.max_diff_bytes,
    )
    if checked.problems:
        kept = _keep(run, planned, tree)
        reason = "the change breaks rounds' rules for fixes"
        return report(request, "failed", reason, checked.problems, files=checked.files, edit=edit, kept=kept)
    if not checked.files:
        return report(request, "failed", "the model changed nothing", edit=edit)
    change = patch(tree.git, checked.base, checked.tree)
    if sha256(change) != checked.patch_sha256:
        return report(request, "failed", "the change moved after rounds checked it", edit=edit)
    staged = proposal(planned, "change", previous=previous).model_copy(
        update={
            "files": checked.files,
            "added": checked.added,
            "deleted": checked.deleted,
            "edit": edit.model_copy(update={"note": ""}),
            "patch_sha256": checked.patch_sha256,
        }
    )
    return Staged(staged, change)


def proposal(planned: Planned, kind: Kind, *, previous: str | None = None) -> Proposal:
    request, plan = planned.request, planned.plan
    return Proposal(
        request=request.key,
        signature_id=request.signature_id,
        issue_number=request.issue_number,
        kind=kind,
        plan=plan.kind,
        branch=plan.branch,
        base=plan.base,
        start=plan.start,
        previous=previous,
    )


def report(
    request: FixRequest,
    status: str,
    reason: str,
    details: list[str] | None = None,
    *,
    files: list[str] | None = None,
    edit: EditRun | None = None,
    kept: str | None = None,
) -> Report:
    return Report.model_validate(
        {
            "request": request.key,
            "signature_id": request.signature_id,
            "issue_number": request.issue_number,
            "status": status,
            "reason": reason,
            "details": details or [],
            "files": files or [],
            "edit": edit.model_copy(update={"note": ""}) if edit is not None else None,
            "kept": kept,
        }
    )


def _keep(run: FixRun, planned: Planned, tree: Worktree) -> str | None:
    """With ROUNDS_FIX_KEEP_FAILED_BRANCHES, the refused change in a local branch (never pushed)."""
    if not run.settings.fix_keep_failed_branches or planned.plan.kind == "resume":
        return None
    return keep_attempt(tree, planned.signature.id, run.now, run.settings.fix_author())


def over_budget(run: FixRun, estimate: float) -> str | None:
    s = run.settings
    caps = BudgetCaps(
        per_diagnosis=s.claude_max_budget_usd, per_round=s.round_budget_usd, monthly=s.monthly_budget_usd
    )
    month = run.store.spent_since(month_start(run.now))
    decision = decide(estimate, spent_this_round=run.spent_usd, spent_this_month=month, caps=caps)
    return None if decision.allow else decision.reason


def book(run: FixRun, signature_id: str, usd: float) -> None:
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
