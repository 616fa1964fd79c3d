"""One fix attempt inside its worktree: edit, check, test, commit. Nothing leaves the machine here.

    base    = baseline(...)              the tests once BEFORE the model runs: a command that cannot run
                                         (`testsetup.py`) or tests that already fail stop the attempt here,
                                         before any money is spent, with `blocked` saying which
    guard   = Guard.before(...)          what must not change while the model works
    run     = editor.edit(...)           the confined edit run
    checked = check_changes(...)         rounds' own checks; what passes is staged
    tests   = run_tests(...)             the repository's test command, with a time limit
    commit  = git commit                 only when the tests pass; trailers name the signature and issue

A failure at any step is an `Attempt` with `ok=False` and the reason, never an exception, so the caller can
report it on the issue; with ROUNDS_FIX_KEEP_FAILED_BRANCHES the attempted change is committed to a local
branch named `rounds/failed-fix-...` that is never pushed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field

from rounds_bot.diagnosis.prompting import Prompt
from rounds_bot.errors import FixError
from rounds_bot.fixing.checks import Guard, check_changes
from rounds_bot.fixing.editor import EditRun, FixEditor
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.messages import commit_message
from rounds_bot.fixing.testcommand import TestRun, run_tests
from rounds_bot.fixing.testsetup import setup_problem
from rounds_bot.fixing.worktree import Worktree
from rounds_bot.models import Frozen

#: why an attempt never started: the test command cannot run here, or the tests fail without any change
Blocked = Literal["setup", "baseline"]


class Attempt(Frozen):
    ok: bool
    blocked: Blocked | None = Field(default=None, description="set when the attempt could not start at all")
    reason: str = ""
    details: list[str] = Field(default_factory=list)
    commit: str | None = None
    files: list[str] = Field(default_factory=list)
    added: int = 0
    deleted: int = 0
    tests: TestRun | None = None
    edit: EditRun | None = None


@dataclass(frozen=True)
class Rules:
    """How an attempt is judged: the test command and the limits on the change."""

    test_command: str
    test_timeout_seconds: float
    protected: list[str]
    max_diff_lines: int
    author: tuple[str, str]
    inherited_env: Mapping[str, str]


def baseline(tree: Worktree, rules: Rules, where: str) -> Attempt | None:
    """The tests on the starting point, unchanged: None when they pass, else why no attempt can start.

    Run once per attempt in the fresh worktree with the same isolation as `run_tests` after the change, then
    the worktree is put back as it was (whatever the tests wrote is gone), so the model's change is all that
    `check_changes` sees.
    """
    tests = _run(rules, tree)
    _restore(tree)
    if tests.passed:
        return None
    cannot_run = _cannot_run(tests, rules, tree)
    if cannot_run is not None:
        return cannot_run
    failing = "do not finish within the time limit" if tests.timed_out else "already fail"
    reason = f"the repository's tests {failing} on {where} without any change"
    return Attempt(ok=False, blocked="baseline", reason=reason, tests=tests)


def attempt_fix(
    tree: Worktree, checkout: Git, editor: FixEditor, prompt: Prompt, rules: Rules, *, issue: int, sid: str
) -> Attempt:
    guard = Guard.before(checkout, tree)
    run = editor.edit(tree.path, prompt)
    if run.status != "ok":
        return Attempt(
            ok=False, reason=f"the model's run ended early ({run.status})", details=[run.detail], edit=run
        )
    if run.refused:
        details = [f"refused by the CLI: {refusal}" for refusal in run.refused]
        return Attempt(
            ok=False, reason="the model tried to write outside the worktree", details=details, edit=run
        )
    checked = check_changes(
        tree, guard, checkout, protected=rules.protected, max_diff_lines=rules.max_diff_lines
    )
    if checked.problems:
        reason = "the change breaks rounds' rules for fixes"
        return Attempt(ok=False, reason=reason, details=checked.problems, files=checked.files, edit=run)
    if not checked.files:
        return Attempt(ok=False, reason="the model changed nothing", edit=run)
    tests = _run(rules, tree)
    common = {
        "files": checked.files,
        "added": checked.added,
        "deleted": checked.deleted,
        "tests": tests,
        "edit": run,
    }
    if not tests.passed:
        return Attempt(ok=False, reason="the repository's tests failed with the change", **common)
    commit = tree.git.commit(commit_message(issue, sid, tests), rules.author)
    return Attempt(ok=True, commit=commit, **common)


def retest_pushed(tree: Worktree, rules: Rules, base_commit: str) -> Attempt:
    """A branch pushed by a run that died before opening its pull request: test it again as it is."""
    listed = tree.git.run("diff", "--name-only", "--no-renames", f"{base_commit}...HEAD")
    numstat = tree.git.run("diff", "--numstat", "--no-renames", f"{base_commit}...HEAD").splitlines()
    added = sum(int(line.split("\t")[0]) for line in numstat if line.split("\t")[0].isdigit())
    deleted = sum(int(line.split("\t")[1]) for line in numstat if line.split("\t")[1].isdigit())
    tests = _run(rules, tree)
    if not tests.passed:
        cannot_run = _cannot_run(tests, rules, tree)
        if cannot_run is not None:
            return cannot_run
        return Attempt(
            ok=False, reason="the repository's tests fail on the branch pushed earlier", tests=tests
        )
    files = sorted(line for line in listed.splitlines() if line)
    return Attempt(ok=True, commit=tree.git.head(), files=files, added=added, deleted=deleted, tests=tests)


def _run(rules: Rules, tree: Worktree) -> TestRun:
    return run_tests(
        rules.test_command,
        tree.path,
        timeout_seconds=rules.test_timeout_seconds,
        inherited_env=rules.inherited_env,
    )


def _cannot_run(tests: TestRun, rules: Rules, tree: Worktree) -> Attempt | None:
    """A setup problem (`testsetup.py`) as a blocked attempt, or None when the tests did run."""
    problem = setup_problem(tests, _tracked(tree))
    if problem is None:
        return None
    reason = f"the test command `{rules.test_command}` cannot run here: {problem}"
    return Attempt(ok=False, blocked="setup", reason=reason, tests=tests)


def _restore(tree: Worktree) -> None:
    """Tracked files back to the commit, untracked ones removed (ignored ones, unseen by git, stay)."""
    tree.git.run("reset", "--quiet", "--hard", "HEAD")
    tree.git.run("clean", "--quiet", "-d", "--force", "--force")


def _tracked(tree: Worktree) -> list[str]:
    return [path for path in tree.git.run("ls-files", "-z").split("\0") if path]


def keep_attempt(tree: Worktree, sid: str, now: datetime, author: tuple[str, str]) -> str | None:
    """Commit whatever the failed attempt changed to a local branch that is kept (never pushed)."""
    try:
        changed = tree.git.changed_paths()
        tree.git.stage(changed)
        if changed:
            tree.git.commit(f"Failed fix attempt for {sid} (kept for review, never pushed)\n", author)
        kept = f"rounds/failed-fix-{sid}-{now:%Y%m%dT%H%M%S}"
        tree.git.run("branch", "--quiet", "-m", tree.branch, kept)
    except FixError:
        return None
    tree.branch, tree.keep_branch = kept, True
    return kept
