"""What a fix attempt is and how it is judged, shared by the stages (`editing.py`, `testing.py`,
`publishing.py`):

    Attempt                              how an attempt ended: ok, or the reason and what it has to show
    Rules                                the test command and the limits on the change
    baseline(tree, rules, where)         the tests once on the unchanged tree: a command that cannot run
                                         (`testsetup.py`) or tests that already fail stop the attempt there,
                                         with `blocked` saying which
    keep_attempt(...)                    ROUNDS_FIX_KEEP_FAILED_BRANCHES: the attempted change committed to a
                                         local `rounds/failed-fix-...` branch that is never pushed

A failure is an `Attempt` with `ok=False` and the reason, never an exception, so the caller can report it on
the issue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field

from rounds_bot.errors import FixError
from rounds_bot.fixing.checks import DEFAULT_MAX_DIFF_BYTES
from rounds_bot.fixing.editor import EditRun
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
    patch_sha256: str | None = Field(default=None, description="sha256 of the checked patch, when one was")


@dataclass(frozen=True)
class Rules:
    """How an attempt is judged: the test command and the limits on the change."""

    test_command: str
    test_timeout_seconds: float
    protected: list[str]
    max_diff_lines: int
    author: tuple[str, str]
    inherited_env: Mapping[str, str]
    max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES


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
