"""The Go race detector's report (`go run -race`, `go test -race`), read as a Go trace.

    ==================
    WARNING: DATA RACE
    Write at 0x00c000123456 by goroutine 7:
      main.(*Cache).Set()
          /app/cache.go:42 +0x8e
      main.worker()
          /app/main.go:20 +0x4c

    Previous read at 0x00c000123456 by goroutine 6:
      main.(*Cache).Get()
          /app/cache.go:30 +0x3e

    Goroutine 7 (running) created at:
      main.main()
          /app/main.go:12 +0x84
    ==================

The layout is ThreadSanitizer's for Go (compiler-rt/lib/tsan/rtl/tsan_report.cpp, its `SANITIZER_GO`
printing: `PrintMop` prints `Write`/`Read at <address> by goroutine N:` or `by main goroutine:` for the access
that raced, then `Previous write`/`Previous read` for the one it raced with; `PrintStack` prints each frame
as the function with `()` on an indented line and `file:line +0x<offset>` under it; `Goroutine N (running)
created at:` gives each goroutine's creator), as go.dev/doc/articles/race_detector shows it. The access that
raced is where the race was found: its stack is the trace's (the raised exception), the previous access is
kept as another goroutine's (`context`: it explains, it never contributes), and the creators are left out.
Addresses, goroutine ids and offsets never reach a frame.

No release before this one read these reports (a race report prints no `goroutine N [status]:` header, so
the panic reader found no goroutine): their events went to their message's template, and the signature made
so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: the report's header line (tsan_report.cpp, `PrintReport`: `WARNING: DATA RACE` in Go's runtime)
HEADER = "WARNING: DATA RACE"
#: the type of the trace: a data race, whatever the accesses' kinds (which of two racing accesses is
#: found first changes from run to run)
RACE = "DATA RACE"
#: an access's line (`PrintMop`): the one that raced, or the one before it; its kind is the trace's value;
#: older runtimes print no address (`Read by goroutine 185:`, go.dev/doc/articles/race_detector)
_ACCESS = re.compile(
    r"^(?P<kind>(?P<previous>Previous )?(?:[Ww]rite|[Rr]ead))(?: at 0x[0-9a-f]{1,16})? by "
    r"(?:goroutine \d{1,20}|main goroutine):$"
)
#: what makes a Go frame of a symbol, its file and line (`go`'s reading)
FrameMaker = Callable[[str, str, int], Frame]
#: a goroutine's creator, `Goroutine 7 (running) created at:`: no access's stack
_CREATED = re.compile(r"^Goroutine \d{1,20} \([^)]{1,32}\) created at:$")
#: a frame's function line, `  main.(*Cache).Set()` (always `()`: the race runtime prints no arguments)
_FUNCTION = re.compile(r"^  (?P<symbol>\S{1,2048})\(\)$")
#: its file line, `      /app/cache.go:42 +0x8e`
_FILE = re.compile(r"^\s{4,}(?P<file>\S.{0,2047}?):(?P<line>\d{1,9})(?: \+0x[0-9a-f]{1,16})?$")


def is_function_line(line: str) -> bool:
    """Whether a line is a race report's function line, `  main.(*Cache).Set()`: a frame's line, which the
    panic's function test (unindented lines only) does not see (`go.is_frame_line`)."""
    return line.startswith("  ") and line.endswith("()") and _FUNCTION.match(line) is not None


def is_race_report(lines: list[str]) -> bool:
    """Whether the text prints a race report's header."""
    return any(line.strip() == HEADER for line in lines)


def parse(lines: list[str], frame: FrameMaker) -> ParsedTrace | None:
    """The first race the text reports: its access's stack raised, the previous access's as context; None
    without a frame. `frame` makes a Go frame from a symbol and its file line (`go`'s reading)."""
    stacks: list[tuple[str, list[Frame]]] = []
    current: list[Frame] | None = None
    pending: str | None = None
    reported = False
    for line in lines:
        if line.strip() == HEADER:
            if reported:
                break  # the next race is another report
            reported = True
            continue
        if not reported:
            continue
        access = _ACCESS.match(line)
        if access is not None:
            if access["previous"] is None and stacks:
                break
            current, pending = [], None
            stacks.append((access["kind"], current))
            continue
        if _CREATED.match(line) is not None:
            current = pending = None
            continue
        if current is None:
            continue
        function = _FUNCTION.match(line)
        if function is not None:
            pending = function["symbol"]
            continue
        found = _FILE.match(line)
        if found is not None and pending is not None:
            current.append(frame(pending, found["file"], int(found["line"])))
            pending = None
    if not stacks or not stacks[0][1]:
        return None
    (value, raised), *others = stacks
    exceptions = [ParsedException(RACE, value, tuple(raised), "raised")]
    exceptions += [
        ParsedException("goroutine", access, tuple(frames), "context") for access, frames in others
    ]
    return ParsedTrace("go", tuple(exceptions), notes=(NEWLY_READ,))
