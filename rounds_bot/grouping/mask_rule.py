"""What a masking rule of message normalisation is (`mask_rules` lists them, `normalize` applies them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MaskRule:
    name: str
    #: the kinds of character a match can begin with (see CHARACTER_KINDS)
    starts: str
    placeholder: str | None  # None: keep the match as it is
    pattern: str
    why: str
    #: a pattern for the start of a match that stays as it is, the rest masked: a Ruby object's class
    #: (`#<User `) names what the statement printed, what follows is its value
    kept: str | None = None
    #: a pattern for the one part of a match that is masked (its first match inside it), the rest kept as it
    #: is: the address before the port a connection error names, the schema before a table's name
    masked: str | None = None


# Kinds of first character. Each rule declares which kinds its matches can begin with, so at a
# given position only the rules that can start there are tried, in their list order.
CHARACTER_KINDS = {
    "D": "0-9",
    "H": "a-fA-F",
    "L": "g-zG-Z",
    "U": "_",
    "P": ".",
    "S": "/",
    "T": "~",
    "M": "\\-",
    "A": "+",
    "C": ":",
    "Q": "\"'",
    "B": "{\\[",
    "R": "(",
    "N": "#",
    "G": "`",
}
