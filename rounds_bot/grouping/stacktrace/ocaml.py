"""OCaml backtraces (`Printexc.print_backtrace`, `OCAMLRUNPARAM=b`).

    Fatal error: exception Not_found
    Raised at Stdlib__Map.Make.find in file "map.ml", line 137, characters 10-25
    Called from Dune__exe__Shop.lookup in file "bin/shop.ml", line 12, characters 2-30
    Re-raised at Dune__exe__Shop.main in file "bin/shop.ml", line 20, characters 4-9
    Raised by primitive operation at Stdlib.input_line in file "stdlib.ml", line 451, characters 25-50
    Called from file "bin/main.ml", line 5, characters 0-10

Dune's name mangling (`Dune__exe__Shop`, `Stdlib__Map`) is undone: `Shop`, `Stdlib.Map`.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace

_FRAME = re.compile(
    r"^\s*(?:Raised at|Re-raised at|Called from|Raised by primitive operation at)"
    r"(?: (?P<symbol>[A-Za-z_][\w.']{0,512}(?:\.\([^)]{0,64}\))?))?"
    r"(?: in)? file \"(?P<file>[^\"]{1,1024})\"(?: \(inlined\))?, line (?P<line>\d{1,9})"
    r"(?:, characters \d{1,9}-\d{1,9})?$"
)
_UNKNOWN_LOCATION = re.compile(r"^\s*(?:Called from|Raised at) unknown location$")
_HEADER = re.compile(
    r"^(?:Fatal error: exception |Exception: |Uncaught exception: |Error: exception )"
    r"(?P<type>[A-Z][\w.']{0,255})(?P<value>.*?)\.?$"
)


def is_frame_line(line: str) -> bool:
    return _FRAME.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    type_, value = "Exception", ""
    frames: list[Frame] = []
    for line in lines:
        header = _HEADER.match(line.strip())
        if header and not frames:
            type_, value = header["type"], header["value"].strip().strip("()").strip()
            continue
        match = _FRAME.match(line)
        if match:
            frames.append(_frame(match))
        elif _UNKNOWN_LOCATION.match(line):
            continue
    if not frames:
        return None
    return ParsedTrace("ocaml", (ParsedException(type_, value, tuple(frames), "raised"),))


def demangle(path: str) -> str:
    """`Dune__exe__Shop.Cart` -> `Shop.Cart`; `Stdlib__Map.Make` -> `Stdlib.Map.Make`."""
    path = re.sub(r"^Dune__exe__", "", path)
    return path.replace("__", ".")


def _frame(match: re.Match[str]) -> Frame:
    symbol = match["symbol"]
    module, function = None, None
    if symbol:
        demangled = demangle(symbol)
        head, _, tail = demangled.rpartition(".")
        # `Shop.lookup` is a function in module Shop; `Shop` alone is the module's top level.
        if (head and tail[:1].islower()) or tail.startswith("("):
            module, function = head, tail
        else:
            module, function = demangled, "<toplevel>"
    return Frame(function=function, module=module, filename=match["file"], lineno=int(match["line"]))
