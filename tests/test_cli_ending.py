"""The `rounds` process after a command: a round ends it without the interpreter's teardown, with the same
status and output, its database whole in the main file and no temporary file left; anything else ends the
usual way."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rounds_bot.cli import ending
from rounds_bot.cli.console import console
from rounds_bot.demo import DEMO_BUGS

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# A program as the console script runs it, with two witnesses: an object whose finalizer runs only in the
# interpreter's teardown, and an atexit handler, which runs whichever way the process ends.
PROGRAM = """
import atexit, os, sys
sys.argv[0] = "rounds"
{setup}
class Teardown:
    def __del__(self, write=os.write):
        write(2, b"witness: teardown ran\\n")
left_for_the_teardown = Teardown()
atexit.register(lambda: os.write(2, b"witness: atexit ran\\n"))
from rounds_bot.cli.{entry_module} import {entry}
{entry}()
"""

#: where each way of starting `rounds` is: the console script, and the click group called as a program
ENTRY_MODULES = {"console": "console", "main": "app"}

# the round's spill, its counted occurrences and its errors with a trace all go to temporary files
ON_DISK = """
import rounds_bot.sources.spill as spill
from rounds_bot.round.cascade import TraceErrors
from rounds_bot.round.counted import Counted
spill.IN_MEMORY, spill.CHUNK, Counted.IN_MEMORY, TraceErrors.IN_MEMORY = 10, 10, 10, 10
"""

# what differs between two first rounds: the run id and the times
_VARYING = [
    (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}"), "RUNID"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)?"), "TIME"),
    (re.compile(r"\d+(\.\d+)? ?(s|ms|seconds)\b"), "DURATION"),
]


def _same_round(text: str) -> str:
    for pattern, name in _VARYING:
        text = pattern.sub(name, text)
    return text


def _run(folder: Path, entry: str, *args: str, setup: str = "") -> subprocess.CompletedProcess[str]:
    """`rounds ARGS` in `folder` as its own process, its output read through pipes; temporary files go to
    `folder`/tmp."""
    folder.mkdir()
    (folder / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "TMPDIR": str(folder / "tmp")}
    env.pop("PYTHONUNBUFFERED", None)  # standard streams buffered, as a program's usually are
    program = PROGRAM.format(setup=setup, entry=entry, entry_module=ENTRY_MODULES[entry])
    return subprocess.run(
        [sys.executable, "-c", program, *args], cwd=folder, env=env, capture_output=True, text=True
    )


def _without_witnesses(stderr: str) -> str:
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith("witness:"))


@pytest.fixture
def folder(clean_env, tmp_path: Path) -> Path:
    return tmp_path


def test_after_a_round_the_process_ends_without_the_teardown_and_with_the_same_output(folder: Path) -> None:
    # more than a pipe holds before the round, and after it what an atexit handler writes, still in the
    # buffer when the process ends: it must all arrive
    setup = ON_DISK + "sys.stdout.write('x' * 1_000_000 + '\\n')\natexit.register(print, 'y' * 100)"
    quick = _run(folder / "quick", "console", "run", "--demo", setup=setup)
    usual = _run(folder / "usual", "main", "run", "--demo", setup=setup)
    assert (quick.returncode, usual.returncode) == (0, 0), quick.stderr + usual.stderr
    assert "witness: teardown ran" not in quick.stderr
    assert "witness: teardown ran" in usual.stderr
    assert "witness: atexit ran" in quick.stderr
    assert _same_round(quick.stdout) == _same_round(usual.stdout)
    assert quick.stdout.startswith("x" * 1_000_000 + "\n")
    assert quick.stdout.endswith("y" * 100 + "\n")
    assert f"**{len(DEMO_BUGS)} new, 0 updated, 0 regressed**" in quick.stdout
    assert _without_witnesses(quick.stderr) == _without_witnesses(usual.stderr)
    assert sorted(p.name for p in (folder / "quick" / "rounds-out").iterdir()) == sorted(
        p.name for p in (folder / "usual" / "rounds-out").iterdir()
    )


def test_after_a_round_the_database_file_alone_holds_the_round(folder: Path) -> None:
    result = _run(folder / "round", "console", "run", "--demo")
    assert result.returncode == 0, result.stderr
    assert "witness: teardown ran" not in result.stderr
    assert sorted(p.name for p in (folder / "round").glob("rounds.db*")) == ["rounds.db"]
    # the main file, copied alone as the workflow uploads it
    (folder / "upload").mkdir()
    copy = Path(shutil.copy(folder / "round" / "rounds.db", folder / "upload"))
    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as database:
        assert database.execute("select count(*) from signatures").fetchone() == (len(DEMO_BUGS),)
        assert database.execute("select count(*) from runs").fetchone() == (1,)


def test_after_a_round_no_temporary_file_is_left(folder: Path) -> None:
    result = _run(folder / "round", "console", "run", "--demo", setup=ON_DISK)
    assert result.returncode == 0, result.stderr
    assert "witness: teardown ran" not in result.stderr
    assert list((folder / "round" / "tmp").iterdir()) == []


@pytest.mark.parametrize(
    ("why", "args", "status"),
    [
        ("a failing round", ["run", "--env-file", "../settings.env"], 2),
        ("a usage error", ["run", "--no-such-option"], 2),
        ("a command that does not say it is done", ["--version"], 0),
    ],
)
def test_anything_else_ends_the_usual_way_with_the_same_status_and_output(
    folder: Path, why: str, args: list[str], status: int
) -> None:
    results = []
    for entry in ("console", "main"):
        (folder / entry).mkdir()
        # a source that does not exist: the round fails before it reads anything
        (folder / entry / "settings.env").write_text("ROUNDS_SOURCE=otlp-file:missing.jsonl\n")
        results.append(_run(folder / entry / "process", entry, *args))
    quick, usual = results
    assert quick.returncode == usual.returncode == status, why
    assert "witness: teardown ran" in quick.stderr
    assert "witness: atexit ran" in quick.stderr
    assert quick.stdout == usual.stdout
    assert _without_witnesses(quick.stderr) == _without_witnesses(usual.stderr)


class Ended(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


@pytest.fixture
def ends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What ending the process did, in order, instead of doing it (the test process goes on)."""
    steps: list[str] = []

    def exit_now(status: int) -> None:
        steps.append(f"exit {status}")
        raise Ended(status)

    monkeypatch.setattr(ending.os, "_exit", exit_now)
    monkeypatch.setattr(ending.atexit, "_run_exitfuncs", lambda: steps.append("atexit"))
    ending.forget()
    yield steps
    ending.forget()


def test_a_command_done_with_everything_ends_the_process_after_the_atexit_handlers(
    ends: list[str], tmp_path: Path
) -> None:
    ending.done_with_everything(tmp_path / "rounds.db")
    with pytest.raises(Ended):
        ending.end_now_if_done(0)
    assert ends == ["atexit", "exit 0"]


@pytest.mark.parametrize("status", [1, 2, "stopped"])
def test_a_failure_status_ends_the_usual_way(ends: list[str], tmp_path: Path, status: object) -> None:
    ending.done_with_everything(tmp_path / "rounds.db")
    ending.end_now_if_done(status)
    assert ends == []


def test_without_a_command_done_the_process_ends_the_usual_way(ends: list[str]) -> None:
    ending.end_now_if_done(0)
    assert ends == []


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_database_still_open_ends_the_usual_way(ends: list[str], tmp_path: Path, suffix: str) -> None:
    (tmp_path / f"rounds.db{suffix}").write_bytes(b"")
    ending.done_with_everything(tmp_path / "rounds.db")
    ending.end_now_if_done(0)
    assert ends == []


def test_a_thread_still_running_ends_the_usual_way(ends: list[str], tmp_path: Path) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        ending.done_with_everything(tmp_path / "rounds.db")
        ending.end_now_if_done(0)
    finally:
        release.set()
        worker.join()
    assert ends == []


def test_a_stream_that_cannot_be_flushed_ends_the_usual_way(
    ends: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class ClosedPipe:
        def flush(self) -> None:
            raise BrokenPipeError

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    ending.done_with_everything(tmp_path / "rounds.db")
    ending.end_now_if_done(0)
    assert "exit 0" not in ends


def test_the_console_script_ends_a_round_at_once_and_main_does_not(
    ends: list[str], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "argv", ["rounds", "run", "--demo"])
    with pytest.raises(Ended) as ended:
        console()
    assert ended.value.status == 0
    ends.clear()
    from rounds_bot.cli import main

    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    assert ends == []
