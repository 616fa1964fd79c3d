"""HTML comments in a comment's Markdown, where GitHub reads them (CommonMark 0.31): they hide commands.

A command hidden in `<!-- ... -->` is not shown on GitHub and is not obeyed. But `<!--` starts a comment
only where it is markup: not inside a fenced code block (§4.5: its content is literal), not inside a code
span (§6.1: `` `<!--` `` shows the characters), and not after a backslash (§2.4: `\\<` is a literal `<`).
Read everywhere, a `<!--` written as an example hid every line after it up to a `-->`, commands a person
could see. A comment once opened runs to its `-->` (or the end), across any line, as GitHub renders it.
"""

from __future__ import annotations

import re

_OPEN, _CLOSE = "<!--", "-->"
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
_BACKTICKS = re.compile(r"`+")


def without_html_comments(text: str) -> str:
    """`text` with every HTML comment GitHub reads in it left out (the text around it is kept, joined)."""
    kept: list[str] = []
    fence: str | None = None
    lines = text.splitlines(keepends=True)
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if fence is not None:
            if re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*\r?\n?", line):
                fence = None
            kept.append(line)
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening["fence"]
            kept.append(line)
            continue
        start = _comment_start(line)
        if start is None:
            kept.append(line)
            continue
        # the comment runs to its `-->`, on this line or a later one; what follows it is read again
        rest = line[start + len(_OPEN) :]
        kept.append(line[:start])
        while _CLOSE not in rest and number < len(lines):
            rest += lines[number]
            number += 1
        if _CLOSE in rest:
            lines.insert(number, rest[rest.index(_CLOSE) + len(_CLOSE) :])
    return "".join(kept)


def _comment_start(line: str) -> int | None:
    """Where the first `<!--` that is markup starts in a line (None when none is): not escaped, not in a
    code span of the line."""
    spans = _code_spans(line)
    at = line.find(_OPEN)
    while at >= 0:
        escaped = _backslashes_before(line, at) % 2 == 1
        if not escaped and not any(start <= at < end for start, end in spans):
            return at
        at = line.find(_OPEN, at + 1)
    return None


def _code_spans(line: str) -> list[tuple[int, int]]:
    """The code spans of one line: a run of backticks to the next run of the same length (§6.1)."""
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(line)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        if _backslashes_before(line, start) % 2 == 1:  # an escaped backtick opens nothing (§2.4)
            start += 1
            if start == end:
                index += 1
                continue
        closing = next(
            (
                other
                for other in range(index + 1, len(runs))
                if runs[other][1] - runs[other][0] == end - start
            ),
            None,
        )
        if closing is None:
            index += 1
            continue
        spans.append((start, runs[closing][1]))
        index = closing + 1
    return spans


def _backslashes_before(line: str, at: int) -> int:
    count = 0
    while at - count - 1 >= 0 and line[at - count - 1] == "\\":
        count += 1
    return count
