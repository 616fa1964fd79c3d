"""Top-level fenced code blocks as CommonMark 0.31 reads them (§4.5 "Fenced code blocks"): where one opens,
where it closes, and which lines are its code.

A fence is read wherever it is indented at most three spaces, in a list item too (where it is taken for a
block at the top level), but not after a block quote's `>`: the same rule `commands.grammar` follows when it
skips code, so a line this module calls code is one rounds never reads a command from, so long as it comes
before anything the parser takes out before it reads fences (HTML comments and code elements:
`render.hidden`, which `markdown.neutralise` checks).
"""

from __future__ import annotations

import re

#: an opening fence: up to three spaces, then three or more backticks or tildes, then an info string; a
#: backtick fence's info string holds no backtick (else the line is a paragraph's text)
OPENER = re.compile(r"(?P<indent> {0,3})(?P<fence>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)")
#: line breaks other than `\n` that Python's `str.splitlines` (which `commands.grammar` reads lines with)
#: also splits on: a text holding one is not read for fences at all, so both always see the same lines
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def closing(lines: list[str], start: int, fence: str) -> int:
    """The index of the line closing `fence` (the same character, at least as many, up to three spaces
    before and only spaces or tabs after), or the end of the text when none does."""
    closer = re.compile(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
    return next((at for at in range(start, len(lines)) if closer.fullmatch(lines[at])), len(lines))


def code_lines(text: str) -> set[int]:
    """The indexes of the lines of `text` (split at `\\n`) that are the content of a top-level fenced code
    block: not its opening or closing fence. None when `text` holds another line break."""
    if _OTHER_BREAKS.search(text):
        return set()
    lines = text.split("\n")
    inside: set[int] = set()
    at = 0
    while at < len(lines):
        opening = OPENER.fullmatch(lines[at])
        if opening is None:
            at += 1
            continue
        end = closing(lines, at + 1, opening["fence"])
        inside.update(range(at + 1, end))
        at = end + 1
    return inside


def open_fence(text: str) -> str | None:
    """The fence of the top-level block `text` (split at `\\n`) leaves open at its end, or None."""
    lines = text.split("\n")
    at = 0
    while at < len(lines):
        opening = OPENER.fullmatch(lines[at])
        if opening is None:
            at += 1
            continue
        at = closing(lines, at + 1, opening["fence"]) + 1
        if at > len(lines):
            return opening["fence"]
    return None


def fence_for(content: str) -> str:
    """A backtick fence no line of `content` can close: one backtick longer than its longest run of backticks
    (a closing fence is at least as long as the opening one, CommonMark §4.5), and at least three."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    return "`" * max(3, longest + 1)


__all__ = ["OPENER", "closing", "code_lines", "fence_for", "open_fence"]
