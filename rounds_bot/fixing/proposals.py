"""Carrying out fix requests in ONE process (`rounds fix`): the three stages in turn, for each request.

    for each pending request (oldest first):
        planned = plan_request(...)           editing.py: the signature, its diagnosis, the branch plan
        verdict_for(probe)                    testing.py: the tests once on the unchanged start, BEFORE the
                                              model: a test command that cannot run, or tests that already
                                              fail, stop here and nothing is spent (`answers.blocked`)
        staged  = edit_planned(...)           editing.py: the model's change, checked, as a patch
        verdict = verdict_for(staged)         testing.py: the tests with exactly that patch
        publish_one(...)                      publishing.py: the patch checked again, committed in a fresh
                                              repository, pushed, the draft pull request; or the report

The test command runs code the model wrote, as this user: it does not run while a token or key is in reach of
this process (`tokens.refuse_tests_beside`) unless ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS=true says the person
accepts that. In GitHub Actions the stages are separate jobs and the test job holds no secret
(`rounds fix edit | test | publish`; docs/fixes.md, The boundary).

A request stays pending when its branch was pushed but GitHub's answer to opening the pull request was lost
(the next run opens it, `branches.py` finds the branch, without a second model run), and when rounds chose it
itself and it could not start (`blocked.py`: tried again later, no model run until it can). Every other
outcome answers the request (`answers.py`), so a broken setup does not spend money every run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rounds_bot.errors import FixError
from rounds_bot.fixing.bundle import Report, Staged, Verdict
from rounds_bot.fixing.editing import edit_planned, plan_request, proposal
from rounds_bot.fixing.freshclone import commit_patch
from rounds_bot.fixing.publishing import publish_one, report_outcome
from rounds_bot.fixing.requests import FixRequest, pending_requests
from rounds_bot.fixing.run import FixOutcome, FixRun
from rounds_bot.fixing.testing import verdict_for
from rounds_bot.fixing.tokens import refuse_tests_beside

__all__ = ["FixOutcome", "FixRun", "carry_out", "propose_fixes"]

ALL_IN_ONE = "`rounds fix` (its three stages in one process)"


def propose_fixes(run: FixRun) -> list[FixOutcome]:
    """Every pending request, oldest first; refused before anything runs while a token is in reach."""
    requests = pending_requests(run.store)
    if requests:
        refuse_tests_beside(run.settings, run.inherited_env, doing=ALL_IN_ONE)
    return [carry_out(run, request) for request in requests]


def carry_out(run: FixRun, request: FixRequest) -> FixOutcome:
    planned = plan_request(run, request, probe=False)
    if isinstance(planned, Report):
        return report_outcome(run, planned)
    if planned.plan.kind != "resume":
        probe = Staged(proposal(planned, "probe"))
        before = verdict_for(run.checkout, probe, run.rules())
        if before.outcome != "passed":
            return publish_one(run, probe, before)
    staged = edit_planned(run, planned)
    if isinstance(staged, Report):
        return report_outcome(run, staged)
    verdict = verdict_for(run.checkout, staged, run.rules(), with_baseline=False)
    return publish_one(run, staged, verdict, kept=_keep(run, staged, verdict))


def _keep(run: FixRun, staged: Staged, verdict: Verdict) -> str | None:
    """With ROUNDS_FIX_KEEP_FAILED_BRANCHES, a change whose tests failed as a local branch of the checkout
    (never pushed): the patch committed on its start without the index or the worktree of the checkout."""
    proposal = staged.proposal
    if not run.settings.fix_keep_failed_branches or proposal.kind != "change" or verdict.outcome != "failed":
        return None
    branch = f"rounds/failed-fix-{proposal.signature_id}-{run.now:%Y%m%dT%H%M%S}"
    message = f"Failed fix attempt for {proposal.signature_id} (kept for review, never pushed)\n"
    try:
        with tempfile.TemporaryDirectory(prefix="rounds-keep-") as scratch:
            git = run.checkout.with_env(GIT_INDEX_FILE=str(Path(scratch) / "index"))
            commit = commit_patch(git, proposal.start, staged.patch, message, run.settings.fix_author())
        run.checkout.run("branch", "--quiet", "--force", branch, commit)
    except FixError:
        return None
    return branch
