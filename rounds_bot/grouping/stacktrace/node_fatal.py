"""Node.js's fatal errors: V8 or Node aborting the process (the heap out of memory, a failed API check), as
printed to stderr.

    <--- Last few GCs --->
    [7:0x5e1f0a0]    90312 ms: Mark-Compact 2046.9 (2083.5) -> 2045.8 (2083.7) MB, ...
    <--- JS stacktrace --->
    FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
    ----- Native stack trace -----                                                      (Node 20 and later)

     1: 0xb8d11b node::OOMErrorHandler(char const*, v8::OOMDetails const&) [node]
     2: 0xf01b70 v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, ...) [node]
     3: 0xf01e57 v8::internal::V8::FatalProcessOutOfMemory(v8::internal::Isolate*, char const*, ...) [node]
     4: 0x1113aa5  [node]
     5: 0x112b928 v8::internal::Heap::CollectGarbage(...) [node]
     ...
    10: 0x1976ef6  [node]

Windows prints `1: 00007FF7A2C6052F node::OnFatalError+294` (no `0x`, an offset after the symbol). A failed
V8 check says what failed under its own header instead, and a failed assertion of Node's on the line before
the frames (`node[7]: ../src/node_file.cc:12:void node::fs::Open(...): Assertion `(argc) >= (3)' failed.`):

    #
    # Fatal error in , line 0
    # Check failed: result.second.
    #
    ----- Native stack trace -----

Every frame is the runtime's: none is the app's (`Frame.in_app`). What failed is said by the error's kind, the
text after `FATAL ERROR:` (or the check that failed), which is the exception's type, numbers masked: the value
is never hashed, the type is. Only the frames of the runtime's fatal-error handling (`node::Abort`,
`node::OnFatalError`, `v8::internal::V8::FatalProcessOutOfMemory` ...) and the one frame that called into it
are read: the frames below say which allocation or API call happened to fail, which varies from one crash of
the same kind to the next, so every heap-out-of-memory crash of a service is one problem, and another kind of
fatal error another. A trace with none of those functions (a build whose symbols are another's, as Windows'
often are) is read whole. A frame is named by its function without arguments or offset; never by its address
or by the image (the binary, named by wherever it was installed). The JavaScript stack Node 12 and earlier
print above (`0: ExitFrame [pc: 0x...]`, `1: main [0x...] [/app/x.js:~3]`) is not read: it says where the
heap happened to fill up.

The layouts are those Node's releases print, as reports of them on its issue tracker (nodejs/node) show.
No release before this one read these texts (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace
from rounds_bot.grouping.stacktrace.native import bare_function

#: ` 1: 0xb090e0 node::Abort() [node]`, ` 1: 00007FF7A2C6052F node::OnFatalError+294`: a number, an address
#: (Windows': sixteen digits, no `0x`), then the function (none for code without a symbol) and the image
_FRAME = re.compile(
    r"^\s{0,8}(?P<n>\d{1,4}): (?:0x[0-9a-fA-F]{1,16}|[0-9A-F]{16})(?: +(?P<fn>[^\[\s-].{0,2047}?)?)?"
    r"\s*(?:\[(?P<image>[^\]]{1,1024})\])?$"
)
_HEADER = re.compile(r"^FATAL ERROR: ?(?P<kind>.{0,2048})$")
#: Node's failed assertion: `node[7]: ../src/node_file.cc:12:void node::fs::Open(...): Assertion `x' failed.`
_ASSERTION = re.compile(r"^\S{1,256}\[\d{1,10}\]: .{0,2048}?: (?P<kind>Assertion `.{0,2048}' failed)\.?$")
#: V8's check failures: `# Fatal error in ../deps/v8/src/api/api.cc, line 123`, then what failed
_V8_FATAL = re.compile(r"^#\s*Fatal error in .{0,1024}, line \d{1,9}$")
_V8_MESSAGE = re.compile(r"^#\s*(?P<kind>\S.{0,2047})$")
#: a Windows frame's offset after its symbol, a macOS build's cold part of a function
_OFFSET = re.compile(r"\+\d{1,12}$|\s*\(\.cold\.\d{1,4}\)$")
_NUMBER = re.compile(r"\b(?:0x[0-9a-fA-F]+|\d+)\b")
_SEPARATORS = re.compile(r"::|[./\\]")
#: the last name of Node's and V8's functions that report a fatal error and abort
_REPORTING = frozenset(
    (
        "Abort", "FatalError", "OnFatalError", "OOMErrorHandler", "Assert", "ReportOOMFailure",
        "ReportApiFailure", "FatalProcessOutOfMemory", "V8_Fatal", "ToLocalEmpty", "FromJustIsNothing",
        "DumpBacktrace", "PrintCaughtException",
    )
)  # fmt: skip
#: the type of a fatal error that names no kind
FATAL = "FATAL ERROR"


def is_fatal_frame(line: str) -> bool:
    """Whether a line prints a frame of a fatal error's native stack (callers test that the line starts with a
    number and holds `: ` first)."""
    return _frame(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    """The fatal error's kind and the frames of its native stack; None when no header says it is one (a line
    numbered `N: ` alone is not enough) or it has no frame."""
    kind: str | None = None
    frames: list[Frame] = []
    v8_fatal = False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if kind is not None:
            frame = _frame(line)
            if frame is not None:
                frames.append(frame)
            elif frames:
                break  # the stack has ended
            continue
        if v8_fatal:
            message = _V8_MESSAGE.match(stripped)
            kind = message["kind"] if message is not None else None
            v8_fatal = message is None and stripped.startswith("#")
            continue
        header = _HEADER.match(stripped) or _ASSERTION.match(stripped)
        if header is not None:
            kind = header["kind"]
        else:
            v8_fatal = _V8_FATAL.match(stripped) is not None
    if not frames or kind is None:
        return None
    value = kind.strip()
    exception = ParsedException(kind_type(value), value, _fatal_path(frames), "raised")
    return ParsedTrace("node", (exception,), notes=(NEWLY_READ,))


def kind_type(kind: str) -> str:
    """The type a fatal error's kind is hashed as: its numbers masked, and the separators of a dotted or C++
    name (`.`, `::`, `/`) written as spaces, so the type is read whole (`exception_chain.short_type` reads a
    dotted name by its last part: `Check failed: result.second` would be `second`)."""
    text = _SEPARATORS.sub(" ", _NUMBER.sub("<num>", kind))
    return " ".join(text.split()) or FATAL


def _frame(line: str) -> Frame | None:
    match = _FRAME.match(line)
    if match is None or match["n"] == "0":
        return None  # (the JavaScript stack Node 12 and earlier print starts at 0, a native stack at 1)
    function = _OFFSET.sub("", (match["fn"] or "").strip())
    return Frame(function=bare_function(function) if function else None, in_app=False)


def _fatal_path(frames: list[Frame]) -> tuple[Frame, ...]:
    """The frames of the runtime's fatal-error handling and the frame that called into it; all the frames when
    no function of that handling is named."""
    last = None
    for index, frame in enumerate(frames):
        if (frame.function or "").rsplit("::", 1)[-1] in _REPORTING:
            last = index
    return tuple(frames if last is None else frames[: last + 2])
