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
paid, expected shipped before refund`), whose lines seldom agree on all but one of them: the
positions that hold that many words are then opened together (`_JointFrames`). The statement's
first word never varies this way and at least `MIN_FIXED_WORDS` of its words stay fixed. A name a
runtime's message gives the code (`mask_names`: `has no attribute 'email'`, `relation "orders" does not
exist`) is fixed per bug however many of them a batch holds: its position is never opened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from rounds_bot.grouping.mask_names import NAME_RULES
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
    positions is left as it is, unless they hold `MANY_DISTINCT` words each (`_JointFrames`)."""
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
    joint = _JointFrames(counts)
    out: dict[tuple[str, Skeleton], Skeleton] = {}
    for bucket, tokens in counts:
        found = [masked for masked in _masked_forms(tokens) if _varies(*frames[(bucket, masked)])]
        if len(found) == 1:
            out[(bucket, tokens)] = tuple(WILDCARD if t == _HOLE else t for t in found[0])
            continue
        holes = joint.opened(bucket, tokens)
        opened = tuple(WILDCARD if i in holes else t for i, t in enumerate(tokens))
        if holes and _fixed_words(opened) >= MIN_FIXED_WORDS:
            out[(bucket, tokens)] = opened
    return out


class _JointFrames:
    """Positions that vary together (`order 7 is in state paid, expected shipped before refund`): the
    lines that agree on every other word are too few to show either position varying alone, so the
    positions that hold `MANY_DISTINCT` words across a family (bucket, length, first word) are opened
    together, and each is a value where the lines that agree on every word but those show it holding
    `MANY_DISTINCT` words itself."""

    def __init__(self, counts: dict[tuple[str, Skeleton], int]) -> None:
        words: dict[tuple[str, int, str], dict[int, set[str]]] = {}
        for bucket, tokens in counts:
            per_position = words.setdefault((bucket, len(tokens), tokens[0]), {})
            for index in _open_positions(tokens):
                per_position.setdefault(index, set()).add(tokens[index])
        self._many = {
            family: frozenset(index for index, seen in per_position.items() if len(seen) >= MANY_DISTINCT)
            for family, per_position in words.items()
        }
        self._frames: dict[tuple[str, Skeleton], dict[int, set[str]]] = {}
        for bucket, tokens in counts:
            many = self._positions(bucket, tokens)
            if many:
                frame = self._frames.setdefault((bucket, _masked(tokens, many)), {})
                for index in many:
                    frame.setdefault(index, set()).add(tokens[index])

    def _positions(self, bucket: str, tokens: Skeleton) -> frozenset[int]:
        many = self._many.get((bucket, len(tokens), tokens[0]), frozenset())
        return frozenset(index for index in many if _is_open(tokens, index))

    def opened(self, bucket: str, tokens: Skeleton) -> frozenset[int]:
        """The positions of `tokens` that are values by this rule (none for most skeletons)."""
        many = self._positions(bucket, tokens)
        if not many:
            return frozenset()
        frame = self._frames[(bucket, _masked(tokens, many))]
        return frozenset(index for index in many if len(frame[index]) >= MANY_DISTINCT)


def _open_positions(tokens: Skeleton) -> list[int]:
    """The positions a value may take: a word of letters, never the first."""
    return [index for index in range(1, len(tokens)) if _is_open(tokens, index)]


def _is_open(tokens: Skeleton, index: int) -> bool:
    token = tokens[index]
    return token != WILDCARD and HAS_LETTER.search(token) is not None and index not in _named(tokens)


#: the names `mask_names` keeps, found again in a skeleton (whose words they stay as written)
_NAMES = re.compile("|".join(f"(?:{name_rule.pattern})" for name_rule in NAME_RULES))


@lru_cache(maxsize=16384)
def _named(tokens: Skeleton) -> frozenset[int]:
    """The positions of `tokens` that hold a name a runtime's message gives the code."""
    text = " ".join(tokens)
    spans = [match.span() for match in _NAMES.finditer(text)]
    if not spans:
        return frozenset()
    positions: set[int] = set()
    start = 0
    for index, token in enumerate(tokens):
        end = start + len(token)
        if any(begin < end and start < finish for begin, finish in spans):
            positions.add(index)
        start = end + 1
    return frozenset(positions)


def _masked(tokens: Skeleton, positions: frozenset[int]) -> Skeleton:
    return tuple(_HOLE if index in positions else token for index, token in enumerate(tokens))


_HOLE = "\x00"  # the varying position while frames are counted (no token holds it)


def _masked_forms(tokens: Skeleton) -> list[Skeleton]:
    """The skeleton with each candidate position opened in turn."""
    if _fixed_words(tokens) - 1 < MIN_FIXED_WORDS:
        return []
    return [(*tokens[:index], _HOLE, *tokens[index + 1 :]) for index in _open_positions(tokens)]


def _fixed_words(tokens: Skeleton) -> int:
    return sum(1 for t in tokens if t != WILDCARD and HAS_LETTER.search(t))


def _varies(words: set[str], seen: list[int]) -> bool:
    if len(words) >= 2 and all(_BOOLEAN.fullmatch(word) for word in words):
        return True  # a flag's value: it has two values only, however often it is printed
    if len(words) >= MANY_DISTINCT:
        return True  # a field of many values, each printed often
    return len(words) >= MIN_DISTINCT and len(words) * MAX_REPEAT >= seen[0]
