"""Run a child process with a wall-clock limit, reading its output line by line as it comes.

The child gets its own process group, so a timeout ends it together with everything it started
(the CLI starts MCP servers and search helpers), and nothing it started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: how long to wait for the output readers after the child is gone
_READER_GRACE_SECONDS = 5.0


@dataclass(frozen=True)
class Finished:
    stdout_lines: list[str]
    stderr: str
    returncode: int | None
    timed_out: bool
    seconds: float


def run_with_deadline(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    stdin_text: str | None = None,
    on_stdout_line: Callable[[str], None] | None = None,
) -> Finished:
    """Run `argv`; stdin is closed (or carries `stdin_text`, then closed). Raises OSError when
    the program cannot be started at all."""
    started = time.monotonic()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    stdout_lines: list[str] = []
    stderr_parts: list[str] = []

    def read_stdout() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            stdout_lines.append(line)
            if on_stdout_line is not None:
                on_stdout_line(line)

    def read_stderr() -> None:
        assert process.stderr is not None
        stderr_parts.append(process.stderr.read())

    def write_stdin() -> None:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, OSError):
            process.stdin.write(stdin_text or "")
            process.stdin.close()

    threads = [threading.Thread(target=read_stdout), threading.Thread(target=read_stderr)]
    if stdin_text is not None:
        threads.append(threading.Thread(target=write_stdin))
    for thread in threads:
        thread.daemon = True
        thread.start()

    timed_out = False
    try:
        process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _end_group(process)
    for thread in threads:
        thread.join(_READER_GRACE_SECONDS)
    return Finished(
        stdout_lines=list(stdout_lines),
        stderr="".join(stderr_parts),
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


def _end_group(process: subprocess.Popen[str]) -> None:
    """Kill the child's process group (the child and whatever it left running)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_READER_GRACE_SECONDS)
