"""Whether a recorded fix passes the bug's tests: applied in a scratch copy, the tests run before and after.

For a case whose truth names its tests and whose whole repository is in the case folder (a shared
repository, `repository.local`): the repository copied under the eval's output folder, the bug's tests laid
over it (`truth.tests.added`, kept out of the checkout a diagnosis reads), the tests that must fail run
first (a test that already passes proves nothing: reported), then the recorded change applied with
`git apply` and the tests that must pass run, each with the fix stage's own test runner (time limit,
allow-listed environment, a throwaway HOME). Any other case with tests cannot run here, and says why: the
case keeps only the files it needs, not the project its tests run in.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

from rounds_bot.eval.cases import LoadedCase
from rounds_bot.fixing.testcommand import TestRun, run_tests
from rounds_bot.models import Frozen

FixStatus = Literal["passed", "failed", "cannot run", "no fix", "no tests"]
TIMEOUT_SECONDS = 120.0


class FixCheck(Frozen):
    status: FixStatus
    detail: str = ""


def has_tests(loaded: LoadedCase) -> bool:
    return loaded.case is not None and bool(loaded.case.truth.tests.passing_after)


def runnable(loaded: LoadedCase) -> bool:
    """Whether the case's tests can run here: a fix for it can be tested."""
    return has_tests(loaded) and cannot_run(loaded) is None


def cannot_run(loaded: LoadedCase) -> str | None:
    """Why the case's tests cannot run from the case folder, or None when they can."""
    case = loaded.case
    assert case is not None
    tests = case.truth.tests
    if case.repository.local is None or loaded.sources is None:
        how = f" (`{tests.command}`)" if tests.command else ""
        return f"only the files the case needs are kept, not the project its tests run in{how}"
    if not tests.command.startswith("python -m pytest"):
        return f"the eval runs pytest tests only, not `{tests.command}`"
    return None


def check_fix(
    loaded: LoadedCase,
    patch: str | None,
    scratch: Path,
    failed_before: dict[tuple[str, ...], bool] | None = None,
) -> FixCheck:
    """The case's tests on the fix `patch` (a unified diff against the repository), in `scratch`.
    `failed_before` remembers, across calls, whether the same tests on the same repository failed before any
    fix (cases of one bug share them), so they run once."""
    if not has_tests(loaded):
        return FixCheck(status="no tests")
    why = cannot_run(loaded)
    if why is not None:
        return FixCheck(status="cannot run", detail=why)
    if not patch:
        return FixCheck(status="no fix", detail="the answer holds no fix")
    try:
        return _tested(loaded, patch, scratch, {} if failed_before is None else failed_before)
    except (OSError, subprocess.SubprocessError) as error:
        return FixCheck(status="failed", detail=f"the fix could not be tested: {error}")


def _tested(loaded: LoadedCase, patch: str, scratch: Path, memo: dict[tuple[str, ...], bool]) -> FixCheck:
    case, sources = loaded.case, loaded.sources
    assert case is not None and sources is not None
    tree = _copy(loaded, scratch)
    key = (str(sources), str(case.truth.tests.added), *case.truth.tests.failing_before)
    if key not in memo:
        memo[key] = not _tests(tree, case.truth.tests.failing_before).passed
    if not memo[key]:
        return FixCheck(status="failed", detail="the bug's tests pass before the fix: they prove nothing")
    # the scratch copy is no repository; without the ceiling, git would find one the output folder sits in
    # and apply the patch relative to that one's root, skipping every path outside the copy
    environment = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tree.parent.resolve())}
    applied = subprocess.run(
        ["git", "apply", "--verbose", "--whitespace=nowarn", "-"],
        cwd=tree,
        input=patch.encode("utf-8"),
        capture_output=True,
        timeout=60,
        check=False,
        env=environment,
    )
    said = applied.stderr.decode("utf-8", "replace").strip().splitlines()
    problems = [line for line in said if line.startswith(("error", "Skipped patch"))]
    if applied.returncode != 0 or problems:
        return FixCheck(status="failed", detail="the fix does not apply: " + (problems or said or [""])[0])
    after = _tests(tree, case.truth.tests.passing_after)
    if not after.passed:
        return FixCheck(status="failed", detail="the bug's tests fail with the fix: " + after.tail[-300:])
    return FixCheck(status="passed")


def _copy(loaded: LoadedCase, scratch: Path) -> Path:
    case = loaded.case
    tree = loaded.fresh_copy(scratch)
    assert case is not None
    if case.truth.tests.added:
        shutil.copytree(Path(loaded.folder).parent / case.truth.tests.added, tree, dirs_exist_ok=True)
    return tree


def _tests(tree: Path, ids: list[str]) -> TestRun:
    words = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids]
    return run_tests(shlex.join(words), tree, timeout_seconds=TIMEOUT_SECONDS, inherited_env=os.environ)
