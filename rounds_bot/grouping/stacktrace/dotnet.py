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
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace

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
            for part in stripped.split("--->"):
                header = _HEADER.match(part.strip())
                if header:
                    headers.append((header["type"], (header["value"] or "").strip()))
                elif headers and part.strip():
                    type_, value = headers[-1]
                    headers[-1] = (type_, (value + " " + part.strip()).strip())
    if not any(segments):
        return None
    if not headers:
        headers = [("System.Exception", "")]
    # Segment i holds the frames of the i-th exception counted from the innermost one.
    exceptions: list[ParsedException] = []
    for index, (type_, value) in enumerate(headers):
        segment_index = len(headers) - 1 - index
        frames = segments[segment_index] if segment_index < len(segments) else []
        exceptions.append(ParsedException(type_, value, tuple(frames), "raised" if index == 0 else "inner"))
    return ParsedTrace("dotnet", tuple(exceptions))


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
