"""Node.js / V8 stack traces (`error.stack`).

    TypeError: Cannot read properties of undefined (reading 'id')
        at Object.handler (/app/src/orders.js:10:15)
        at async Promise.all (index 0)
        at /app/src/server.js:5:3
        at async /app/src/routes.js:21:9
        at new Cart (webpack:///./src/cart.ts?4f2a:7:1)
        at processTicksAndRejections (node:internal/process/task_queues:95:5)
      [cause]: Error: connect ECONNREFUSED 127.0.0.1:5432
          at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1494:16)

Query strings and webpack hashes are stripped from file names; `async`, `new` and
`[as alias]` are dropped from function names. An anonymous async function awaited below the error prints
`at async <location>` (V8's zero-cost async stack traces put `async ` before an awaiting frame, and a
function with no name prints its location alone): often the only frame of the app's code when a library
throws (an Express handler `async (req, res) => ...` over a database client, as node-postgres' errors
show). Releases before read no frame there (`Frame.newly_read`: the trace as they read it is still looked
up, `stacktrace.as_read_before`).

A logger that prints an error's `cause` after its stack writes `caused by: ` before the cause's own stack:
pino's error serializers (`pino-std-serializers`, `stackWithCauses`), as VError's `fullStack` and bunyan's
serializer write `Caused by: `. After a stack, the cause is read as Node's `[cause]:` is, an exception of its
own, so its frames are no part of the outer error's stack and its crash site is the root cause's (before the
error's first frame such a line is its message's, as before). Releases before read
no header there and took its frames as the outer error's (the trace's notes keep what they read:
`as_read_before`).

A location may name a directory in parentheses: Next.js's route groups (`src/app/(shop)/cart/page.tsx`, in
a build's output too, `.next/server/app/(shop)/cart/page.js`), and its dev server's layer of a module,
`webpack-internal:///(rsc)/./src/x.ts` (`browser`), read by the module's path alone (`src/x.ts`). Releases
before read no V8 frame there (`Frame.newly_read`), and a Firefox or Safari frame's file with the layer's
prefix (the trace's notes keep it: `as_read_before`).

The same language's traces from browsers print Firefox's and Safari's frames (`handle@url:1:2`,
see `browser`), without a header line: they are read here too, a V8 frame first. A text with no such
frame may be a fatal error's (`node_fatal`: `FATAL ERROR: ... heap out of memory` and V8's native stack).
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace import browser, node_fatal
from rounds_bot.grouping.stacktrace.browser import HEADERLESS
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace, Relation
from rounds_bot.grouping.stacktrace.reading import OpenException, finish_trace

_FRAME_WITH_FUNCTION = re.compile(r"^\s*at (?P<fn>.{1,1024}?) \((?P<loc>[^()]{1,2048}|<anonymous>|native)\)$")
_FRAME_BARE = re.compile(r"^\s*at (?P<async>async )?(?P<loc>[^\s()]{1,2048}:\d{1,9}(?::\d{1,9})?)$")
#: a directory named in parentheses, `/(shop)/` (Next.js's route groups and its layers, see the module
#: docstring), which the patterns above do not read in a location
_GROUP = r"(?<=/)\([^\s()/]{1,256}\)(?=/)"
_GROUPED_WITH_FUNCTION = re.compile(
    rf"^\s*at (?P<fn>.{{1,1024}}?) \((?P<loc>(?:[^()]|{_GROUP}){{1,2048}})\)$"
)
_GROUPED_BARE = re.compile(
    rf"^\s*at (?P<async>async )?(?P<loc>(?:[^\s()]|{_GROUP}){{1,2048}}:\d{{1,9}}(?::\d{{1,9}})?)$"
)
_LOCATION = re.compile(r"^(?P<file>.{1,2048}?)(?::(?P<line>\d{1,9}))?(?::(?P<col>\d{1,9}))?$")
_HEADER = re.compile(
    r"^(?P<indent>\s*)(?:(?P<link>\[cause\]:|[Cc]aused by:)\s*)?"
    r"(?P<type>[A-Za-z_$][\w$.]{0,255})(?::\s?(?P<value>.*))?$"
)
#: the prefixes of a cause's header: Node's own (`util.inspect`), and a logger's (see the module docstring)
_CAUSE_PREFIXES = ("[cause]:", "caused by:", "Caused by:")
#: the note of a cause read after a logger's `caused by: ` (see the module docstring), `CAUSED_BY + "<n>"`:
#: the exception's index in the trace (releases before read no header there)
CAUSED_BY = "a cause printed after a logger's 'caused by:': "
# What Node prints after a stack when it inspects an error: `{`, `  code: 'ERR_X',`, `}`.
_NOISE = re.compile(r"^\s*[{}]\s*$|^\s+\w+: .*$|^\s*\.\.\. \d+ (?:more|lines matching cause stack trace).*$")
_QUERY = re.compile(r"[?#].*$")
#: the note of a browser's frame whose file releases before read with Next.js's layer prefix, `LAYERED +
#: "<exception> <frame> <file>"` (see the module docstring)
LAYERED = "a browser's frame read with its bundler layer: "


def looks_like_v8_frame(line: str) -> bool:
    if line.endswith(" {"):
        line = line[:-2]
    match = _FRAME_WITH_FUNCTION.match(line)
    if match is None and ")/" in line:
        match = _GROUPED_WITH_FUNCTION.match(line)
    if match:
        return bool(re.search(r":\d+:\d+$|^node:|^native$|^<anonymous>$|^index \d+$", match["loc"]))
    return bool(_FRAME_BARE.match(line) or (")/" in line and _GROUPED_BARE.match(line)))


def is_frame_line(line: str) -> bool:
    """A V8 or a browser's frame, or a frame of a fatal error's native stack (`node_fatal`)."""
    return _frame(line) is not None or (
        line.lstrip()[:1].isdigit() and ": " in line.lstrip()[:6] and node_fatal.is_fatal_frame(line)
    )


def parse_with_fatal_errors(lines: list[str]) -> ParsedTrace | None:
    """An error's stack, else a fatal error's (`node_fatal`): a text with no V8 or browser frame that
    reads as the former reads as it always did."""
    return parse(lines) or node_fatal.parse(lines)


def parse(lines: list[str]) -> ParsedTrace | None:
    exceptions: list[ParsedException] = []
    current: OpenException | None = None
    v8_frames = False
    caused_by: list[str] = []
    layered: list[str] = []
    last = _cut_frame_at(lines)
    for number, line in enumerate(lines):
        if not line.strip() or number == last:
            continue
        frame = _frame(line)
        if frame is not None:
            v8_frames = v8_frames or line.lstrip().startswith("at ")
            if current is None:
                current = OpenException("Error", "", "raised")
            if ")/" in line and "@" in line and not line.lstrip().startswith("at "):  # a browser's frame
                layered.extend(_layered_note(line, frame, len(exceptions), len(current.frames)))
            current.frames.append(frame)
            continue
        stripped = line.strip()
        # a logger's cause follows a stack: before the error's first frame, its message may say `caused by:`
        is_cause = stripped.startswith(_CAUSE_PREFIXES[0]) or (
            stripped.startswith(_CAUSE_PREFIXES[1:]) and current is not None and bool(current.frames)
        )
        header = _HEADER.match(stripped)
        if header and (is_cause or current is None or current.frames) and not _NOISE.match(line):
            if current is not None:
                exceptions.append(current.close())
            if is_cause and header["link"] in _CAUSE_PREFIXES[1:]:
                caused_by.append(f"{CAUSED_BY}{len(exceptions)}")
            relation: Relation = "cause" if is_cause else ("raised" if not exceptions else "cause")
            current = OpenException(header["type"], (header["value"] or "").strip(), relation)
        elif current is not None and not current.frames and not _NOISE.match(line):
            current.value = (current.value + " " + stripped).strip()
    trace = finish_trace("node", exceptions, current)
    if trace is not None and (caused_by or layered):
        trace = replace(trace, notes=(*caused_by, *layered))
    if trace is not None and not v8_frames:  # a browser's stack alone: see `HEADERLESS`
        return replace(trace, notes=(*trace.notes, HEADERLESS))
    if trace is not None and all(frame.newly_read for e in trace.exceptions for frame in e.frames):
        # only `at async <location>` frames: releases before read no trace here, only the message
        return replace(trace, notes=(*trace.notes, NEWLY_READ))
    return trace


def _cut_frame_at(lines: list[str]) -> int | None:
    """The number of the last line when it is a frame line cut short after a frame (`    a`, `    at`): a
    text cut to an attribute length limit (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`) ends where the limit falls.
    Read as a header, it was a cause named `at`, and occurrences whose messages differ in length were two
    problems. (A signature made from such a text before is not looked up: its cause was a fragment.)"""
    number = len(lines) - 1
    while number >= 0 and not lines[number].strip():
        number -= 1
    if number < 1:
        return None
    line = lines[number]
    cut = line.strip()
    if line[:1].isspace() and cut in ("a", "at") and _frame(lines[number - 1]) is not None:
        return number
    return None


def _layered_note(line: str, frame: Frame, exception: int, at: int) -> list[str]:
    """The note (`LAYERED`) of a browser's frame whose file releases before read otherwise, if it is one."""
    before = browser.frame(line, as_read_before=True)
    if before is None or before.filename == frame.filename:
        return []
    return [f"{LAYERED}{exception} {at} {before.filename}"]


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): a browser's
    frame with Next.js's layer prefix in its file (`LAYERED`), and each cause printed after a logger's
    `caused by: ` (`CAUSED_BY`) read as no exception, its frames as the exception's before it."""
    files = _files_read_before(trace)
    causes = _causes_read_before(files or trace)
    return causes or files


def _files_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """The trace with each frame noted under `LAYERED` in the file releases before read, without those notes;
    None when none is noted."""
    noted = [note[len(LAYERED) :].split(" ", 2) for note in trace.notes if note.startswith(LAYERED)]
    if not noted:
        return None
    frames = [list(exception.frames) for exception in trace.exceptions]
    for exception, at, filename in noted:
        frames[int(exception)][int(at)] = replace(frames[int(exception)][int(at)], filename=filename)
    return replace(
        trace,
        exceptions=tuple(replace(e, frames=tuple(f)) for e, f in zip(trace.exceptions, frames, strict=True)),
        notes=tuple(note for note in trace.notes if not note.startswith(LAYERED)),
    )


def _causes_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """Each cause printed after a logger's `caused by: ` (`CAUSED_BY`) read as no exception, its frames as the
    exception's before it (which has frames: see `parse`); None when there is none."""
    noted = {note[len(CAUSED_BY) :] for note in trace.notes if note.startswith(CAUSED_BY)}
    if not noted:
        return None
    read: list[ParsedException] = []
    for index, exception in enumerate(trace.exceptions):
        if str(index) in noted and read:
            read[-1] = replace(read[-1], frames=read[-1].frames + exception.frames)
        else:
            read.append(exception)
    notes = tuple(note for note in trace.notes if not note.startswith(CAUSED_BY))
    return replace(trace, exceptions=tuple(read), notes=notes)


def _frame(line: str) -> Frame | None:
    if line.endswith(" {"):
        line = line[:-2]  # Node opens the error's own properties after the last frame
    frame = _v8_frame(line, _FRAME_WITH_FUNCTION, _FRAME_BARE)
    if frame is None and ")/" in line:
        # a location with a directory in parentheses (module docstring), which no release before read
        frame = _v8_frame(line, _GROUPED_WITH_FUNCTION, _GROUPED_BARE)
        if frame is not None:
            return replace(frame, newly_read=True)
    if frame is None and "@" in line:
        return browser.frame(line)
    return frame


def _v8_frame(line: str, with_function: re.Pattern[str], bare_frame: re.Pattern[str]) -> Frame | None:
    match = with_function.match(line)
    if match:
        function, location = match["fn"], match["loc"]
    else:
        bare = bare_frame.match(line)
        if not bare:
            return None
        if bare["async"]:
            filename, lineno = _location(bare["loc"])
            return Frame(function=None, filename=filename, lineno=lineno, newly_read=True)
        function, location = None, bare["loc"]
    filename, lineno = _location(location)
    return Frame(function=_function(function), filename=filename, lineno=lineno)


def _function(name: str | None) -> str | None:
    if not name:
        return None
    name = re.sub(r"^(?:async |new )", "", name)
    name = re.sub(r" \[as [^\]]{1,256}\]$", "", name)
    return name.strip() or None


def _location(location: str) -> tuple[str | None, int | None]:
    if location in ("<anonymous>", "native") or location.startswith("index "):
        return None, None
    match = _LOCATION.match(location)
    if not match:
        return location, None
    # (Next.js's layer prefix, `browser.without_bundler_layer`, is in no location releases before read)
    filename = browser.without_bundler_layer(_QUERY.sub("", match["file"]))
    return filename, int(match["line"]) if match["line"] else None
