"""Each distinct stack trace is parsed once: parsed traces memoised by shape.

Occurrences of one problem print the same frames; what changes between them is mostly a value
in the exception's message (`cart 17 is empty`, `cart 912 is empty`). A trace's *shape* is its
text with every ASCII digit made 0. Two texts of one shape whose frame lines (from the first line
that prints a frame, see `stacktrace.frame_lines`) are equal character for character parse to
the same exceptions and frames; only the other lines (Java's header and `Caused by:` lines,
Python's exception lines) can differ, and only in digits. Normalisation masks digits the
same way whatever their values (see `normalize`), so when the first text's exception types and
normalised values show no digit, the second text is the same trace for grouping, and gets the
first one's parse. When its values do keep a digit (`Codec101: read failed [c=1]`), texts of
the shape share a parse only if their other lines also normalise alike. Anything else (a digit
in an exception type, a text cut to bounds) is parsed afresh.

Texts parsed afresh that read as the same trace (the same runtime, exception types and
relations, frames and normalised values: a Go dump whose goroutine and pointers changed, a
message whose value changed in a way normalisation masks) are given one `ParsedText`, the first
one's. What grouping works out from a trace is a function of that content alone (it reads an
exception's value only as normalised, from `values`), so texts that share it share its key and
the candidate memoised under it (`candidates`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo
from rounds_bot.grouping.normalize import SHAPE_DIGITS, apply_spans, mask_spans, normalize_uncached
from rounds_bot.grouping.stacktrace import Frame, LineVotes, ParsedTrace, frame_lines, parse_stacktrace
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.grouping.trace_cut import Cut, cut

#: traces each memo holds before it is cleared (never evicted piecemeal), and the bytes each may hold
MEMO_LIMIT = 4096
TEXT_BUDGET = 6 * MB
#: texts longer than this are looked up by shape only, so the memo stays small
_MAX_MEMO_TEXT = 65_536
#: distinct frame texts remembered per shape
_VARIANTS_PER_SHAPE = 64


#: what grouping reads of a parsed trace: runtime, notes, each exception's type, relation and
#: frames (its value only normalised), and the normalised values
_Content = tuple[str, tuple[str, ...], tuple[tuple[str, str, tuple[Frame, ...]], ...], tuple[str, ...]]


#: a text with its message cut out, read: the placeholder's reading, the exception that holds it, the
#: normalised values and what the line tests answer for the placeholder's line
_CutEntry = tuple[ParsedTrace, int, list[str], LineVotes]


@dataclass(frozen=True)
class ParsedText:
    """A parsed trace: `key` names it (texts that share a parse share a key), `values` are its
    exceptions' normalised values."""

    key: str
    trace: ParsedTrace
    values: list[str]


@dataclass(frozen=True)
class _ShapeEntry:
    """The texts of one shape: where their frame lines are (the same lines in every text of the
    shape, as character spans of runs of frame lines), and the parse of each distinct frame text."""

    spans: tuple[tuple[int, int], ...]
    parses: dict[str, ParsedText]
    #: the other lines, normalised, are part of the key (the values keep digits)
    with_headers: bool = False

    def frames_of(self, text: str) -> str:
        return "\n".join(text[start:end] for start, end in self.spans)

    def headers_of(self, text: str) -> str:
        """The text outside the frame lines."""
        bounds = [0, *(edge for span in self.spans for edge in span), len(text)]
        return "\n".join(text[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2))


class TraceMemo:
    def __init__(self) -> None:
        self._by_text: BoundedMemo[str, ParsedText | None] = BoundedMemo(MEMO_LIMIT, TEXT_BUDGET)
        #: an entry keeps up to `_VARIANTS_PER_SHAPE` frame texts, each at most the shape's length
        self._by_shape: BoundedMemo[bytes, _ShapeEntry] = BoundedMemo(
            MEMO_LIMIT, TEXT_BUDGET, lambda shape, _: OVERHEAD + len(shape) * 4
        )
        self._header_spans: BoundedMemo[bytes, tuple[tuple[int, int, str], ...]] = BoundedMemo(
            MEMO_LIMIT, 1 * MB
        )
        #: readings of texts with their message cut out (`trace_cut`): the placeholder's reading,
        #: the exception that holds it, and the normalised values (None: read such texts whole)
        self._cuts: BoundedMemo[str, _CutEntry | None] = BoundedMemo(
            MEMO_LIMIT,
            12 * MB,
            lambda text, entry: len(text) + (_trace_size(entry[0]) if entry else OVERHEAD),
        )
        #: texts parsed (whole, or with their message cut out), and readings given from a cut text
        self.parses = 0
        self.from_cuts = 0
        #: parses by content: equal parses of different texts share one `ParsedText`
        self._by_content: BoundedMemo[_Content, ParsedText] = BoundedMemo(
            MEMO_LIMIT, 12 * MB, lambda _, parsed: _trace_size(parsed.trace)
        )

    def parsed(
        self, text: str, message: str | None = None, normalized_message: str | None = None
    ) -> ParsedText | None:
        """The trace in `text` with its normalised values, or None when no parser reads it. With the
        event's `message`, a trace that prints it is read once for all its messages (`trace_cut`);
        `normalized_message` is the message normalised, when the caller has it already."""
        known = self._by_text.get(text, _MISSING)
        if known is not _MISSING:
            return known
        if message:
            found = self._without_message(text, message, normalized_message)
            if found is not None:
                return found
        shape = text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
        entry = self._by_shape.get(shape)
        if entry is not None:
            found = entry.parses.get(self._key(entry, text))
            if found is not None:
                return found
        self.parses += 1
        parsed = self._shared(_parse(text))
        if len(text) <= _MAX_MEMO_TEXT:
            self._by_text.put(text, parsed)
        if parsed is not None:
            self._remember_shape(shape, text, parsed, entry)
        return parsed

    def _without_message(self, text: str, message: str, normalized_message: str | None) -> ParsedText | None:
        """The reading of a trace from the reading of its text with the message cut out (see
        `trace_cut`), or None when it must be read whole. The memo is keyed on the whole text but
        for the message, and the message is put back: it cannot go stale."""
        found = cut(text, message)
        if found is None:
            return None
        entry = self._cuts.get(found.text, _MISSING_CUT)
        if entry is _MISSING_CUT:
            self.parses += 1
            entry = self._cuts.put(found.text, _cut_entry(found))
        if entry is None or not found.agrees(entry[0].runtime, entry[3]):
            return None
        trace, holder, values, _ = entry
        self.from_cuts += 1
        reading = found.reading(trace, holder)
        value = reading.exceptions[holder].value
        normalized = normalized_message if value == message and normalized_message is not None else None
        values = [*values[:holder], normalized or normalize_uncached(value), *values[holder + 1 :]]
        digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        return self._shared(ParsedText(digest, reading, values))

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
        if any(_has_digit(e.type) for e in parsed.trace.exceptions):
            return  # a digit of a type name the next text of this shape may not share
        with_headers = any(map(_has_digit, parsed.values))
        if entry is None:
            spans = _frame_spans(text, parsed.trace)
            if spans is None:
                return
            entry = self._by_shape.put(shape, _ShapeEntry(spans, parses={}, with_headers=with_headers))
        if with_headers and not entry.with_headers:
            return  # this shape's texts are told apart by their frames alone
        if len(entry.parses) < _VARIANTS_PER_SHAPE:
            entry.parses[self._key(entry, text)] = parsed

    def _key(self, entry: _ShapeEntry, text: str) -> str:
        """What tells apart the texts of a shape: their frame lines, and when the entry says so,
        their other lines normalised (masked the same way for every text of the shape)."""
        frames = entry.frames_of(text)
        if not entry.with_headers:
            return frames
        headers = entry.headers_of(text)
        shape = headers.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
        spans = self._header_spans.get(shape)
        if spans is None:
            spans = self._header_spans.put(shape, mask_spans(headers))
        return frames + "\x00" + apply_spans(headers, spans)


_MISSING = ParsedText("", ParsedTrace("python", ()), [])
_MISSING_CUT: _CutEntry = (ParsedTrace("python", ()), 0, [], (False, None, False))


def _trace_size(trace: ParsedTrace) -> int:
    """What a parsed trace holds, roughly: its frames (shared with other memos more often than not)."""
    return OVERHEAD * (1 + trace.frame_count) + sum(len(e.value) for e in trace.exceptions)


def _cut_entry(found: Cut) -> _CutEntry | None:
    trace = parse_stacktrace(found.text)
    if trace is None:
        return None
    holder = found.holder(trace)
    if holder is None:
        return None
    votes = found.votes(trace.runtime)
    if votes is None:
        return None
    return trace, holder, [normalize_uncached(e.value) for e in trace.exceptions], votes


def _parse(text: str) -> ParsedText | None:
    trace = parse_stacktrace(text)
    if trace is None:
        return None
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    return ParsedText(digest, trace, [normalize_uncached(e.value) for e in trace.exceptions])


def _frame_spans(text: str, trace: ParsedTrace) -> tuple[tuple[int, int], ...] | None:
    """Character spans of the runs of frame lines in `text`, or None when its lines cannot be
    told apart (a text cut to bounds, or without a frame line)."""
    raw = text.splitlines(keepends=True)
    lines = trace_lines(text)
    if len(lines) != len(raw):
        return None
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
