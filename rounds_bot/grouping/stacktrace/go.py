"""Go panics and goroutine dumps.

    panic: runtime error: index out of range [5] with length 3 [recovered]
        panic: runtime error: index out of range [5] with length 3

    goroutine 7 [running]:
    main.(*Server).handle(0xc000010000, {0x0, 0x0})
        /home/dev/shop/server.go:42 +0x1d
    created by main.(*Server).Serve in goroutine 1
        /home/dev/shop/server.go:20 +0x65

The panicking goroutine is the first one printed; other goroutines of a dump are kept as
separate entries (relation "context") so the explanation can say why they do not contribute.
Arguments, goroutine ids and `+0x` offsets never reach a frame. A panic that prints a runtime error is typed
by its kind (`panic (index out of range)`, `go_panics`): two kinds raised in one function are two problems;
any other panic is typed `panic (value)`, and is one problem per site. A panic net/http's server recovered is
logged after its line, `http: panic serving <client address>: <value>` (net/http/server.go, `conn.serve`;
golang.org/x/net/http2's `http2: ` alike), which is read as its panic line. A signature made before any of
these (one frame's call argument in its name, every panic of a site one problem) keeps receiving them
(`as_read_before`).

A Go error carries no stack: the OpenTelemetry Go SDK's `span.RecordError(err, trace.WithStackTrace(true))`
records `runtime/debug.Stack()` where it is called (sdk/trace/span.go, `recordStackTrace`), so its frames say
where the error was recorded, typically one method's or handler's error path for every error it returns, not
where the error arose (`RECORDED`): grouping reads such an event by its type and message (`trace_memo`). Read
by its frames, every error one call site recorded was one problem; a signature made so before keeps
receiving the errors its frames find (`earlier_readings`). A panic's stack (`span.End` recovering it
records the panicking goroutine, `panic` among its frames) says where it happened, and is read as one.

The race detector's report (`WARNING: DATA RACE`) is read by `go_race`: the access that raced is the site.
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace import go_race
from rounds_bot.grouping.stacktrace.go_panics import panic_type, type_before
from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace
from rounds_bot.grouping.stacktrace.reading import named_before, renamed_note

# A panic recovered and raised again prints ` [recovered]` after its value, since Go 1.25 ` [recovered,
# repanicked]` when raised with the same value (runtime/panic.go, `printpanics`; go.dev/issue/71517).
_PANIC = re.compile(r"^\s*(?P<kind>panic|fatal error): (?P<value>.*?)(?: \[recovered(?:, repanicked)?\])?$")
#: net/http's (and x/net/http2's) log line above the stack of a handler's panic it recovered, after the
#: logger's own prefix (the standard logger's date and time): the client's address is no part of it
_HTTP_PANIC = re.compile(r"^.{0,256}?\bhttp2?: panic serving \S{1,256}: (?P<value>.*)$")
# When the runtime throws (`fatal error: concurrent map writes`) or GOTRACEBACK is `system` or more, the
# header names the goroutine's g and m (` gp=0x… m=3 mp=0x…`, or ` m=nil`) and each file line ends with its
# frame's pointers (` fp=0x… sp=0x…`, and ` pc=0x…` in later releases): runtime/traceback.go,
# goroutineheader and the frame printing of traceback. They change with every occurrence and are read as
# no part of the frame.
_GOROUTINE = re.compile(
    r"^goroutine \d+(?: gp=0x[0-9a-f]{1,16} m=(?:\d{1,9} mp=0x[0-9a-f]{1,16}|nil))? \[[^\]]{0,128}\]:$"
)
_FUNCTION = re.compile(
    r"^(?P<created>created by )?"
    r"(?P<symbol>[^\s()]{1,1024}(?:\([^()\s]{1,64}\))?[^\s(]{0,512}?)"
    r"(?:\((?P<args>.{0,1024})\))?(?: in goroutine \d+)?$"
)
FRAME_POINTERS = r"(?: fp=0x[0-9a-f]{1,16} sp=0x[0-9a-f]{1,16}(?: pc=0x[0-9a-f]{1,16})?)?"
_FILE = re.compile(
    r"^\s+(?P<file>.{1,2048}?\.(?:go|s|c)):(?P<line>\d{1,9})(?: \+0x[0-9a-f]{1,16})?" + FRAME_POINTERS + "$"
)
_SIGNAL = re.compile(r"^\[signal .*\]$")
#: the note of a stack the OpenTelemetry SDK recorded where `RecordError` was called (module docstring)
RECORDED = "the stack was recorded where the error was reported, not where it arose"
_OTEL_SDK_TRACE = "go.opentelemetry.io/otel/sdk/trace"
#: the runtime's functions a panicking goroutine's stack passes through (`panic(...)` prints as `panic`)
_PANICKING = frozenset({"panic", "gopanic", "sigpanic", "panicmem", "panicIndex", "throw", "fatalpanic"})
# A call with one argument prints it in parentheses with no space, which `_FUNCTION` cannot tell from a
# method's receiver (`pkg.(*T).M`) by the line alone; a receiver is always followed by the method's name,
# so parentheses that end the symbol are the arguments (runtime/traceback.go, `printArgs`: hexadecimal
# words, `{`/`}` around a struct's, `?` after a value that may be stale, `...` for an inlined call). They
# change with every occurrence (a pointer, an id), or with the build (whether the call was inlined), so they
# are no part of the frame. Releases before took off only a heap or stack address (Go's arenas on 64-bit
# platforms start at 0xc000000000, runtime/malloc.go) and kept any other (`RENAMED`).
_ARGUMENT = re.compile(r"\((?:\.\.\.|[0-9a-fx{},.?]{1,64})\)$")
_ADDRESS_ARGUMENT = re.compile(r"\(0xc[0-9a-f]{9,13}\??\)$")
#: the note of a frame whose name lost an argument releases before kept, `RENAMED + "<exception> <frame>
#: <name>"` (`reading.renamed_note`)
RENAMED = "a frame's name printed its call's argument: "


def is_frame_line(line: str) -> bool:
    """A frame's file line, or the function line above it (a panic's, or a race report's indented one:
    texts that differ in a frame line are no shape of one another, `trace_memo`)."""
    if _FILE.match(line) or go_race.is_function_line(line):
        return True
    stripped = line.strip()
    return not line.startswith((" ", "\t")) and "(" in stripped and _FUNCTION.match(stripped) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    panic_kind, panic_value = "panic", ""
    goroutines: list[list[Frame]] = []
    frames: list[Frame] | None = None
    pending: tuple[str, bool] | None = None
    seen_panic = served_only = False
    renamed: list[str] = []
    for line in lines:
        if not line.strip() or _SIGNAL.match(line.strip()):
            continue
        panic = _PANIC.match(line)
        # net/http's line, before any goroutine, stands for the panic line until the runtime's own comes
        served = _HTTP_PANIC.match(line) if panic is None and frames is None and not seen_panic else None
        if served:
            panic_kind, panic_value, seen_panic, served_only = "panic", served["value"].strip(), True, True
            continue
        if panic and (not seen_panic or served_only):
            panic_kind = panic.groupdict().get("kind") or "panic"
            panic_value, seen_panic, served_only = panic["value"].strip(), True, False
            continue
        if _GOROUTINE.match(line.strip()):
            frames = []
            goroutines.append(frames)
            pending = None
            continue
        if frames is None:
            continue
        file_match = _FILE.match(line)
        if file_match and pending is not None:
            symbol, created = pending
            frame, before = _frame(symbol, created, file_match["file"], int(file_match["line"]))
            if before != frame:
                renamed.append(_renamed(len(goroutines) - 1, len(frames), frame, before))
            frames.append(frame)
            pending = None
            continue
        function = _FUNCTION.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if function:
            pending = (function["symbol"], bool(function["created"]))
    if not goroutines or not any(goroutines):
        # a race report prints no goroutine header (`go_race`): read only when no panic's goroutine is
        # there, so a text releases before read as a panic is read so still
        return go_race.parse(lines, _race_frame) if go_race.is_race_report(lines) else None
    # a dump that printed no panic (a stack taken by `debug.Stack`, a `SIGQUIT` dump) is typed as before
    typed = panic_type(panic_kind, panic_value) if seen_panic else panic_kind
    raised = ParsedException(typed, panic_value, tuple(goroutines[0]), "raised")
    exceptions = [raised, *(ParsedException("goroutine", "", tuple(g), "context") for g in goroutines[1:])]
    notes = (RECORDED,) if not seen_panic and _recorded_by_the_sdk(goroutines[0]) else ()
    return ParsedTrace("go", tuple(exceptions), notes=(*notes, *renamed))


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): each frame
    that lost its call's argument (`RENAMED`) named with it, as they named it, and a panic typed `panic`
    whatever its value (`go_panics.type_before`). No panic is typed so now (`go_panics`), so the hashes of
    that reading find only the signatures those releases made: on a database that has one, every kind of
    panic of its site keeps going to it; on a fresh one, kinds are apart."""
    named = named_before(trace, RENAMED)
    before = trace if named is None else named
    raised, *others = before.exceptions
    typed = type_before(raised.type)
    if typed != raised.type:
        before = replace(before, exceptions=(replace(raised, type=typed), *others))
    return None if before is trace else before


def _race_frame(symbol: str, filename: str, lineno: int) -> Frame:
    """A race report's frame, read as a panic's (`go_race` prints no arguments: there are none to drop)."""
    return _frame(symbol, False, filename, lineno)[0]


def _recorded_by_the_sdk(frames: list[Frame]) -> bool:
    """Whether the OpenTelemetry SDK took the stack in `RecordError` (module docstring): its frame is among
    the first, and no frame panicked."""
    recorded = any(
        frame.module == _OTEL_SDK_TRACE and (frame.function or "").endswith(").RecordError")
        for frame in frames[:6]
    )
    panicked = any(frame.module in (None, "runtime") and frame.function in _PANICKING for frame in frames)
    return recorded and not panicked


def split_symbol(symbol: str) -> tuple[str, str]:
    """`github.com/acme/shop/cart.(*Cart).Add` -> (`github.com/acme/shop/cart`, `(*Cart).Add`)."""
    slash = symbol.rfind("/")
    dot = symbol.find(".", slash + 1)
    if dot < 0:
        return "", symbol
    return symbol[:dot], symbol[dot + 1 :]


def _frame(symbol: str, created: bool, filename: str, lineno: int) -> tuple[Frame, Frame]:
    """The frame, and the frame releases before read (with an argument other than an address in its
    function's name: `_ARGUMENT`)."""
    package, function = split_symbol(_ARGUMENT.sub("", symbol))
    frame = Frame(
        function=_named(function, created), module=package or None, filename=filename, lineno=lineno
    )
    package, function = split_symbol(_ADDRESS_ARGUMENT.sub("", symbol))
    return frame, replace(frame, function=_named(function, created), module=package or None)


def _renamed(exception: int, at: int, frame: Frame, before: Frame) -> str:
    """The note (`RENAMED`) of a frame read otherwise before, with the module then when it differs (a symbol
    with no package, whose argument's `.` was read as its package's end)."""
    if before.module == frame.module:
        return renamed_note(RENAMED, exception, at, before.function)
    return renamed_note(RENAMED, exception, at, before.function, before.module)


def _named(function: str, created: bool) -> str:
    # Closures are numbered by the compiler (`func1`, `func2.3`); keep the name, drop the count.
    function = re.sub(r"\.func\d+(?:\.\d+)*", ".func", function)
    function = re.sub(r"\.gowrap\d+", ".gowrap", function)
    return ("created by " if created else "") + function
