"""The methods of a Java file and their line spans, to name the function a changed line belongs to.

A small reader, not a parser: comments and string or character literals are blanked (lines kept), then a
method or constructor is a name, a balanced parameter list, an optional `throws` clause and a `{`, not
after `new` (an anonymous class) and not a keyword (`if (...) {`); its body ends at the matching brace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEYWORDS = frozenset(
    [
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "synchronized",
        "return",
        "new",
        "else",
        "try",
        "do",
        "throw",
        "case",
        "assert",
        "super",
        "this",
    ]
)
_DECLARATION = re.compile(
    r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*\(((?:[^()]|\([^()]*\))*)\)\s*(?:throws\s+[\w$.,\s<>]+?)?\s*\{"
)
_BLANKS = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL)


@dataclass(frozen=True)
class Method:
    name: str
    start_line: int
    end_line: int


def blank(text: str) -> str:
    """Comments and literals replaced by spaces, newlines kept, so offsets and lines still match."""
    return _BLANKS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def methods(text: str) -> list[Method]:
    code = blank(text)
    found = []
    for match in _DECLARATION.finditer(code):
        name = match.group(1)
        if name in _KEYWORDS or code[: match.start()].rstrip().endswith("new"):
            continue
        open_brace = match.end() - 1
        close = _matching_brace(code, open_brace)
        if close is None:
            continue
        found.append(Method(name, _line(code, match.start()), _line(code, close)))
    return found


def enclosing(found: list[Method], line: int) -> Method | None:
    """The innermost method whose span holds `line`."""
    holding = [m for m in found if m.start_line <= line <= m.end_line]
    return min(holding, key=lambda m: m.end_line - m.start_line) if holding else None


def _matching_brace(code: str, open_brace: int) -> int | None:
    depth = 0
    for index in range(open_brace, len(code)):
        char = code[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
