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
    pipes = _Pipes(process, stdin_text, on_stdout_line)
    timed_out = False
    try:
        process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _end_group(process)
    pipes.join(_READER_GRACE_SECONDS)
    return Finished(
        stdout_lines=list(pipes.stdout_lines),
        stderr="".join(pipes.stderr_parts),
        returncode=None if timed_out else process.returncode,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


class _Pipes:
    """The child's output read line by line as it comes, and its stdin written, by daemon threads
    (started at once), so a child that fills a pipe never blocks waiting for rounds."""

    def __init__(
        self,
        process: subprocess.Popen[str],
        stdin_text: str | None,
        on_stdout_line: Callable[[str], None] | None,
    ) -> None:
        self._process = process
        self._stdin_text = stdin_text
        self._on_stdout_line = on_stdout_line
        self.stdout_lines: list[str] = []
        self.stderr_parts: list[str] = []
        self._threads = [
            threading.Thread(target=self._read_stdout),
            threading.Thread(target=self._read_stderr),
        ]
        if stdin_text is not None:
            self._threads.append(threading.Thread(target=self._write_stdin))
        for thread in self._threads:
            thread.daemon = True
            thread.start()

    def join(self, timeout: float) -> None:
        for thread in self._threads:
            thread.join(timeout)

    def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self.stdout_lines.append(line)
            if self._on_stdout_line is not None:
                self._on_stdout_line(line)

    def _read_stderr(self) -> None:
        assert self._process.stderr is not None
        self.stderr_parts.append(self._process.stderr.read())

    def _write_stdin(self) -> None:
        assert self._process.stdin is not None
        with contextlib.suppress(BrokenPipeError, OSError):
            self._process.stdin.write(self._stdin_text or "")
            self._process.stdin.close()


def _end_group(process: subprocess.Popen[str]) -> None:
    """Kill the child's process group (the child and whatever it left running)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_READER_GRACE_SECONDS)
