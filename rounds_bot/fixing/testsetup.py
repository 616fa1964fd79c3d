"""A test command that could not run at all is a setup problem, not a failed fix.

`setup_problem(tests, repo_files)` says what kept ROUNDS_FIX_TEST_COMMAND from running, or None when it ran
(its tests may still fail: that is the code's business). Each rule is narrow and read from how the tools
themselves report the problem, so a real test failure is never taken for one:

    not started     the executable was not found or may not be run (`OSError` from exec; no shell is used)
    exit 127, 126   a shell the command went through could not find (127) or run (126) a command: POSIX
                    reserves both ("Shell Command Language", 2.8.2 Exit Status for Commands); test runners
                    never use them (pytest's are 0-5, unittest's 0-1)
    `-m MODULE`     Python's runpy, exit status 1: `<python>: No module named pytest`, or for a dotted module
                    `Error while finding module specification for 'a.b' (ModuleNotFoundError: ...)`
    pytest          `ImportError while importing test module` or `... while loading conftest` with
                    `ModuleNotFoundError: No module named 'X'`, and no test passed or failed (pytest stops at
                    collection errors: exit status 2, or 1 with `-x`, 4 for a conftest)
    pytest options  `error: unrecognized arguments: --cov` (exit status 4): the plugin is not installed
    unittest        `ImportError: Failed to import test module` with `ModuleNotFoundError`, and every test it
                    "ran" is its stand-in for a module that did not import (`unittest.loader._FailedTest`)

A missing module counts only when it is not the repository's own: no file or folder of that name anywhere in
it, except directly under `src/` (a src-layout package that is not installed). A missing module of the
repository's own is a broken base branch, reported as such.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from rounds_bot.fixing.testcommand import TestRun, split_command

#: what to change, in every report of a setup problem
SETUP_HINT = (
    "the fix-test job must install the repository's own dependencies before rounds runs the tests, e.g. a "
    "`pip install -e '.[dev]'` step before the rounds fix/test step (docs/fixes.md)"
)

_COMMAND_NOT_FOUND, _NOT_EXECUTABLE = 127, 126
_RUNPY_MISSING = re.compile(r": No module named (?P<name>[\w.]+)\s*$", re.MULTILINE)
_RUNPY_SPEC = re.compile(
    r"Error while finding module specification for '(?P<module>[\w.]+)' "
    r"\(ModuleNotFoundError: No module named '(?P<name>[\w.]+)'\)"
)
_MODULE_NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '(?P<name>[\w.]+)'")
_PYTEST_IMPORT = re.compile(r"ImportError while (?:importing test module|loading conftest)")
_PYTEST_RAN = re.compile(r"\b\d+ (?:passed|failed|xfailed|xpassed)\b")
_PYTEST_OPTIONS = re.compile(r"error: unrecognized arguments: (?P<options>.+?)\s*$", re.MULTILINE)
_UNITTEST_IMPORT = "ImportError: Failed to import test module"
_UNITTEST_RAN = re.compile(r"^Ran (?P<count>\d+) tests? in ", re.MULTILINE)
_UNITTEST_PROBLEM = re.compile(r"^(?:ERROR|FAIL): .*$", re.MULTILINE)
_UNITTEST_STANDIN = "(unittest.loader._FailedTest"


def setup_problem(tests: TestRun, repo_files: Sequence[str]) -> str | None:
    """What kept the test command from running (for "cannot run here: ..."), or None when it ran."""
    if tests.passed or tests.timed_out:
        return None
    if not tests.started:
        return f"it could not be started ({tests.tail})"
    if tests.exit_code in (_COMMAND_NOT_FOUND, _NOT_EXECUTABLE):
        return _shell_problem(tests)
    return _runner_missing(tests) or _options_unknown(tests) or _imports_missing(tests, repo_files)


def _shell_problem(tests: TestRun) -> str:
    said = _last_line(tests.output)
    what = "was not found" if tests.exit_code == _COMMAND_NOT_FOUND else "could not be executed"
    return f"a command it runs {what} (exit status {tests.exit_code}{f': {said}' if said else ''})"


def _runner_missing(tests: TestRun) -> str | None:
    """`python -m MODULE` where Python cannot find MODULE."""
    module = _dash_m_module(tests.command)
    if module is None or tests.exit_code != 1:
        return None
    for match in _RUNPY_MISSING.finditer(tests.output):
        if match["name"] == module:
            return f"Python says `No module named {module}`"
    spec = _RUNPY_SPEC.search(tests.output)
    if spec is not None and spec["module"] == module:
        return f"Python says `No module named '{spec['name']}'` (for `-m {module}`)"
    return None


def _options_unknown(tests: TestRun) -> str | None:
    if tests.exit_code != 4:  # pytest's "usage error"
        return None
    match = _PYTEST_OPTIONS.search(tests.output)
    if match is None:
        return None
    return f"pytest does not know the options `{match['options']}` (a pytest plugin is not installed)"


def _imports_missing(tests: TestRun, repo_files: Sequence[str]) -> str | None:
    """Test modules that could not import a module the repository does not have, and no test ran."""
    output = tests.output
    if not (_pytest_stopped_at_collection(output) or _unittest_ran_nothing(output)):
        return None
    missing = sorted({m["name"] for m in _MODULE_NOT_FOUND.finditer(output)})
    if not missing or any(_is_own(name, repo_files) for name in missing):
        return None
    names = ", ".join(f"`{name}`" for name in missing)
    return f"the tests cannot import {names} (`No module named '{missing[0]}'`), so no test ran"


def _pytest_stopped_at_collection(output: str) -> bool:
    return bool(_PYTEST_IMPORT.search(output)) and not _PYTEST_RAN.search(output)


def _unittest_ran_nothing(output: str) -> bool:
    """unittest counts a module that failed to import as one errored test: were they all such stand-ins?"""
    ran = _UNITTEST_RAN.search(output)
    if _UNITTEST_IMPORT not in output or ran is None:
        return False
    problems = _UNITTEST_PROBLEM.findall(output)
    return all(_UNITTEST_STANDIN in line for line in problems) and len(problems) == int(ran["count"])


def _is_own(name: str, repo_files: Sequence[str]) -> bool:
    """A module of the repository: a file or folder named like its top-level package (not only in `src/`)."""
    top = name.split(".")[0]
    for path in repo_files:
        parts = path.split("/")
        for index, part in enumerate(parts):
            if part not in (top, f"{top}.py"):
                continue
            if index == 1 and parts[0] == "src":
                continue  # src layout: the package exists but is not installed
            return True
    return False


def _dash_m_module(command: str) -> str | None:
    words = split_command(command)
    for flag, value in pairwise(words):
        if flag == "-m":
            return value
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
