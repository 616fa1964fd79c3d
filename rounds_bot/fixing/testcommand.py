"""The repository's own tests, run in the worktree after the model's change: the proof a fix is worth a PR.

The command (ROUNDS_FIX_TEST_COMMAND) is split like a shell would split it but run without a shell, in its own
process group, with a wall-clock limit that ends everything it started. It runs code the model may have
written, so its environment is an allow-list like the CLI's plus the toolchain the job set up (a throwaway
HOME, no token of any kind); the tail
of its output is kept for the report. The whole output stays in memory for `testsetup.setup_problem` (a test
command that could not run at all) and is never written anywhere.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from rounds_bot.diagnosis.claude_cli import INHERITED_VARIABLES, isolated_home
from rounds_bot.diagnosis.process import run_with_deadline
from rounds_bot.errors import ConfigError
from rounds_bot.models import Frozen

TAIL_LINES = 40
TAIL_CHARS = 4_000


class TestRun(Frozen):
    """How the repository's tests ended."""

    __test__ = False  # not a pytest test class

    command: str
    passed: bool
    exit_code: int | None
    timed_out: bool
    seconds: float
    tail: str
    started: bool = Field(default=True, description="False when the command could not be started at all")
    output: str = Field(
        default="", exclude=True, repr=False, description="everything it printed; never published"
    )

    def summary(self) -> str:
        if self.timed_out:
            return f"`{self.command}` did not finish within the time limit"
        if not self.started:
            return f"`{self.command}` could not be started"
        outcome = "passed" if self.passed else f"failed (exit status {self.exit_code})"
        return f"`{self.command}` {outcome} in {self.seconds:.1f} s"


def split_command(command: str) -> list[str]:
    """The command's words; a clear error when it cannot be read."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise ConfigError(f"ROUNDS_FIX_TEST_COMMAND={command!r} cannot be read: {error}") from None
    if not words:
        raise ConfigError("ROUNDS_FIX_TEST_COMMAND is empty", hint="e.g. `python -m pytest -x -q`")
    return words


#: What the official setup actions export for the toolchain the job installed, beside PATH: without them the
#: job's own interpreter may not even start (setup-python's CPython needs its LD_LIBRARY_PATH on Linux). Paths
#: to tools, never credentials. (actions/setup-python src/find-python.ts, setup-java's JAVA_HOME and
#: JAVA_HOME_<version>_<arch>, setup-dotnet's DOTNET_ROOT, setup-go's GOROOT and GOTOOLCHAIN, rustup's homes.)
TOOLCHAIN_VARIABLES = frozenset(
    {
        "LD_LIBRARY_PATH",
        "PKG_CONFIG_PATH",
        "pythonLocation",
        "Python_ROOT_DIR",
        "Python2_ROOT_DIR",
        "Python3_ROOT_DIR",
        "VIRTUAL_ENV",
        "JAVA_HOME",
        "DOTNET_ROOT",
        "GOROOT",
        "GOPATH",
        "GOTOOLCHAIN",
        "CARGO_HOME",
        "RUSTUP_HOME",
    }
)


def environment_for_tests(inherited_env: Mapping[str, str]) -> dict[str, str]:
    """The part of the job's environment the test command gets: the locale and proxies the CLI gets, and
    the toolchain the job set up; never a token."""
    return {
        key: value
        for key, value in inherited_env.items()
        if key in INHERITED_VARIABLES or key in TOOLCHAIN_VARIABLES or key.startswith("JAVA_HOME_")
    }


def run_tests(
    command: str, worktree: Path, *, timeout_seconds: float, inherited_env: Mapping[str, str]
) -> TestRun:
    """Run the test command in `worktree` and keep the tail of what it printed."""
    words = split_command(command)
    with tempfile.TemporaryDirectory(prefix="rounds-fix-tests-") as scratch:
        home = Path(scratch)
        (home / "tmp").mkdir()
        env = environment_for_tests(inherited_env)
        env.update(isolated_home(home))
        env.setdefault("PATH", "/usr/bin:/bin")
        try:
            finished = run_with_deadline(words, cwd=worktree, env=env, timeout_seconds=timeout_seconds)
        except OSError as error:
            return TestRun(
                command=command,
                passed=False,
                exit_code=None,
                timed_out=False,
                seconds=0.0,
                tail=str(error),
                started=False,
                output=str(error),
            )
    output = "".join(finished.stdout_lines) + finished.stderr
    return TestRun(
        command=command,
        passed=finished.returncode == 0 and not finished.timed_out,
        exit_code=finished.returncode,
        timed_out=finished.timed_out,
        seconds=finished.seconds,
        tail=tail(output),
        output=output,
    )


def tail(text: str) -> str:
    """The last lines of `text`, at most TAIL_LINES lines and TAIL_CHARS characters."""
    lines = text.rstrip().splitlines()[-TAIL_LINES:]
    joined = "\n".join(lines)
    return joined[-TAIL_CHARS:]
