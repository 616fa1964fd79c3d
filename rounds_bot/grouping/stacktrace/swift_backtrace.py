"""Swift's runtime backtracer (Swift 5.9 and later, on by default on Linux), read as a native stack.

    Swift/ContiguousArrayBuffer.swift:600: Fatal error: Index out of range
    *** Program crashed: Bad pointer dereference at 0x0000000000000004 ***
    Thread 0 "main" crashed:
    0 0x000055d4c1a2b3c4 Cart.total() + 12 in shop at /src/Sources/shop/Cart.swift:12:5
    1 [ra] 0x000055d4c1a2b404 closure #1 in Handler.run() + 40 in shop at /src/Sources/shop/Handler.swift:30:9
    2 [ra] [system] 0x00007f8888859d90 __libc_start_call_main + 128 in libc.so.6 at ./csu/libc_start.h:58:16

The layout is the one the Swift project documents for its backtracer (`docs/Backtracing.rst`) and prints
(`SymbolicatedBacktrace.Frame.description`): a frame's number, its marks (`[ra]` a return address, `[async]`,
`[inlined]`, `[thunk]`, `[system]`), its address, the symbol with its offset (` + N`, or ` - N` before it),
`in` the image, and `at` the source location when the image has debug information (without a line for code
the compiler generated, `/src/<compiler-generated>`). A runtime failure's trap is named for what failed
(`Swift runtime failure: Index out of range`), whole. The report read is the one written to a file or a pipe
(no terminal: no colours, every thread, its `full` preset): the header says what crashed, `*** Program
crashed: <description> at 0x... ***` or `*** Swift runtime failure: <what> ***`, then each thread, the one
that crashed marked `Thread N "name" crashed:` (`test/Backtracing/CrashWithThreads.swift`): its stack is read.
A `fatalError`'s, `precondition`'s or `assert`'s message comes first, as the standard library's
`_assertionFailure` prints it: `<file>:<line>: <prefix>` with `: <message>` when there is one, the prefix
`Fatal error`, `Precondition failed` or `Assertion failed`; that line types the crash.

Releases before read the numbered lines after a mark as Apple's crash report frames (the mark as the image,
the address as a function), the first thread's, and missed the others: that reading is kept in the trace's
notes (`READ_BEFORE`), so a signature they made keeps receiving the crash (`as_read_before`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace import native
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: a frame line (module docstring)
_FRAME = re.compile(
    r"^\s*(?P<n>\d{1,5})\s+(?:\[(?:ra|async|inlined|system|thunk)\]\s+){0,5}0x[0-9a-fA-F]{1,16}\s+"
    r"(?P<fn>.{1,2048}?)(?: [+-] \d{1,12})? in (?P<image>[^\s]{1,256})"
    r"(?: at (?P<file>\S{1,1024}?)(?::(?P<line>\d{1,9})(?::\d{1,9})?)?)?$"
)
#: a runtime failure's trap, named whole (module docstring)
_RUNTIME_FAILURE = "Swift runtime failure: "
#: what crashed, without the address (which moves with every run)
_CRASHED = re.compile(
    r"^\*\*\* (?:Program crashed: (?P<kind>.{1,256}?)(?: at 0x[0-9a-fA-F]{1,16})?"
    r"|Swift runtime failure: (?P<failure>.{1,256}?)) \*\*\*$"
)
#: `_assertionFailure`'s line: its location (a path may hold spaces), its prefix, its message if any
_FAILURE = re.compile(
    r"^(?:.{1,1024}?:\d{1,9}: )?(?P<type>Fatal error|Precondition failed|Assertion failed)"
    r"(?:: (?P<value>.{0,2048}))?$"
)
#: a thread's heading, and the crashed one's (module docstring)
_THREAD = re.compile(r'^Thread \d{1,5}(?: ".{0,256}")?(?P<crashed> crashed)?:$')
#: the note holding the exception releases before read from the same text (module docstring)
READ_BEFORE = "a Swift backtrace read before as: "


def frame_parts(line: str) -> tuple[int, str, str | None, str | None, str] | None:
    """A frame line's number, function, source file and line, and image; None for any other line."""
    found = _FRAME.match(line) if " in " in line else None
    if found is None:
        return None
    return int(found["n"]), found["fn"], found["file"], found["line"], found["image"]


def is_frame_line(line: str) -> bool:
    return frame_parts(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    """A native text: the backtracer's report read as such (with how releases before read it in a note), any
    other as `native.parse` reads it."""
    if not any(frame_parts(line) for line in lines):
        return native.parse(lines)
    crash = _read(lines)
    if crash is None:
        return native.parse(lines)
    notes: tuple[str, ...] = (NEWLY_READ,)
    before = native.parse(lines)
    if before is not None:
        notes = (*notes, _before_note(before.exceptions[0]))
    return ParsedTrace("native", (crash,), notes=notes)


def _read(lines: list[str]) -> ParsedException | None:
    """The header's type and value and the crashed thread's frames (the first thread's when none is
    marked); None without a frame."""
    error_type, value, typed = native.CRASH, "", False
    frames: list[Frame] = []
    crashed = any((found := _THREAD.match(line.strip())) and found["crashed"] for line in lines)
    reading = not crashed
    for line in lines:
        stripped = line.strip()
        thread = _THREAD.match(stripped)
        if thread is not None:
            if frames:
                break  # the next thread's stack
            reading = reading or bool(thread["crashed"])
            continue
        parts = frame_parts(line) if reading else None
        if parts is not None:
            frames.append(_frame(*parts))
        elif not frames and not typed and (header := _header(stripped)) is not None:
            (error_type, value), typed = header, True
    if not frames:
        return None
    return ParsedException(error_type, value, tuple(frames), "raised")


def _frame(number: int, function: str, filename: str | None, line: str | None, image: str) -> Frame:
    if function.startswith(_RUNTIME_FAILURE):
        name: str | None = function  # its words are what failed, not a return type and a name
    else:
        name = native.bare_function(function)
    return Frame(name, module=image.rsplit("/", 1)[-1], filename=filename, lineno=int(line) if line else None)


def _header(line: str) -> tuple[str, str] | None:
    """The type and value a header line gives: the failure's prefix and message, or what crashed."""
    failure = _FAILURE.match(line)
    if failure is not None:
        return failure["type"], failure["value"] or ""
    crashed = _CRASHED.match(line)
    if crashed is not None and crashed["failure"] is not None:
        return "Swift runtime failure", crashed["failure"]
    if crashed is not None:
        return "Program crashed", crashed["kind"]
    return None


def _before_note(exception: ParsedException) -> str:
    """The note keeping how releases before read the text (`READ_BEFORE`)."""
    frames = [[f.function, f.module, f.filename, f.lineno] for f in exception.frames]
    return READ_BEFORE + json.dumps([exception.type, exception.value, frames])


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """The trace releases before read from a backtracer's report (None for any other trace), once: what
    they read carries no such note."""
    for note in trace.notes:
        if note.startswith(READ_BEFORE):
            type_, value, frames = json.loads(note[len(READ_BEFORE) :])
            read = ParsedException(type_, value, tuple(Frame(f, m, p, n) for f, m, p, n in frames), "raised")
            notes = tuple(kept for kept in trace.notes if not kept.startswith(READ_BEFORE))
            return replace(trace, exceptions=(read,), notes=notes)
    return None
