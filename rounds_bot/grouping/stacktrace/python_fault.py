"""Python's fatal-error dumps, as `faulthandler` prints them: a crash in C code (a segmentation fault, an
abort), or a `dump_traceback_later` timeout.

    Fatal Python error: Segmentation fault

    Thread 0x00007f3b2c1d5700 (most recent call first):
      File "/app/shop/worker.py", line 30 in poll
    Current thread 0x00007f3b2c1d4740 (most recent call first):
      File "/app/shop/native_bridge.py", line 12 in crash
      File "/app/main.py", line 5 in <module>

    Extension modules: numpy.core._multiarray_umath (total: 1)

    read_dump(lines) -> Dump | None     what failed, and the frames of the stack that crashed

Unlike a traceback (`python.py`, which makes the frames), the frames are printed crash site first, with no
comma before `in` and no source lines. The current thread's stack is the one that crashed, and the only one
read (`Stack` when the dump is of one thread); a dump that marks none current (a timeout's, of every thread)
is read by its first stack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]{1,1024})", line (?P<line>\d{1,9}) in (?P<fn>.{1,512})$')
_STACK = re.compile(
    r"^(?:(?P<thread>Current thread|Thread) 0x[0-9a-fA-F]{1,16} |Stack )\(most recent call first\):$"
)
_HEADER = re.compile(r"^(?P<type>Fatal Python error|Windows fatal exception): (?P<value>.{0,2048})$")
_TIMEOUT = re.compile(r"^Timeout \((?P<after>[\d:.]{1,32})\)!$")


@dataclass(frozen=True)
class Dump:
    """What failed, and the frames (path, line, function) of the stack that crashed, crash site first."""

    type: str
    value: str
    frames: list[tuple[str, int, str]]


def looks_like_frame(line: str) -> bool:
    return _FRAME.match(line) is not None


def read_dump(lines: list[str]) -> Dump | None:
    error_type, value = "Fatal Python error", ""
    stacks: list[tuple[bool, list[tuple[str, int, str]]]] = []
    for line in lines:
        stripped = line.strip()
        stack = _STACK.match(stripped)
        if stack is not None:
            stacks.append((stack["thread"] != "Thread", []))
            continue
        frame = _FRAME.match(line)
        if frame is not None:
            if not stacks:
                stacks.append((True, []))
            stacks[-1][1].append((frame["file"], int(frame["line"]), frame["fn"].strip()))
            continue
        if stacks:
            continue  # what follows the first stack is not the header
        if (header := _HEADER.match(stripped)) is not None:
            error_type, value = header["type"], header["value"]
        elif (timeout := _TIMEOUT.match(stripped)) is not None:
            error_type, value = "Timeout", timeout["after"]
    crashed = next((frames for current, frames in stacks if current and frames), None)
    crashed = crashed or next((frames for _, frames in stacks if frames), None)
    return Dump(error_type, value, crashed) if crashed else None
