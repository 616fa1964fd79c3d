"""Words that look like a command but are not written in ASCII: `/roundſ pause`, `/rоunds` with a Cyrillic о.

A command is obeyed only when written in plain ASCII (`grammar`). A word that is not, but reads as a command
to a person, is refused with a reply that says why, rather than silently ignored: whoever typed it (a
keyboard layout, a pasted line) learns what to fix, and nothing a look-alike says is ever carried out.

Whether a word reads as another is decided as Unicode Technical Standard #39 ("Unicode Security
Mechanisms") decides confusability, with compatibility forms folded first: the word in NFKC (the long s
`ſ` becomes `s`, fullwidth and mathematical letters become ASCII), case-folded, decomposed with its
combining marks dropped (`ŕ` reads `r`), invisible format characters dropped, and each remaining
character replaced by its ASCII prototype in the Unicode confusables data (`confusable-homoglyphs` ships
it: Cyrillic `о` reads `o`, Armenian `ո` reads `n`, `∕` reads `/`).
"""

from __future__ import annotations

import unicodedata
from functools import cache

from confusable_homoglyphs import confusables


def skeleton(word: str) -> str:
    """`word` as it reads: NFKC, case-folded, without combining marks or invisible characters, each
    character replaced by the ASCII character it is confusable with (if any)."""
    folded = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", word).casefold())
    kept = (char for char in folded if not unicodedata.combining(char) and unicodedata.category(char) != "Cf")
    return "".join(_prototype(char) for char in kept)


def looks_like(word: str, target: str) -> bool:
    """True when `word` is not `target` in ASCII (any case) but reads as it."""
    if word.isascii() and word.lower() == target:
        return False
    return skeleton(word) == target


def unusual_characters(word: str) -> str:
    """The characters of `word` that are not ASCII, named: `U+017F LATIN SMALL LETTER LONG S`."""
    named = dict.fromkeys(
        f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')}"
        for char in word
        if not char.isascii()
    )
    return ", ".join(list(named)[:3]) or "no unusual character"


@cache
def _prototype(char: str) -> str:
    if char.isascii():
        return char
    for entry in confusables.is_confusable(char, greedy=True) or []:
        for glyph in entry["homoglyphs"]:
            candidate = str(glyph["c"])
            if len(candidate) == 1 and candidate.isascii() and candidate.isprintable():
                return candidate.lower()
    return char
