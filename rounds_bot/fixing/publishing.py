"""The publishing stage: each tested change committed, pushed and proposed, or its failure reported; the write
token is here and no code of the repository ever runs here.

    each report of the bundle      answered as it says (a refused edit, the budget: FixFailed + a comment)
    each proposal:
      its request, from the DATABASE   still pending? (another run may have answered it: skipped); who asked,
                                       for which issue: from the database, never from the bundle
      its verdict                      present, for this very patch (sha256) and start commit; its text
                                       scrubbed of every token this process holds, in any encoding
      setup / baseline                 answered (a person) or left waiting (rounds' own choice)
      a probe that passed              the waiting request is ready: the model runs on the next run
      failed                           FixFailed with the tests' tail
      passed                           the patch checked again (`patchcheck.check_patch`), then in a FRESH
                                       repository (`freshclone.py`: no hook, fsmonitor, filter or any other
                                       configured command; no worktree): the branch planned again, the patch
                                       applied to the index on its start commit, committed with the trailers
                                       (its own patch hashed again: it must be the checked one), pushed, the
                                       draft pull request opened or updated (`publish.py`), or the link

A change planned on a branch that moved meanwhile (someone pushed to the pull request's branch, or one was
opened for the problem) is not pushed: it is reported, and the next `/rounds fix` starts from the new state.
"""

from __future__ import annotations

from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.errors import RoundsError
from rounds_bot.fixing import answers
from rounds_bot.fixing.attempt import Attempt
from rounds_bot.fixing.blocked import record_ready
from rounds_bot.fixing.branches import BranchPlan, plan_branch
from rounds_bot.fixing.bundle import Loaded, Report, Staged, Verdict
from rounds_bot.fixing.freshclone import commit_patch, fresh_clone
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.messages import commit_message, pull_body, pull_title
from rounds_bot.fixing.patchcheck import check_patch
from rounds_bot.fixing.publish import PullUnknown, PushRejected, ensure_pull, push_commit
from rounds_bot.fixing.pullfacts import revision, revisions, whole_pull
from rounds_bot.fixing.requests import FixRequest, pending_requests
from rounds_bot.fixing.run import FixOutcome, FixRun
from rounds_bot.fixing.staging import record_published
from rounds_bot.fixing.tokens import scrub, values_in_reach
from rounds_bot.github.pulls import PullCreationRefused

NO_VERDICT = "the tests of the change did not report back (the job or step that runs them did not finish)"


def publish_bundle(run: FixRun, loaded: Loaded, verdicts: dict[str, Verdict]) -> list[FixOutcome]:
    """Every report, then every proposal with its verdict, in the bundle's order."""
    outcomes: list[FixOutcome] = []
    for report in loaded.bundle.reports:
        outcomes.append(report_outcome(run, report))
        _settled(run, loaded, report.request, report.signature_id)
    for staged in loaded.staged:
        outcomes.append(publish_one(run, staged, verdicts.get(staged.proposal.request)))
        _settled(run, loaded, staged.proposal.request, staged.proposal.signature_id)
    return outcomes


def _settled(run: FixRun, loaded: Loaded, request_key: str, signature_id: str) -> None:
    """The bundle's run no longer holds the request: a later fix-edit may take it up (`staging.py`)."""
    if loaded.bundle.run:
        record_published(run.store, request_key, signature_id, loaded.bundle.run, run.now)


def report_outcome(run: FixRun, report: Report) -> FixOutcome:
    """A request the edit stage ended: answered with the reason (failed), or left waiting (blocked)."""
    if report.status == "blocked":
        return FixOutcome(
            signature_id=report.signature_id,
            issue_number=report.issue_number,
            status="blocked",
            reason=report.reason,
        )
    found = _pending(run, report.request, report.signature_id, report.issue_number)
    if isinstance(found, FixOutcome):
        return found
    attempt = Attempt(
        ok=False, reason=report.reason, details=report.details, files=report.files, edit=report.edit
    )
    return answers.fail(run, found, report.reason, report.details, attempt, report.kept)


def publish_one(
    run: FixRun, staged: Staged, verdict: Verdict | None, *, kept: str | None = None
) -> FixOutcome:
    proposal = staged.proposal
    found = _pending(run, proposal.request, proposal.signature_id, proposal.issue_number)
    if isinstance(found, FixOutcome):
        return found
    request = found
    if verdict is None:
        if request.trigger == "auto":  # rounds' own choice: the next run tries again
            return _outcome(request, "waiting", NO_VERDICT)
        return answers.fail(run, request, NO_VERDICT, [])
    verdict = _scrubbed(run, verdict)
    if (verdict.patch_sha256, verdict.start) != (proposal.patch_sha256, proposal.start):
        details = [f"tested: patch {verdict.patch_sha256[:12] or 'none'} on {verdict.start[:12]}"]
        return answers.fail(run, request, "the tests ran on another change than the one proposed", details)
    attempt = Attempt(
        ok=verdict.outcome == "passed",
        reason=verdict.reason,
        details=verdict.details,
        files=proposal.files,
        added=proposal.added,
        deleted=proposal.deleted,
        tests=verdict.tests,
        edit=proposal.edit,
        patch_sha256=proposal.patch_sha256 or None,
    )
    if verdict.outcome in ("setup", "baseline"):
        blocked = attempt.model_copy(update={"blocked": verdict.outcome})
        return answers.blocked(run, request, proposal.start, blocked, model_ran=proposal.kind == "change")
    if proposal.kind == "probe":
        record_ready(run.store, request, proposal.start, run.now)
        return _outcome(request, "waiting", f"its tests pass on {proposal.where()}: the model runs next time")
    if verdict.outcome == "failed":
        return answers.fail(run, request, verdict.reason, verdict.details, attempt, kept)
    if proposal.kind == "change":
        s = run.settings
        checked = check_patch(
            staged.patch,
            protected=s.fix_protected_paths,
            max_diff_lines=s.fix_max_diff_lines,
            max_bytes=s.fix_max_diff_bytes,
        )
        if checked.problems:
            return answers.fail(run, request, "the change breaks rounds' rules for fixes", checked.problems)
        attempt = attempt.model_copy(
            update={"files": checked.files, "added": checked.added, "deleted": checked.deleted}
        )
    try:
        with fresh_clone(
            run.settings.fix_remote,
            run.remote_url,
            remote_env=run.checkout.remote_env,
            inherited=run.inherited_env,
        ) as git:
            return _publish(run, git, request, staged, attempt)
    except PullUnknown as unknown:
        run.notes.append(f"{request.signature_id}: {unknown}")
        return _outcome(request, "waiting", str(unknown))
    except PushRejected as rejected:
        return answers.fail(run, request, "the push was rejected", [str(rejected)], attempt)
    except RoundsError as error:
        return answers.fail(run, request, "rounds could not complete the attempt", [str(error)], attempt)


def _publish(run: FixRun, git: Git, request: FixRequest, staged: Staged, attempt: Attempt) -> FixOutcome:
    proposal, settings = staged.proposal, run.settings
    base = settings.fix_base_branch or str(run.pulls.repository_info()["default_branch"])
    plan = plan_branch(
        git, run.pulls, remote=settings.fix_remote, base=base, signature_id=request.signature_id, now=run.now
    )
    moved = _moved(git, staged, plan)
    if moved is not None:
        return answers.fail(run, request, moved, [], attempt)
    assert attempt.tests is not None
    if proposal.kind == "change":
        message = commit_message(request.issue_number, request.signature_id, attempt.tests)
        commit = commit_patch(git, proposal.start, staged.patch, message, settings.fix_author())
        push_commit(git, settings.fix_remote, plan.branch, commit)
        attempt = attempt.model_copy(update={"ok": True, "commit": commit})
    else:  # a branch pushed earlier: as it is
        shown = whole_pull(git, git.fetch(settings.fix_remote, plan.base), plan.start)
        update = {"ok": True, "commit": plan.start, "files": shown.files, "added": shown.added}
        attempt = attempt.model_copy(update={**update, "deleted": shown.deleted})
    title = pull_title(request.issue_number, request.signature_id)
    body = _body(run, git, request, plan, attempt)
    try:
        published = ensure_pull(run.pulls, plan, title=title, body=body)
    except PullCreationRefused as refused:
        return answers.offered(run, request, plan, attempt, (title, body), refused)
    return answers.proposed(
        run,
        request,
        plan,
        attempt,
        published.number,
        published.url,
        published.updated,
        draft=published.draft,
    )


def _moved(git: Git, staged: Staged, plan: BranchPlan) -> str | None:
    """Why the change can no longer go where it was made for (None: it can)."""
    proposal = staged.proposal
    if proposal.kind == "retest":
        same = (plan.kind, plan.branch, plan.start) == ("resume", proposal.branch, proposal.start)
        return None if same else "the branch pushed earlier changed while its tests ran; ask again"
    if proposal.plan == "update":
        same = (plan.kind, plan.branch, plan.start) == ("update", proposal.branch, proposal.start)
        return None if same else "the pull request's branch moved while the change was tested; ask again"
    if plan.kind != "new":
        return f"the branch {plan.branch} of this problem appeared while the change was tested; ask again"
    if not git.is_ancestor(proposal.start, plan.start):
        return f"the change's start `{proposal.start[:12]}` is not on `{plan.base}`; ask again"
    return None


def _body(run: FixRun, git: Git, request: FixRequest, plan: BranchPlan, attempt: Attempt) -> str:
    """The description of the whole pull request: base...head from git, every revision from the log."""
    assert attempt.tests is not None and attempt.commit is not None
    record = run.store.latest_diagnosis(request.signature_id, ok_only=True)
    diagnosis: Diagnosis | None = record.outcome.diagnosis if record is not None else None
    base = git.fetch(run.settings.fix_remote, plan.base)
    return pull_body(
        issue_number=request.issue_number,
        signature_id=request.signature_id,
        diagnosis=diagnosis,
        pull=whole_pull(git, base, attempt.commit, base_name=plan.base),
        revisions=revisions(run.store, plan.branch, revision(request, attempt.commit, attempt.tests)),
        tests=attempt.tests,
    )


def _pending(run: FixRun, key: str, signature_id: str, issue: int) -> FixRequest | FixOutcome:
    """The request `key` if it is still pending and is the one the stage names; else the outcome."""
    request = next((r for r in pending_requests(run.store) if r.key == key), None)
    if request is None:
        run.notes.append(f"{key}: answered already (another run published it); nothing done")
        return FixOutcome(
            signature_id=signature_id, issue_number=issue, status="skipped", reason="answered already"
        )
    if (request.signature_id, request.issue_number) != (signature_id, issue):
        named = f"{signature_id} #{issue}"
        return answers.fail(run, request, f"the change handed over names another problem ({named})", [])
    return request


def _scrubbed(run: FixRun, verdict: Verdict) -> Verdict:
    """The verdict with every token and key of this process removed from its text, however encoded."""
    values = values_in_reach(run.settings, run.inherited_env)
    command = run.settings.fix_test_command
    tests = verdict.tests
    if tests is not None:
        update = {"tail": scrub(tests.tail, values), "command": command or scrub(tests.command, values)}
        tests = tests.model_copy(update=update)
    return verdict.model_copy(
        update={
            "tests": tests,
            "reason": scrub(verdict.reason, values),
            "details": [scrub(detail, values) for detail in verdict.details],
        }
    )


def _outcome(request: FixRequest, status: str, reason: str) -> FixOutcome:
    return FixOutcome.model_validate(
        {
            "signature_id": request.signature_id,
            "issue_number": request.issue_number,
            "status": status,
            "reason": reason,
        }
    )
