"""A long text of many lines scanned for what is new in it: what the scan finds in a stack trace's frames is
remembered, and only its first and last lines (the message, the exception, the values) are scanned again.

    crosses_lines(expression) -> bool      whether a match of a scan pattern can hold a newline past its start
    LineScan.of(patterns, database)        the scan of long texts over the database of every pattern
    line_scan.hits(text) -> [(id, end)]    what `database.scan(text)` reports, or more (never less); None
                                           when the whole text is better scanned as it is
    lines_of(text, database) -> spans      the lines a match of a gate ends in (`gate_database`)
    joinable(patterns) -> bool             whether texts joined by newlines report, scanned as one, every
                                           pattern each reports alone (`id_proof.IdProof.prove`)

A trace recurs frame for frame across the occurrences of its bug: what differs is its first line (the message
with its values: `panic: session1867 6612805 is in state ...`) and, for Python, its last (the exception and
its message). A pattern whose match holds a newline at most as its first character (the character before a
match that a look-behind became, `(?:^|[^\\w.-])`) reports, in a whole text, only ends that a scan of the
lines its match stands in reports when they stand after a newline, as they do in the text; and the database
reads `^` at every line's start (`HS_FLAG_MULTILINE`), which can only add ends. So the text's first and last
lines are scanned together (the last after a newline, as in the text), the lines between them (the frames)
are looked up in a bounded memory, or scanned after a newline and remembered, and the few patterns a newline
can stand inside (a PEM block, `key:` with its value on the next line) are scanned over the whole text in a
small database of their own. An end reported where the whole text reports none only makes a rule search and
find nothing; a pattern reported once a scan (`HS_FLAG_SINGLEMATCH`: a keyword, a gate, a rule searched
whole) says only that it matches somewhere, which either part's scan says as well.

Lines between first and last seen once are not remembered (most occurrences of a Go trace differ in every
frame's arguments): the text is scanned whole, as before, and their digest is kept; seen again, they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rounds_bot.redact.rule import class_holds_newline
from rounds_bot.redact.scan_chars import scan_bytes

_parser = re._parser  # type: ignore[attr-defined]  # the standard library's own reading of a pattern
#: characters of blocks of lines remembered in one generation; past it a new one starts (the blocks used in
#: the last generation stay: the frames of the traces of a round's bugs)
BLOCK_MEMO_CHARS = 4_000_000
#: what an entry costs besides its characters (the dict's slot, the string's header), counted against it
_ENTRY_COST = 64
#: what each remembered hit costs (its tuple and two numbers), counted against the memory: dense numbers in
#: a block can report several hits a character, and the bound is on memory, not on text
_HIT_COST = 120
#: syntax Hyperscan reads differently from Python's parser, which `crosses_lines` reads patterns with
#: (`\v` and `\h` are classes to Hyperscan, `\R` and `\N` may hold a newline, `[:space:]` is a POSIX
#: class): a pattern holding any is taken to cross lines
_HYPERSCAN_ONLY = re.compile(r"\\[vVhHRNKX]|\[:")
#: digests of blocks seen once kept (past it, forgotten: a block then waits one more sight)
_SEEN_ONCE = 50_000
_SINGLE = frozenset({"LITERAL", "NOT_LITERAL", "IN", "ANY"})
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
_NEWLINE = ord("\n")

Hits = list[tuple[int, int]]
#: a block of lines' hits: (id, end in a buffer of a newline and the block)
Block = tuple[tuple[int, int], ...]


def crosses_lines(expression: str) -> bool:
    """True unless every match of the Hyperscan `expression` holds a newline at most as its first character,
    before which nothing is asserted; True for a pattern this reading does not know (it is then scanned
    over whole texts, as before)."""
    if _HYPERSCAN_ONLY.search(expression):
        return True
    try:
        parsed = _parser.parse(expression)
    except (re.error, OverflowError, RecursionError):
        return True
    return not _first_only(list(parsed))


def _first_only(items: list[Any]) -> bool:
    """Whether a newline can stand only at the first character of a match of the sequence `items`."""
    if not items:
        return True
    first, rest = items[0], items[1:]
    return _first_only_in(str(first[0]), first[1]) and not any(
        _may_hold_newline(str(op), value) for op, value in rest
    )


def _first_only_in(name: str, value: Any) -> bool:
    """Whether a newline can stand only at the first character of a match of one element."""
    if name in _SINGLE or name == "AT":
        return True  # one character, or none (an anchor: what follows it is then checked whole)
    if name == "SUBPATTERN":
        return _first_only(list(value[3]))
    if name == "BRANCH":
        return all(_first_only(list(alternative)) for alternative in value[1])
    if name in _REPEATS and value[1] <= 1:
        return _first_only(list(value[2]))
    return not _may_hold_newline(name, value)


def _may_hold_newline(name: str, value: Any) -> bool:
    """Whether a match of the element can hold a newline (an element this does not know: it can)."""
    if name == "AT":
        return False
    if name == "LITERAL":
        return bool(value == _NEWLINE)
    if name == "NOT_LITERAL":
        return bool(value != _NEWLINE)
    if name == "ANY":
        return True  # what `.` matches depends on flags: taken to match a newline
    if name == "IN":
        return class_holds_newline(value)
    if name in _REPEATS:
        return any(_may_hold_newline(str(op), inner) for op, inner in value[2])
    if name == "SUBPATTERN":
        return any(_may_hold_newline(str(op), inner) for op, inner in value[3])
    if name == "BRANCH":
        return any(_may_hold_newline(str(op), inner) for branch in value[1] for op, inner in branch)
    return True


@dataclass(frozen=True)
class Patterns:
    """What a database is compiled from: Hyperscan expressions, their ids, flags and least lengths."""

    expressions: Sequence[bytes]
    ids: Sequence[int]
    flags: Sequence[int]
    lengths: Sequence[int]


#: what a pattern may read outside its match: `\A`, `\z`, `\Z` (the buffer's edges alone) and `\G`, or an
#: inline flag group that turns a flag off (`(?-m)`, `(?i-m:`, `(?^)`), which could turn multiline off
_BUFFER_EDGES = re.compile(r"\\[AzZG]|\(\?[a-zA-Z]*[-^]")


def joinable(patterns: Patterns) -> bool:
    """Whether every match of a pattern in a text is a match in any buffer of texts joined by newlines that
    holds it, so that a scan of the joined texts reports every pattern a scan of one of them reports.

    A match reads nothing of the buffer outside its characters but through assertions (Hyperscan has no
    look-around): `^` and `$`, which with `HS_FLAG_MULTILINE` hold at a line's edge as at the buffer's, and
    `\\b` and `\\B`, which read a newline as they read the buffer's edge (neither is a word character). A
    pattern with an assertion of the buffer's edges alone, or a flag group that may turn multiline off, or
    compiled without `HS_FLAG_MULTILINE`, fails it; the least length of a match (`lengths`) is the match's
    own. A pattern reported once a scan (`HS_FLAG_SINGLEMATCH`) is still reported when any match is there."""
    from hyperscan import HS_FLAG_MULTILINE  # here: it needs Hyperscan, which the caller has

    return all(flags & HS_FLAG_MULTILINE for flags in patterns.flags) and not any(
        _BUFFER_EDGES.search(source.decode("latin-1")) for source in patterns.expressions
    )


class LineScan:
    """The scan of long texts over one database (`database`, compiled from `patterns` with
    `HS_FLAG_MULTILINE`): first and last lines scanned, the lines between remembered, and a second database
    of the patterns a newline can stand inside scanned over the whole text."""

    def __init__(self, database: Any, across: Any | None, by_line: frozenset[int]) -> None:
        self._database = database
        self._across = (
            across  # the patterns that cross lines, scanned over whole texts (None: there are none)
        )
        self._by_line = by_line  # the ids whose matches a scan of the lines they stand in reports
        # the hits (id, end after the newline before it) of the lines between a text's first and last, in two
        # generations: what the old one held and is used again moves to this one; the old one goes when
        # this one is full. The hits of a block of lines depend on nothing but the block (and the database,
        # which is this object's): an entry never goes stale
        self._young: dict[str, Block] = {}
        self._old: dict[str, Block] = {}
        self._remembered = 0
        self._seen_once: set[int] = (
            set()
        )  # digests of blocks seen once (`hash`: a clash costs a scan, no more)

    def forget(self) -> None:
        """Empty the memory of blocks: what it held is scanned again when seen (the same hits, at a scan's
        cost). A round empties it once its events are redacted, so it holds no memory through the rest."""
        self._young, self._old, self._remembered = {}, {}, 0
        self._seen_once = set()

    @classmethod
    def of(cls, patterns: Patterns, database: Any) -> LineScan:
        """The scan of long texts over `database`; the patterns that cross lines get a database of theirs."""
        from rounds_bot.redact import scan_cache  # here: it needs Hyperscan, which the caller has

        crossing = [
            n for n, source in enumerate(patterns.expressions) if crosses_lines(source.decode("latin-1"))
        ]
        across = None
        if crossing:
            across = scan_cache.database(
                [patterns.expressions[n] for n in crossing],
                [patterns.ids[n] for n in crossing],
                [patterns.flags[n] for n in crossing],
                [patterns.lengths[n] for n in crossing],
            )
        return cls(database, across, frozenset(patterns.ids) - {patterns.ids[n] for n in crossing})

    def hits(self, text: str) -> Hits | None:
        """The ids and ends a scan of the ASCII `text` reports (or more); None when the lines between its
        first and last are not remembered and were not seen before (then the whole text is scanned)."""
        first, last = text.find("\n"), text.rfind("\n")
        if first == last:
            return None  # two lines: nothing between
        block = self._recalled(text[first + 1 : last])
        if block is None:
            return None
        hits: Hits = []
        # the first line where it stands, the last after a newline, in one buffer: ends past the newline are
        # the last line's, moved to where it stands
        self._database.scan(
            text[: first + 1].encode("ascii") + text[last + 1 :].encode("ascii"),
            match_event_handler=_collect,
            context=hits,
        )
        by_line, moved = self._by_line, last - first
        hits = [(number, end if end <= first else end + moved) for number, end in hits if number in by_line]
        if block:
            hits += [(number, end + first) for number, end in block]
        if self._across is not None:
            self._across.scan(text.encode("ascii"), match_event_handler=_collect, context=hits)
        return hits

    @property
    def by_line(self) -> frozenset[int]:
        """The ids whose matches a scan of the lines they stand in reports (the others cross lines)."""
        return self._by_line

    def block(self, lines: str) -> Block | None:
        """What a block of lines between a text's first and last reports, read as `hits` reads it: its
        hits, remembered or (seen before) scanned after a newline; None when it is seen for the first time
        (and is then remembered as seen)."""
        return self._recalled(lines)

    def _recalled(self, lines: str) -> Block | None:
        """The hits of a block of lines, remembered or (seen before) scanned after a newline; None when it
        is seen for the first time."""
        known = self._young.get(lines)
        if known is not None:
            return known
        known = self._old.get(lines)
        if known is None:
            digest = hash(lines)
            if digest not in self._seen_once:
                if len(self._seen_once) >= _SEEN_ONCE:
                    self._seen_once.clear()
                self._seen_once.add(digest)
                return None
            raw: Hits = []
            self._database.scan(("\n" + lines).encode("ascii"), match_event_handler=_collect, context=raw)
            by_line = self._by_line
            known = tuple((number, end) for number, end in raw if number in by_line)
        self._young[lines] = known
        self._remembered += len(lines) + _ENTRY_COST + _HIT_COST * len(known)
        if self._remembered > BLOCK_MEMO_CHARS:
            self._old, self._young, self._remembered = self._young, {}, 0
        return known


def gate_database(gates: list[tuple[str, int]]) -> Any | None:
    """A database of the gates (Hyperscan patterns with the least length of a match) that reports every
    match, for `lines_of`; None when a gate's match can hold a newline past its first character."""
    if any(crosses_lines(source) for source, _ in gates):
        return None
    from rounds_bot.redact import scan_cache  # here: it needs Hyperscan, which the caller has

    return scan_cache.database(
        [source.encode("ascii") for source, _ in gates],
        list(range(len(gates))),
        [0] * len(gates),
        [least for _, least in gates],
    )


def lines_of(text: str, database: Any) -> list[tuple[int, int]]:
    """The spans (start, end: the newline after it or the text's end) of the lines of `text` a match of the
    database ends in, in order; a match of `gate_database` holds no newline but its first character, so
    what it matched is in that line."""
    hits: Hits = []
    database.scan(scan_bytes(text), match_event_handler=_collect, context=hits)
    spans: list[tuple[int, int]] = []
    for _, end in sorted(hits, key=_end):
        if spans and end <= spans[-1][1]:
            continue  # in the line found last
        last = end - 1  # the match's last character, never the newline before its line
        start = text.rfind("\n", 0, last) + 1
        stop = text.find("\n", last)
        spans.append((start, len(text) if stop < 0 else stop))
    return spans


def _end(hit: tuple[int, int]) -> int:
    return hit[1]


def _collect(rule_id: int, _start: int, end: int, _flags: int, hits: Hits) -> None:
    hits.append((rule_id, end))
