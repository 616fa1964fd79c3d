"""A rule searched only near the ends the scan reported for it, not over the whole text.

    near_ends(how) -> bool                      whether a rule is searched so (and scanned for every end)
    windows(rule, how, text, ends) -> matches   the rule's matches, exactly as `finditer` gives them

A rule whose matches are bounded (its translation's `widest`) starts every match within that many characters
of an end the scan reported, so its regex need read only those windows of a long text (`scan.py` scans for
every end of such a rule, and the first only of any other).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rounds_bot.redact.rule import Rule
from rounds_bot.redact.translate import Translated

#: a rule whose translation reports more ends than this in a text runs over the whole text instead
_MANY_WINDOWS = 64


def near_ends(how: Translated) -> bool:
    """Whether the rule translated as `how` is searched near its ends (`windows`): its matches are bounded
    (`how.widest`), so the scan reports every end of it (`scan._patterns`), not only its first."""
    return how.widest is not None


def windows(one: Rule, how: Translated, text: str, ends: list[int]) -> Iterator[re.Match[str]] | None:
    """The rule's matches in `text`, exactly as `one.pattern.finditer(text)` gives them, found by searching
    only near the ends the scan reported; None when searching the whole text is the better way.

    Every match starts within `widest` characters before an end, so positions outside those windows start
    none, and a search from the first position of a window finds what `finditer` finds there. The search
    stops `reach` characters past the window, beyond anything the regex engine could read for a match that
    starts in it, so the truncation changes nothing. For a narrowed rule, the matches skipped between windows
    are ones its `accept` refuses; each search then starts where no match can straddle (after a character
    no match contains, a line's start when no match holds a newline), so it finds the matches `finditer`
    finds from there."""
    widest = how.widest
    if widest is None or len(ends) > _MANY_WINDOWS or (how.literal_start and not how.narrowed):
        return None
    return _in_windows(one.pattern, how, text, ends, widest)


def _in_windows(
    pattern: re.Pattern[str], how: Translated, text: str, ends: list[int], widest: int
) -> Iterator[re.Match[str]]:
    length = len(text)
    spans: list[list[int]] = []
    for end in sorted(ends):
        first, last = max(end - widest, 0), end - how.narrowest
        if spans and first <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], last)
        else:
            spans.append([first, last])
    cursor = 0
    for first, last in spans:
        if last < cursor:
            continue
        start = first
        if how.narrowed:  # from where no match can straddle: after a character none holds
            start = max(0 if how.newline else text.rfind("\n", 0, first) + 1, cursor)
            outside = how.last_outside.match(text, start, first) if how.last_outside else None
            start = outside.end() if outside else start
        start = max(start, cursor)
        for match in pattern.finditer(text, start, min(length, last + how.reach)):
            if match.start() > last:
                break
            cursor = match.end()
            yield match
