"""The scan's alphabet: a text as the bytes Hyperscan reads (one byte a character: ASCII as itself, every
other character as 0xFF), and what a single-character element of a regex (a literal, a class, `.`) can match
in it. The translation (`translate.py`) writes each such element as one of these byte classes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

#: the byte every non-ASCII character is scanned as
OTHER = 0xFF
_NON_ASCII = re.compile("[^\x00-\x7f]")
_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


class Untranslatable(Exception):
    """A construct the translation does not know: the rule then runs wherever its keywords occur."""


def scan_bytes(text: str) -> bytes:
    """`text` as one byte a character: ASCII as itself, any other character as 0xFF."""
    if text.isascii():
        return text.encode("ascii")
    return _NON_ASCII.sub("\xff", text).encode("latin-1")


@dataclass(frozen=True)
class Chars:
    """The bytes a single-character element can match: ASCII members and whether any other character."""

    ascii: frozenset[int]
    other: bool

    def source(self, ascii_only: bool = False) -> str:
        """The class as Hyperscan reads it; `ascii_only`: for a scan of ASCII text alone, without 0xFF
        (which keeps a caseless word a literal to Hyperscan)."""
        return _class_source(self, ascii_only)

    def __or__(self, other: Chars) -> Chars:
        return Chars(self.ascii | other.ascii, self.other or other.other)


@cache
def _class_source(chars: Chars, ascii_only: bool) -> str:
    """`Chars.source`, written once per class: the translation asks for the same few classes (a letter in
    either case, digits, word characters) thousands of times when a process builds its first scan."""
    other = chars.other and not (ascii_only and chars.ascii)
    members = sorted(chars.ascii | ({OTHER} if other else set()))
    if not members:
        raise Untranslatable("a class that matches nothing")
    runs: list[list[int]] = []  # consecutive bytes as a range: a class of most of ASCII stays short
    for byte in members:
        if runs and byte == runs[-1][1] + 1:
            runs[-1][1] = byte
        else:
            runs.append([byte, byte])
    return "[" + "".join(_byte_range(first, last) for first, last in runs) + "]"


def _byte_range(first: int, last: int) -> str:
    if first == last:
        return _byte(first)
    return f"{_byte(first)}{'' if last == first + 1 else '-'}{_byte(last)}"


def _byte(code: int) -> str:
    """One byte in a class: a letter or a digit as itself (the patterns stay under Hyperscan's length
    limit), anything else escaped."""
    return chr(code) if chr(code).isascii() and chr(code).isalnum() else f"\\x{code:02x}"


@cache
def _class_members(source: str, ignorecase: bool) -> frozenset[int]:
    compiled = re.compile(source, re.IGNORECASE if ignorecase else 0)
    return frozenset(code for code in range(128) if compiled.fullmatch(chr(code)))


def _char(source: str) -> str:
    return f"\\U{source:08x}" if isinstance(source, int) else source


def chars_of(op: str, value: Any, ignorecase: bool, dotall: bool) -> Chars:
    """What one single-character element (a literal, a class, `.`) can match, as bytes of the scan."""
    if op == "ANY":
        everything = frozenset(range(128))
        return Chars(everything if dotall else everything - {ord("\n")}, True)
    if op == "LITERAL":
        members = _class_members(f"[{_char(value)}]", ignorecase)
        letter = value < 128 and chr(value).isalpha()
        return Chars(members, value >= 128 or (ignorecase and letter))
    if op == "NOT_LITERAL":
        return Chars(_class_members(f"[^{_char(value)}]", ignorecase), True)
    parts: list[str] = []
    other = ignorecase
    for item, argument in value:
        name = str(item)
        if name == "NEGATE":
            parts.insert(0, "^")
            other = True
        elif name == "LITERAL":
            parts.append(_char(argument))
            other = other or argument >= 128
        elif name == "RANGE":
            parts.append(f"{_char(argument[0])}-{_char(argument[1])}")
            other = other or argument[1] >= 128
        elif name == "CATEGORY" and str(argument) in _CATEGORIES:
            parts.append(_CATEGORIES[str(argument)])
            other = True
        else:
            raise Untranslatable(name)
    return Chars(_class_members("[" + "".join(parts) + "]", ignorecase), other)
