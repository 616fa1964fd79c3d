"""Each distinct stack trace is parsed once: parsed traces memoised by shape.

Occurrences of one problem print the same frames; what changes between them is mostly a value
in the exception's message (`cart 17 is empty`, `cart 912 is empty`). A trace's *shape* is its
text with every ASCII digit made 0. Two texts of one shape whose frame lines (from the first line
that prints a frame, see `stacktrace.frame_lines`) are equal character for character parse to
the same exceptions and frames; only the other lines (Java's header and `Caused by:` lines,
Python's exception lines) can differ, and only in digits. Normalisation masks digits the
same way whatever their values (see `normalize`), so when the first text's exception types and
normalised values show no digit, the second text is the same trace for grouping, and gets the
first one's parse. Anything else (a digit in an exception type or a normalised value, a text cut
to bounds) is parsed afresh: how a value normalises depends on the text around it (`'k1'` alone
stays as it is, in a longer line it is a quoted string), so no reading of the other lines can
stand for the values' own.

A Go dump's goroutines and pointers change with every occurrence, in frame lines too; its
*dump key* (`stacktrace.go_key`) leaves them out, and the dumps of one key read alike: a dump,
or a dump with its message cut out, is read once per key.

Texts parsed afresh that read as the same trace (the same runtime, exception types and
relations, frames and normalised values: a Go dump whose goroutine and pointers changed, a
message whose value changed in a way normalisation masks) are given one `ParsedText`, the first
one's. What grouping works out from a trace is a function of that content alone (it reads an
exception's value only as normalised, from `values`), so texts that share it share its key and
the candidate memoised under it (`candidates`).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field

from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo, Ledger, SharingMemo
from rounds_bot.grouping.normalize import SHAPE_DIGITS, normalize_uncached
from rounds_bot.grouping.shared_costs import frames_cost
from rounds_bot.grouping.stacktrace import (
    Frame,
    LineVotes,
    ParsedTrace,
    Runtime,
    frame_lines,
    go,
    logcat,
    parse_stacktrace,
)
from rounds_bot.grouping.stacktrace.go_key import DumpKey, dump_key
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.grouping.trace_cut import PLACEHOLDER, Cut, cut

#: traces each memo holds before it is cleared (never evicted piecemeal), and the bytes each may hold
MEMO_LIMIT = 4096
TEXT_BUDGET = 6 * MB
#: texts longer than this are looked up by shape only, so the memo stays small
_MAX_MEMO_TEXT = 65_536
#: distinct frame texts remembered per shape
_VARIANTS_PER_SHAPE = 64
#: readings a cut text's entry gives per normalised message (each charged to the memo as it is given)
_READINGS_PER_CUT = 8
#: what a parsed trace holds of its own: its object, its exceptions' tuple, its notes; and per exception: the
#: exception's object and its frames' tuple
_TRACE_BYTES = 3 * OVERHEAD
_EXCEPTION_BYTES = 2 * OVERHEAD
#: what a parse kept by content holds beyond its trace: its object, its key and values
_PARSED_TEXT_BYTES = 2 * OVERHEAD


#: what grouping reads of a parsed trace: runtime, notes, each exception's type, relation and
#: frames (its value only normalised), and the normalised values
_Content = tuple[str, tuple[str, ...], tuple[tuple[str, str, tuple[Frame, ...]], ...], tuple[str, ...]]


@dataclass(frozen=True)
class ParsedText:
    """A parsed trace: `key` names it (texts that share a parse share a key), `values` are its
    exceptions' normalised values."""

    key: str
    trace: ParsedTrace
    values: list[str]


@dataclass(frozen=True)
class _CutEntry:
    """A text with its message cut out (`trace_cut`), read: the placeholder's reading, the exception
    that holds it, the normalised values and what the line tests answer for the placeholder's line."""

    trace: ParsedTrace
    holder: int
    values: list[str]
    votes: LineVotes
    #: the reading given per normalised message (what grouping reads of it depends on nothing else)
    given: dict[str, ParsedText] = field(default_factory=dict)


@dataclass(frozen=True)
class _ShapeEntry:
    """The texts of one shape: where their frame lines are (the same lines in every text of the
    shape, as character spans of runs of frame lines), and the parse of each distinct frame text."""

    spans: tuple[tuple[int, int], ...]
    parses: dict[str, ParsedText]

    def frames_of(self, text: str) -> str:
        return "\n".join(text[start:end] for start, end in self.spans)


class TraceMemo:
    def __init__(self) -> None:
        #: parses by text, and Go readings by their dump's key (`go_key`: a tuple, never equal to a text)
        self._by_text: BoundedMemo[str | DumpKey, ParsedText | None] = BoundedMemo(
            MEMO_LIMIT, TEXT_BUDGET, lambda key, _: _key_size(key)
        )
        #: an entry keeps up to `_VARIANTS_PER_SHAPE` frame texts, each at most the shape's length
        self._by_shape: BoundedMemo[bytes, _ShapeEntry] = BoundedMemo(
            MEMO_LIMIT, TEXT_BUDGET, lambda shape, _: OVERHEAD + len(shape) * 4
        )
        #: readings of texts with their message cut out (`trace_cut`), by text or by dump key as
        #: `_by_text` (None: read such texts whole); an entry keeps up to `_READINGS_PER_CUT` readings (each
        #: charged as it is given: `SharingMemo.grew`). A
        #: repeat placed by its hashes needs none (`cut_digests`), so this holds the texts of the
        #: occurrences being assigned
        self._cuts: SharingMemo[str | DumpKey, _CutEntry | None] = SharingMemo(
            MEMO_LIMIT, 6 * MB, lambda key, entry, ledger: _key_size(key) + _cut_size(entry, ledger)
        )
        #: texts parsed (whole, or with their message cut out), and readings (or frames) given from a cut text
        self.parses = 0
        self.from_cuts = 0
        #: parses by content: equal parses of different texts share one `ParsedText`
        self._by_content: SharingMemo[_Content, ParsedText] = SharingMemo(
            MEMO_LIMIT,
            5 * MB,
            lambda _, parsed, ledger: _parsed_size(parsed, ledger),
        )

    def parsed(
        self,
        text: str,
        message: str | None = None,
        normalized_message: str | None = None,
        found: Cut | None = None,
    ) -> ParsedText | None:
        """The trace in `text` with its normalised values, or None when no parser reads it. With the
        event's `message`, a trace that prints it is read once for all its messages (`trace_cut`);
        `normalized_message` is the message normalised, and `found` what `cut` gives the text and message,
        when the caller has them already."""
        known = self._by_text.get(text, _MISSING)
        if known is not _MISSING:
            return known
        if message:
            given = self._without_message(text, message, normalized_message, found)
            if given is not None:
                return given
        dump = dump_key(text)
        if dump is not None:
            known = self._by_text.get(dump)  # (only Go readings are kept under a dump key)
            if known is not None:
                return known
        shape = text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
        entry = self._by_shape.get(shape)
        if entry is not None:
            known = entry.parses.get(entry.frames_of(text))
            if known is not None:
                return known
        self.parses += 1
        parsed = self._shared(_parse(text))
        if len(text) <= _MAX_MEMO_TEXT:
            self._by_text.put(dump if dump is not None and _read_as_go(parsed) else text, parsed)
        if parsed is not None:
            self._remember_shape(shape, text, parsed, entry)
        return parsed

    def cut_reading(self, found: Cut) -> tuple[Runtime, LineVotes] | None:
        """The runtime and the placeholder line's votes of the reading of a text with its message cut out
        (what `Cut.agrees` asks of an occurrence's message, see `_without_message`); None when such a text
        is read whole."""
        entry = self._cut_entry(found)[1]
        return None if entry is None else (entry.trace.runtime, entry.votes)

    def _without_message(
        self, text: str, message: str, normalized_message: str | None, found: Cut | None
    ) -> ParsedText | None:
        """The reading of a trace from the reading of its text with the message cut out (see
        `trace_cut`), or None when it must be read whole. The memo is keyed on the whole text but
        for the message, and the message is put back: it cannot go stale."""
        found = found if found is not None else cut(text, message)
        if found is None:
            return None
        key, entry = self._cut_entry(found)
        if entry is None or not found.agrees(entry.trace.runtime, entry.votes):
            return None
        self.from_cuts += 1
        holder = entry.holder
        value = entry.trace.exceptions[holder].value.replace(PLACEHOLDER, message)
        known = normalized_message if value == message and normalized_message is not None else None
        normalized = known or normalize_uncached(value)
        given = entry.given.get(normalized)
        if given is not None:
            return given
        values = [*entry.values[:holder], normalized, *entry.values[holder + 1 :]]
        digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        parsed = self._shared(ParsedText(digest, found.reading(entry.trace, holder), values))
        if parsed is not None and len(entry.given) < _READINGS_PER_CUT:
            # What grouping reads of this reading (see `_shared`) is the entry's but for the message,
            # which it reads normalised only: every message that normalises alike is given this one.
            entry.given[normalized] = parsed
            self._cuts.grew(
                key, entry, lambda ledger: OVERHEAD + sys.getsizeof(normalized) + _parsed_size(parsed, ledger)
            )
        return parsed

    def _cut_entry(self, found: Cut) -> tuple[str | DumpKey, _CutEntry | None]:
        """The reading of a text with its message cut out, with the key it is kept under: per text, or for a
        Go dump per dump key, as the dumps of one key read alike (`go_key`) and the key keeps the
        placeholder's line."""
        dump = found.dump
        if dump is not None:
            entry = self._cuts.get(dump, _MISSING_CUT)
            if entry is not _MISSING_CUT:
                return dump, entry
        entry = self._cuts.get(found.text, _MISSING_CUT)
        if entry is not _MISSING_CUT:
            return found.text, entry
        self.parses += 1
        trace = grouped_trace(found.text)
        entry = _read_cut(found, trace)
        key = dump if dump is not None and _read_as_go(trace) else found.text
        return key, self._cuts.put(key, entry)

    def _shared(self, parsed: ParsedText | None) -> ParsedText | None:
        """The `ParsedText` already given for the same trace and values, else `parsed`."""
        if parsed is None:
            return None
        trace = parsed.trace
        content = (
            trace.runtime,
            trace.notes,
            tuple((e.type, e.relation, e.frames) for e in trace.exceptions),
            tuple(parsed.values),
        )
        known = self._by_content.get(content)
        if known is not None:
            return known
        return self._by_content.put(content, parsed)

    def _remember_shape(self, shape: bytes, text: str, parsed: ParsedText, entry: _ShapeEntry | None) -> None:
        if any(_has_digit(e.type) for e in parsed.trace.exceptions) or any(map(_has_digit, parsed.values)):
            return  # a digit the next text of this shape may not share
        if entry is None:
            spans = _frame_spans(text, parsed.trace)
            if spans is None:
                return
            entry = self._by_shape.put(shape, _ShapeEntry(spans, parses={}))
        if len(entry.parses) < _VARIANTS_PER_SHAPE:
            entry.parses[entry.frames_of(text)] = parsed


_MISSING = ParsedText("", ParsedTrace("python", ()), [])
_MISSING_CUT = _CutEntry(ParsedTrace("python", ()), 0, [], (False, None, False))


def _trace_size(trace: ParsedTrace, ledger: Ledger) -> int:
    """What a parsed trace holds: its objects, its exceptions' values, and its frames (shared with other
    entries more often than not: charged once, `shared_costs`)."""
    size = _TRACE_BYTES + sum(map(sys.getsizeof, trace.notes))
    for exception in trace.exceptions:
        frames = exception.frames
        size += (
            _EXCEPTION_BYTES + sys.getsizeof(exception.value) + 8 * len(frames) + frames_cost(frames, ledger)
        )
    return size


def _cut_size(entry: _CutEntry | None, ledger: Ledger) -> int:
    """A cut text's entry as it is put: its reading, values and votes (the readings it gives are charged as
    they are given)."""
    if entry is None:
        return OVERHEAD
    return 3 * OVERHEAD + sum(map(sys.getsizeof, entry.values)) + _trace_size(entry.trace, ledger)


def _given_size(normalized: str, parsed: ParsedText, ledger: Ledger) -> int:
    """A reading a cut text's entry gives, under its normalised message."""
    return OVERHEAD + sys.getsizeof(normalized) + _parsed_size(parsed, ledger)


def _parsed_size(parsed: ParsedText, ledger: Ledger) -> int:
    """A parse: its object, key and normalised values, and its trace."""
    values = sum(map(sys.getsizeof, parsed.values))
    return _PARSED_TEXT_BYTES + sys.getsizeof(parsed.key) + values + _trace_size(parsed.trace, ledger)


def _key_size(key: str | DumpKey) -> int:
    """A text, or a dump key: its parts, each a string object."""
    # the string's own size: a text of any character beyond ASCII takes two or four bytes a character
    if isinstance(key, str):
        return OVERHEAD + sys.getsizeof(key)
    return OVERHEAD + sum(sys.getsizeof(part) for part in key if part is not None)


def _read_as_go(read: ParsedText | ParsedTrace | None) -> bool:
    """Whether a reading may be kept under its text's dump key: a Go trace's (see `go_key`)."""
    trace = read.trace if isinstance(read, ParsedText) else read
    return trace is not None and trace.runtime == "go"


#: the notes of a trace whose frames do not say where its error arose: a Go stack recorded where the error
#: was reported (`go.RECORDED`)
NOT_WHERE_RAISED = frozenset({go.RECORDED})


def grouped_trace(text: str) -> ParsedTrace | None:
    """The trace grouping reads in a text: none in a trace whose frames do not say where its error arose
    (`NOT_WHERE_RAISED`): its event is read by its type and message."""
    trace = parse_stacktrace(text)
    return None if trace is None or not NOT_WHERE_RAISED.isdisjoint(trace.notes) else trace


def _read_cut(found: Cut, trace: ParsedTrace | None) -> _CutEntry | None:
    if trace is None:
        return None
    holder = found.holder(trace)
    if holder is None:
        return None
    votes = found.votes(trace.runtime)
    if votes is None:
        return None
    return _CutEntry(trace, holder, [normalize_uncached(e.value) for e in trace.exceptions], votes)


def _parse(text: str) -> ParsedText | None:
    trace = grouped_trace(text)
    if trace is None:
        return None
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    return ParsedText(digest, trace, [normalize_uncached(e.value) for e in trace.exceptions])


def _frame_spans(text: str, trace: ParsedTrace) -> tuple[tuple[int, int], ...] | None:
    """Character spans of the runs of frame lines in `text`, or None when its lines cannot be
    told apart (a text cut to bounds, or without a frame line)."""
    raw = text.splitlines(keepends=True)
    lines = trace_lines(text)
    if len(lines) != len(raw) or logcat.unprefixed(lines) is not None:
        return None  # (a logcat trace's frame lines are read without their prefixes: parsed whole)
    flags = frame_lines(lines, trace.runtime)
    spans: list[tuple[int, int]] = []
    position = 0
    for line, is_frame in zip(raw, flags, strict=True):
        end = position + len(line)
        if is_frame:
            if spans and spans[-1][1] == position:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((position, end))
        position = end
    return tuple(spans) or None


def _has_digit(text: str) -> bool:
    return any(character.isdigit() for character in text)
