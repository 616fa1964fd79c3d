""".NET exception text (`Exception.ToString()`).

    System.InvalidOperationException: Order 17 has no lines
     ---> System.ArgumentNullException: Value cannot be null. (Parameter 'source')
       at System.Linq.ThrowHelper.ThrowArgumentNullException(ExceptionArgument argument)
       at Shop.Orders.OrderService.<TotalAsync>d__4.MoveNext() in /src/Orders/OrderService.cs:line 57
       --- End of inner exception stack trace ---
       at Shop.Orders.OrderService.TotalAsync(Int32 id) in /src/Orders/OrderService.cs:line 61
    --- End of stack trace from previous location ---
       at Shop.Api.OrdersController.Get(Int32 id) in /src/Api/OrdersController.cs:line 20

Inner exceptions come after ` ---> ` and their frames are printed first, each block closed by
`--- End of inner exception stack trace ---`. Compiler-generated names (async state machines,
lambdas, display classes) are turned back into the method they belong to.

A process that dies of an exception prints it to stderr after the runtime's prefix, which console
crash collectors and log bodies keep:

    Unhandled exception. System.InvalidOperationException: Sequence contains no elements
       at System.Linq.ThrowHelper.ThrowNoElementsException()

`Unhandled exception.` is CoreCLR's resource `IDS_EE_UNHANDLED_EXCEPTION` (dotnet/runtime,
`src/coreclr/dlls/mscorrc/mscorrc.rc`), printed with a space before `Exception.ToString()` since
.NET Core 3.0; .NET Framework and the .NET Core releases before print `Unhandled Exception: ` (the
outputs in Microsoft's documentation samples), on .NET Framework with the inner exception on the
same line (`... occurred. ---> System.InvalidOperationException: boom`). The exception is read after
either prefix (`UNHANDLED`). Releases before read no type there: the prefix hid the outermost
exception, so an inner one was read as the exception raised, or with none `System.Exception`
(`as_read_before`, whose hashes the trace also gives, to find the signatures those releases made).

Some exceptions print a code between their type and message (`ERROR_CODE`): `ExternalException`'s
`ToString()`, which `DbException` inherits (SqlClient's `SqlException (0x80131904): ...`, Npgsql's
`PostgresException (0x80004005): ...`), prints its `HResult`, and `Win32Exception`'s (`SocketException`
derives from it) its native error code (`SocketException (111): Connection refused`, `(00000005,
0xFFFDFFFF)` with an `HResult` of its own: dotnet/runtime, `Win32Exception.ToString`). Such a header is
read where an exception begins, the first one or after ` ---> `. Releases before read none there: the
header was glued onto the value of the exception read before it, and with one header fewer each
exception read took the frames of the next one in (the inner exception's for the outer's, the app's
dropped): `as_read_before` gives that reading, from the codes the trace's notes keep.

A local function's name carries the ordinals Roslyn numbers it by (`<Compute>g__ApplyDiscount|4_0`,
ASP.NET Core's `<InvokeActionMethodAsync>g__Awaited|12_0`: the method's and the function's, dotnet/roslyn,
`GeneratedNames.MakeLocalFunctionName`), which change when a method is added to the class: they are
left out, as a lambda's are. Releases before kept them (the trace's notes keep the names as printed).
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

_FRAME = re.compile(
    r"^\s*at (?P<symbol>[^\s(]{1,1024}(?:\[[^\]]{0,256}\])?)\((?P<args>[^()]{0,1024})\)"
    r"(?: in (?P<file>.{1,2048}?):line (?P<line>\d{1,9}))?(?: \+ 0x[0-9a-f]{1,8})?$"
)
_INNER_END = "--- End of inner exception stack trace ---"
_ASYNC_BOUNDARY = re.compile(
    r"^\s*--- End of stack trace from previous location(?: where exception was thrown)? ---$"
)
#: the code some exceptions print after their type (see the module docstring): `ExternalException`'s
#: `HResult`, `Win32Exception`'s native error code, or both. (Also read, the same, by `round.propagated` and
#: in SigNoz's SQL: RE2 reads it as `re` does.)
ERROR_CODE = r" \((?:0x[0-9A-Fa-f]{8}|[0-9A-Fa-f]{8}, (?:0x[0-9A-Fa-f]{8}|[0-9]{1,10})|[0-9]{1,10})\)"
_HEADER = re.compile(
    r"^(?P<type>[A-Za-z_][\w.`+]{0,255})(?P<code>" + ERROR_CODE + r")?(?::\s?(?P<value>.*))?$"
)
_STATE_MACHINE = re.compile(r"^(?P<owner>.*)\.<(?P<method>[^>]{1,256})>d__\d+\.MoveNext$")
_LAMBDA = re.compile(r"<(?P<method>[^>]{0,256})>b__\d+(?:_\d+)?")
#: a local function's ordinals: the method's and the function's, or the function's alone in a closure class
_LOCAL_FUNCTION = re.compile(r"(?P<name>g__[^|<>.\s]{1,256})\|\d{1,9}(?:_\d{1,9})?")
_DISPLAY_CLASS = re.compile(r"<>c__DisplayClass\d+_\d+|<>c")
_GENERIC_ARITY = re.compile(r"`\d+")
#: what the runtime prints before the exception a process dies of: .NET Core 3.0 and later's, then
#: .NET Framework's and the earlier .NET Core releases'
_UNHANDLED_PREFIXES = ("Unhandled exception. ", "Unhandled Exception: ")
#: the note of a trace whose outermost exception was read after that prefix (see the module docstring)
UNHANDLED = "the outermost exception follows the runtime's unhandled-exception prefix"
#: the type releases before read when the prefix hid the only exception
_TYPE_READ_BEFORE = "System.Exception"
#: the note of an exception whose header prints an error code, `CODED + "<index> <code>"` (the exception's
#: index in the trace, the code as printed): releases before read no header there
CODED = "an exception's header prints an error code: "
#: the note of a frame whose name lost a local function's ordinals, `RENAMED + "<exception> <frame> <symbol>"`
#: (their indexes in the trace, the symbol as printed): releases before kept them
RENAMED = "a frame's name printed a local function's ordinals: "


def looks_like_dotnet_frame(line: str) -> bool:
    match = _FRAME.match(line)
    if not match:
        return False
    return bool(match["file"]) or line.startswith("   at ") or " " in match["args"] or not match["args"]


def is_frame_line(line: str) -> bool:
    return _FRAME.match(line) is not None or line.strip() == _INNER_END or bool(_ASYNC_BOUNDARY.match(line))


def parse(lines: list[str]) -> ParsedTrace | None:
    headers: list[tuple[str, str]] = []
    segments: list[list[Frame]] = [[]]
    #: the error code each header that prints one printed (`ERROR_CODE`), by the header's index
    codes: dict[int, str] = {}
    #: each frame whose name lost a local function's ordinals, by its segment and place: the symbol as printed
    printed: dict[tuple[int, int], str] = {}
    prefixed = False
    for line in lines:
        stripped = line.strip()
        if not stripped or _ASYNC_BOUNDARY.match(line):
            continue
        if stripped == _INNER_END:
            segments.append([])
            continue
        frame_match = _FRAME.match(line)
        if frame_match:
            if "|" in frame_match["symbol"] and _LOCAL_FUNCTION.search(frame_match["symbol"]):
                printed[len(segments) - 1, len(segments[-1])] = frame_match["symbol"]
            segments[-1].append(_frame(frame_match))
            continue
        if not any(segments):
            parts = stripped.split("--->")
            if not headers and not prefixed and stripped.startswith(_UNHANDLED_PREFIXES):
                after = _after_unhandled_prefix(parts[0])
                if after is not None:
                    parts[0], prefixed = after, True
            for position, part in enumerate(parts):
                header = _header(part.strip(), begins=position > 0 or not headers)
                if header:
                    if header["code"]:
                        codes[len(headers)] = header["code"].strip()
                    headers.append((header["type"], (header["value"] or "").strip()))
                elif headers and part.strip():
                    type_, value = headers[-1]
                    headers[-1] = (type_, (value + " " + part.strip()).strip())
    if not any(segments):
        return None
    if not headers:
        headers = [(_TYPE_READ_BEFORE, "")]
    # Segment i holds the frames of the i-th exception counted from the innermost one.
    exceptions: list[ParsedException] = []
    for index, (type_, value) in enumerate(headers):
        segment_index = len(headers) - 1 - index
        frames = segments[segment_index] if segment_index < len(segments) else []
        exceptions.append(ParsedException(type_, value, tuple(frames), "raised" if index == 0 else "inner"))
    notes = (
        *((UNHANDLED,) if prefixed else ()),
        *(f"{CODED}{index} {code}" for index, code in codes.items()),
        *_renamed_notes(printed, len(headers)),
    )
    return _with_notes(tuple(exceptions), notes)


def _header(part: str, *, begins: bool) -> re.Match[str] | None:
    """A part of a line read as an exception's header. One that prints an error code is read so only where
    an exception begins (the trace's first header, or after ` ---> `): a line of a message that reads
    `Step (3): ...` stays the message's, as before."""
    header = _HEADER.match(part)
    if header is not None and header["code"] and not begins:
        return None
    return header


def _renamed_notes(printed: dict[tuple[int, int], str], count: int) -> list[str]:
    """The notes (`RENAMED`) of the frames whose names lost a local function's ordinals, in the trace's order:
    segment i holds the frames of the exception `count - 1 - i` (a segment no exception holds is not read)."""
    found = sorted(
        (count - 1 - segment, at, symbol) for (segment, at), symbol in printed.items() if segment < count
    )
    return [f"{RENAMED}{exception} {at} {symbol}" for exception, at, symbol in found]


def _after_unhandled_prefix(part: str) -> str | None:
    """A header's text after the runtime's unhandled-exception prefix, which it starts with, when what
    follows reads as an exception's header; None otherwise (the text is then read as before)."""
    for prefix in _UNHANDLED_PREFIXES:
        if part.startswith(prefix):
            after = part[len(prefix) :]
            return after if _HEADER.match(after.strip()) else None
    return None


def _with_notes(exceptions: tuple[ParsedException, ...], notes: tuple[str, ...]) -> ParsedTrace:
    """The trace of `exceptions` with its notes; when releases before read no frame in its text
    (`as_read_before`), its event went to its message's template then (`NEWLY_READ`), and the signature
    found that way keeps receiving it."""
    trace = ParsedTrace("dotnet", exceptions, notes=notes)
    before = as_read_before(trace)
    if before is not None and (before.frame_count == 0 or NEWLY_READ in before.notes):
        return ParsedTrace("dotnet", exceptions, notes=(*notes, NEWLY_READ))
    return trace


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise; None for any other trace.

    The release before this one read an error code's header (`CODED`) as no header and kept a local
    function's ordinals (`RENAMED`): that reading (`_as_the_release_before_read`), which is itself
    noted `UNHANDLED` when it read the exception after the prefix, so the releases before it are asked
    too. Those read no exception after the prefix (`UNHANDLED`): without that exception, the next one
    raised, and when there is none, `System.Exception` with its frames (they read no header, and no value).
    """
    codes = {int(index): code for index, code in _noted(trace, CODED, 2)}
    renamed = [(int(exception), int(at), symbol) for exception, at, symbol in _noted(trace, RENAMED, 3)]
    if codes or renamed:
        return _as_the_release_before_read(trace, codes, renamed)
    if UNHANDLED not in trace.notes:
        return None
    outermost, *inner = trace.exceptions
    if not inner:
        return ParsedTrace("dotnet", (ParsedException(_TYPE_READ_BEFORE, "", outermost.frames),))
    first, *rest = inner
    return ParsedTrace("dotnet", (ParsedException(first.type, first.value, first.frames), *rest))


def _noted(trace: ParsedTrace, kind: str, parts: int) -> list[list[str]]:
    """The parts of each of the trace's notes of `kind` (`CODED`, `RENAMED`), which its last part may hold
    spaces in (an error code's `(00000005, 0xFFFDFFFF)`)."""
    return [note[len(kind) :].split(" ", parts - 1) for note in trace.notes if note.startswith(kind)]


def _as_the_release_before_read(
    trace: ParsedTrace, codes: dict[int, str], renamed: list[tuple[int, int, str]]
) -> ParsedTrace:
    """The trace as the release before this one read its text: each frame named as printed, ordinals and
    all; no header that prints an error code (`codes`, by exception), its text glued onto the value of the
    header read before it, as .NET prints it (or dropped, before any); and so, with fewer headers, the
    frames of the i-th exception from the innermost read as the i-th header's from the innermost, as
    `parse` reads its segments."""
    exceptions = [list(exception.frames) for exception in trace.exceptions]
    for index, at, symbol in renamed:
        module, function = _split(symbol)
        exceptions[index][at] = replace(exceptions[index][at], module=module or None, function=function)
    read: list[tuple[str, str]] = []
    for index, exception in enumerate(trace.exceptions):
        if index not in codes:
            read.append((exception.type, exception.value))
        elif read:
            text = f"{exception.type} {codes[index]}" + (f": {exception.value}" if exception.value else "")
            type_, value = read[-1]
            read[-1] = (type_, (value + " " + text).strip())
    read = read or [(_TYPE_READ_BEFORE, "")]
    deeper = len(trace.exceptions) - len(read)
    before = tuple(
        ParsedException(type_, value, tuple(exceptions[deeper + index]), "raised" if index == 0 else "inner")
        for index, (type_, value) in enumerate(read)
    )
    # it read the exception after the unhandled-exception prefix unless that printed an error code
    return _with_notes(before, (UNHANDLED,) if UNHANDLED in trace.notes and 0 not in codes else ())


def _frame(match: re.Match[str]) -> Frame:
    module, function = split_symbol(match["symbol"])
    return Frame(
        function=function,
        module=module or None,
        filename=match["file"],
        lineno=int(match["line"]) if match["line"] else None,
    )


def split_symbol(symbol: str) -> tuple[str, str]:
    """`Shop.Orders.OrderService.<TotalAsync>d__4.MoveNext` -> (`Shop.Orders.OrderService`, `TotalAsync`);
    `Shop.PriceCalculator.<Compute>g__ApplyDiscount|4_0` -> (`Shop.PriceCalculator`,
    `<Compute>g__ApplyDiscount`): a local function without its ordinals (see the module docstring)."""
    return _split(_LOCAL_FUNCTION.sub(r"\g<name>", symbol))


def _split(symbol: str) -> tuple[str, str]:
    """`split_symbol` with a local function's ordinals kept, as releases before split a symbol."""
    symbol = _GENERIC_ARITY.sub("", symbol)
    machine = _STATE_MACHINE.match(symbol)
    if machine:
        return machine["owner"], machine["method"]
    symbol = _DISPLAY_CLASS.sub("<>c", symbol)
    symbol = _LAMBDA.sub(lambda m: f"<{m['method']}>b", symbol)
    depth = 0
    for index in range(len(symbol) - 1, -1, -1):
        char = symbol[index]
        if char == ">":
            depth += 1
        elif char == "<":
            depth -= 1
        elif char == "." and depth == 0:
            return symbol[:index], symbol[index + 1 :]
    return "", symbol
