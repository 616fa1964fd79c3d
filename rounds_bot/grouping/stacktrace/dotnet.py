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
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

_FRAME = re.compile(
    r"^\s*at (?P<symbol>[^\s(]{1,1024}(?:\[[^\]]{0,256}\])?)\((?P<args>[^()]{0,1024})\)"
    r"(?: in (?P<file>.{1,2048}?):line (?P<line>\d{1,9}))?(?: \+ 0x[0-9a-f]{1,8})?$"
)
_INNER_END = "--- End of inner exception stack trace ---"
_ASYNC_BOUNDARY = re.compile(
    r"^\s*--- End of stack trace from previous location(?: where exception was thrown)? ---$"
)
_HEADER = re.compile(r"^(?P<type>[A-Za-z_][\w.`+]{0,255})(?::\s?(?P<value>.*))?$")
_STATE_MACHINE = re.compile(r"^(?P<owner>.*)\.<(?P<method>[^>]{1,256})>d__\d+\.MoveNext$")
_LAMBDA = re.compile(r"<(?P<method>[^>]{0,256})>b__\d+(?:_\d+)?")
_DISPLAY_CLASS = re.compile(r"<>c__DisplayClass\d+_\d+|<>c")
_GENERIC_ARITY = re.compile(r"`\d+")
#: what the runtime prints before the exception a process dies of: .NET Core 3.0 and later's, then
#: .NET Framework's and the earlier .NET Core releases'
_UNHANDLED_PREFIXES = ("Unhandled exception. ", "Unhandled Exception: ")
#: the note of a trace whose outermost exception was read after that prefix (see the module docstring)
UNHANDLED = "the outermost exception follows the runtime's unhandled-exception prefix"
#: the type releases before read when the prefix hid the only exception
_TYPE_READ_BEFORE = "System.Exception"


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
            segments[-1].append(_frame(frame_match))
            continue
        if not any(segments):
            parts = stripped.split("--->")
            if not headers and not prefixed and stripped.startswith(_UNHANDLED_PREFIXES):
                after = _after_unhandled_prefix(parts[0])
                if after is not None:
                    parts[0], prefixed = after, True
            for part in parts:
                header = _HEADER.match(part.strip())
                if header:
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
    if not prefixed:
        return ParsedTrace("dotnet", tuple(exceptions))
    return _read_after_prefix(tuple(exceptions))


def _after_unhandled_prefix(part: str) -> str | None:
    """A header's text after the runtime's unhandled-exception prefix, which it starts with, when what
    follows reads as an exception's header; None otherwise (the text is then read as before)."""
    for prefix in _UNHANDLED_PREFIXES:
        if part.startswith(prefix):
            after = part[len(prefix) :]
            return after if _HEADER.match(after.strip()) else None
    return None


def _read_after_prefix(exceptions: tuple[ParsedException, ...]) -> ParsedTrace:
    """The trace of exceptions read after the prefix (`UNHANDLED`); when releases before read no frame in
    it, its event went to its message's template then (`NEWLY_READ`), and the signature found that way
    keeps receiving it."""
    trace = ParsedTrace("dotnet", exceptions, notes=(UNHANDLED,))
    before = as_read_before(trace)
    if before is not None and before.frame_count == 0:
        return ParsedTrace("dotnet", exceptions, notes=(UNHANDLED, NEWLY_READ))
    return trace


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read a trace whose outermost exception follows the unhandled-exception prefix
    (`UNHANDLED`), or None for any other trace: without that exception, the next one raised, and when
    there is none, `System.Exception` with its frames (they read no header, and no value)."""
    if UNHANDLED not in trace.notes:
        return None
    outermost, *inner = trace.exceptions
    if not inner:
        return ParsedTrace("dotnet", (ParsedException(_TYPE_READ_BEFORE, "", outermost.frames),))
    first, *rest = inner
    return ParsedTrace("dotnet", (ParsedException(first.type, first.value, first.frames), *rest))


def _frame(match: re.Match[str]) -> Frame:
    module, function = split_symbol(match["symbol"])
    return Frame(
        function=function,
        module=module or None,
        filename=match["file"],
        lineno=int(match["line"]) if match["line"] else None,
    )


def split_symbol(symbol: str) -> tuple[str, str]:
    """`Shop.Orders.OrderService.<TotalAsync>d__4.MoveNext` -> (`Shop.Orders.OrderService`, `TotalAsync`)."""
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
