"""Words that are values because they vary: per-position variability over a round's log lines.

A log statement prints its parameters in fixed places. Where a service's lines of one length agree
on every word but one, and that one position holds many different words (a job name, a user name,
a boolean), the position is a parameter of the statement, as Drain treats a position whose tokens
vary; the words carry no digit, so the skeleton alone cannot tell (`job cleanup failed:
destination unreachable`, `job reindex-catalog failed: destination unreachable`).

Evidence is taken from the whole batch before any line of it is grouped, so the answer does not
depend on the order the lines arrive in. A position counts as varying only when it holds at least
`MIN_DISTINCT` different words and the words are mostly different (at least one in
`1 / MAX_REPEAT` lines brings a new one), or when its words are boolean literals (`true` and
`false`, `yes` and `no`, `on` and `off`: a flag's value): a handful of states or verbs repeated
over many lines (`VM Started`, `VM Paused`, `VM Stopped`; `GET`, `POST`) are different
statements. A position that holds `MANY_DISTINCT` different words or more is a value however often
each repeats: one statement printing a field of a few dozen values (an order's state, a queue's
name) over thousands of lines is still one statement, and no code writes a dozen statements that
differ in one word alone. Such positions may be several in one statement (`order 7 is in state
paid, expected shipped before refund`): each opened alone shows it, so all are opened; where a
weaker position is among them the skeleton is left as it is. The statement's first word never
varies this way and at least `MIN_FIXED_WORDS` of its words stay fixed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rounds_bot.grouping.skeletons import HAS_LETTER, WILDCARD

#: different words a position must hold before it is a parameter
MIN_DISTINCT = 3
#: lines per different word, at most, for the words to count as values rather than a few states
MAX_REPEAT = 2
#: different words a position must hold to be a value however often each repeats
MANY_DISTINCT = 10
#: words of the statement that stay fixed around the varying one
MIN_FIXED_WORDS = 3
#: boolean literals as programs print them (Python, JSON/YAML, Java, shell); trailing punctuation
#: of the sentence allowed
_BOOLEAN = re.compile(r"(?i)(?:true|false|yes|no|on|off)[.,;:]?")

Skeleton = tuple[str, ...]


def varying_skeletons(
    lines: Iterable[tuple[tuple[str, Skeleton], int]],
) -> dict[tuple[str, Skeleton], Skeleton]:
    """For each (bucket, skeleton) of `lines` (with how many lines have it) that has a varying
    position, the skeleton with that position made a parameter. A skeleton with two candidate
    positions is left as it is, unless each holds `MANY_DISTINCT` words: then both are opened."""
    counts: dict[tuple[str, Skeleton], int] = {}
    for line, count in lines:
        counts[line] = counts.get(line, 0) + count
    # A position varies only among skeletons of one bucket, length and first word (which never
    # varies): one alone need not be looked at (two can be a flag's two values).
    sizes: dict[tuple[str, int, str], int] = {}
    for bucket, tokens in counts:
        if tokens:
            family = (bucket, len(tokens), tokens[0])
            sizes[family] = sizes.get(family, 0) + 1
    counts = {
        (bucket, tokens): count
        for (bucket, tokens), count in counts.items()
        if tokens and sizes[(bucket, len(tokens), tokens[0])] >= 2
    }
    frames: dict[tuple[str, Skeleton], tuple[set[str], list[int]]] = {}
    for (bucket, tokens), count in counts.items():
        for masked in _masked_forms(tokens):
            words, seen = frames.setdefault((bucket, masked), (set(), [0]))
            words.add(tokens[masked.index(_HOLE)])
            seen[0] += count
    out: dict[tuple[str, Skeleton], Skeleton] = {}
    for bucket, tokens in counts:
        found = [masked for masked in _masked_forms(tokens) if _varies(*frames[(bucket, masked)])]
        if len(found) == 1:
            out[(bucket, tokens)] = tuple(WILDCARD if t == _HOLE else t for t in found[0])
        elif found and all(len(frames[(bucket, masked)][0]) >= MANY_DISTINCT for masked in found):
            holes = {masked.index(_HOLE) for masked in found}
            opened = tuple(WILDCARD if i in holes else t for i, t in enumerate(tokens))
            if _fixed_words(opened) >= MIN_FIXED_WORDS:
                out[(bucket, tokens)] = opened
    return out


_HOLE = "\x00"  # the varying position while frames are counted (no token holds it)


def _masked_forms(tokens: Skeleton) -> list[Skeleton]:
    """The skeleton with each candidate position opened in turn."""
    if _fixed_words(tokens) - 1 < MIN_FIXED_WORDS:
        return []
    return [
        (*tokens[:index], _HOLE, *tokens[index + 1 :])
        for index in range(1, len(tokens))
        if tokens[index] != WILDCARD and HAS_LETTER.search(tokens[index])
    ]


def _fixed_words(tokens: Skeleton) -> int:
    return sum(1 for t in tokens if t != WILDCARD and HAS_LETTER.search(t))


def _varies(words: set[str], seen: list[int]) -> bool:
    if len(words) >= 2 and all(_BOOLEAN.fullmatch(word) for word in words):
        return True  # a flag's value: it has two values only, however often it is printed
    if len(words) >= MANY_DISTINCT:
        return True  # a field of many values, each printed often
    return len(words) >= MIN_DISTINCT and len(words) * MAX_REPEAT >= seen[0]
