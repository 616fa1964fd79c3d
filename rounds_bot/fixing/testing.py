"""The test stage: the repository's own tests on each proposed change, where no token is in reach.

    first, for each proposal on a new branch's start (a base no model wrote):
        worktree of its start commit (from the checkout the team's setup steps prepared)
        baseline(...)                   the tests once on the unchanged start: a test command that cannot run
                                        (`testsetup.py`) or tests that already fail end it here, as `setup`
                                        or `baseline` (a probe ends here in any case)
    then, for each proposal still open, in the bundle's order (code the model wrote runs from here on):
        worktree of its start commit
        baseline(...)                   for a pull request's branch only (its earlier commits are the model's)
        git apply --index <patch>       the change exactly as the edit stage checked it
        run_tests(...)                  the test command, with a time limit, an allow-listed environment
        guard.after_tests(...)          git's own files as they were (`checks.Guard`)
        -> Verdict(outcome, tests, patch_sha256)

Every baseline on a base no model wrote runs before any code the model wrote has run in this job: code the
tests of one change run can outlive them (a process left behind, a file written into the job's toolchain),
and must not decide the baseline of another proposal.

This stage never needs the database, GitHub or a key: in GitHub Actions it is the fix-test job, with
`contents: read` and no secret, after the team's own setup steps. What it writes (the verdict) is read by the
publishing stage as hostile: it says how the tests went, bound to the patch they ran with, and nothing else
is taken from it. A verdict cannot make a change pass rounds' checks: those run again on the patch itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rounds_bot.errors import FixError
from rounds_bot.fixing.attempt import Rules, baseline
from rounds_bot.fixing.bundle import Proposal, Staged, Verdict
from rounds_bot.fixing.checks import Guard
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.testcommand import TestRun, run_tests
from rounds_bot.fixing.testsetup import setup_problem
from rounds_bot.fixing.worktree import Worktree, open_worktree

#: what a piece of work in a worktree gives: a verdict, or none yet
_Verdict = TypeVar("_Verdict", Verdict, Verdict | None)

TAMPERED = "the tests changed git's own files (rounds put them back; nothing is committed)"
PROBE_PASSED = "the tests pass on the unchanged start"


def verdicts_for(checkout: Git, staged: list[Staged], rules: Rules) -> list[Verdict]:
    """A verdict for every proposal, in order: the baselines on a base no model wrote first, then the rest."""
    decided = {
        number: clean_baseline(checkout, item, rules, number=number)
        for number, item in enumerate(staged, start=1)
        if on_clean_base(item)
    }
    verdicts = []
    for number, item in enumerate(staged, start=1):
        if number not in decided:
            verdicts.append(verdict_for(checkout, item, rules, number=number))
            continue
        verdict = decided[number]
        if verdict is None:  # its base passed: the change's own tests, without the baseline again
            verdict = verdict_for(checkout, item, rules, number=number, with_baseline=False)
        verdicts.append(verdict)
    return verdicts


def on_clean_base(staged: Staged) -> bool:
    """A change or probe on a new branch's start: its baseline runs no code the model wrote."""
    return staged.proposal.kind in ("change", "probe") and staged.proposal.plan == "new"


def clean_baseline(checkout: Git, staged: Staged, rules: Rules, *, number: int = 1) -> Verdict | None:
    """The baseline alone, in a worktree of its own: the verdict when it decides one (a probe; a base that
    cannot be tested), None when the change goes on to its own tests."""
    proposal = staged.proposal

    def decided(tree: Worktree) -> Verdict | None:
        blocked = baseline(tree, rules, proposal.where())
        common = _verdict_fields(proposal)
        if blocked is not None:
            assert blocked.blocked is not None
            return Verdict(outcome=blocked.blocked, reason=blocked.reason, tests=blocked.tests, **common)
        if proposal.kind == "probe":
            return Verdict(outcome="passed", reason=PROBE_PASSED, **common)
        return None

    return _on_start(checkout, proposal, f"rounds/baseline-{number}", decided)


def verdict_for(
    checkout: Git, staged: Staged, rules: Rules, *, number: int = 1, with_baseline: bool = True
) -> Verdict:
    """The tests of one proposal (without the baseline when the caller ran it already)."""

    def tested(tree: Worktree) -> Verdict:
        return _in_worktree(checkout, tree, staged, rules, with_baseline=with_baseline)

    return _on_start(checkout, staged.proposal, f"rounds/tests-{number}", tested)


def _on_start(
    checkout: Git, proposal: Proposal, name: str, work: Callable[[Worktree], _Verdict]
) -> _Verdict | Verdict:
    """`work` in a new worktree `name` at the proposal's start; a verdict saying why not when the checkout
    lacks the start or the worktree cannot be made."""
    common = _verdict_fields(proposal)
    missing = _missing_start(checkout, proposal.start, common)
    if missing is not None:
        return missing
    try:
        with open_worktree(checkout, name, proposal.start) as tree:
            return work(tree)
    except FixError as error:
        return Verdict(
            outcome="failed", reason="rounds could not run the tests", details=[str(error)], **common
        )


def _verdict_fields(proposal: Proposal) -> dict[str, str]:
    """What every verdict on `proposal` names: the request, the patch it tested and where it started."""
    return {"request": proposal.request, "patch_sha256": proposal.patch_sha256, "start": proposal.start}


def _missing_start(checkout: Git, start: str, common: dict[str, str]) -> Verdict | None:
    if checkout.has_commit(start):
        return None
    reason = (
        f"the checkout has no commit `{start[:12]}` to test the change on: the test job's "
        "checkout needs the repository's whole history (`fetch-depth: 0`)"
    )
    return Verdict(outcome="setup", reason=reason, **common)


def _in_worktree(
    checkout: Git, tree: Worktree, staged: Staged, rules: Rules, *, with_baseline: bool
) -> Verdict:
    proposal = staged.proposal
    common = _verdict_fields(proposal)
    if proposal.kind == "retest":
        return _retest(tree, rules, common)
    if with_baseline or proposal.kind == "probe":
        blocked = baseline(tree, rules, proposal.where())
        if blocked is not None:
            assert blocked.blocked is not None
            return Verdict(outcome=blocked.blocked, reason=blocked.reason, tests=blocked.tests, **common)
        if proposal.kind == "probe":
            return Verdict(outcome="passed", reason=PROBE_PASSED, **common)
    guard = Guard.before(checkout, tree)
    try:
        tree.git.run_bytes("apply", "--index", "--binary", "--whitespace=nowarn", "-", stdin=staged.patch)
    except FixError as error:
        reason = f"the change does not apply to commit `{proposal.start[:12]}`"
        return Verdict(outcome="failed", reason=reason, details=[str(error)], **common)
    tests = _run(tree, rules)
    tampered = guard.after_tests(tree)
    if tampered:
        return Verdict(outcome="failed", reason=TAMPERED, details=tampered, tests=tests, **common)
    if not tests.passed:
        return Verdict(
            outcome="failed", reason="the repository's tests failed with the change", tests=tests, **common
        )
    return Verdict(outcome="passed", tests=tests, **common)


def _retest(tree: Worktree, rules: Rules, common: dict[str, str]) -> Verdict:
    """A branch pushed earlier: its tests again, as it is."""
    tests = _run(tree, rules)
    if tests.passed:
        return Verdict(outcome="passed", tests=tests, **common)
    problem = setup_problem(tests, [path for path in tree.git.run("ls-files", "-z").split("\0") if path])
    if problem is not None:
        reason = f"the test command `{rules.test_command}` cannot run here: {problem}"
        return Verdict(outcome="setup", reason=reason, tests=tests, **common)
    reason = "the repository's tests fail on the branch pushed earlier"
    return Verdict(outcome="failed", reason=reason, tests=tests, **common)


def _run(tree: Worktree, rules: Rules) -> TestRun:
    return run_tests(
        rules.test_command,
        tree.path,
        timeout_seconds=rules.test_timeout_seconds,
        inherited_env=rules.inherited_env,
    )
