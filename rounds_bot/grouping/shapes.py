"""A bounded memo of what a message *shape* normalises to.

Messages that differ only in digit values (`user 12 not found` / `user 907 not found`) share a
shape (digits zeroed, but those a rule may keep: `normalize.shape_of`). Masking never depends on the
other digits' values (see `normalize`), and neither does the skeleton (any token with a digit is a
parameter), so both are computed once per shape and reused; only the final text is rebuilt when a
masked message still shows a digit.

What only a log line's path reads (its skeleton, the skeletons `rounds-fp:2` to `rounds-fp:7` read,
whether it may hold an error code) is worked out the first time it is asked for, from the first message of
the shape, as it would have been when the shape was first seen: a trace's message needs none of it. A
name a runtime's message gives code (`mask_names`) is a word of the skeleton even when it holds a digit,
which it reads as zero, as the shape does; a number a rule keeps (`mask_numbers`) is one with its digits
(`_skeleton_keeping`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from rounds_bot.grouping.mask_numbers import KEPT_DIGITS
from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo
from rounds_bot.grouping.normalize import (
    MAX_MESSAGE_CHARS,
    SHAPE_DIGITS,
    Piece,
    Span,
    apply_spans,
    kept_pieces,
    mask_spans,
    mask_spans_seventh,
    may_keep_digits,
    may_keep_pieces,
    normalize_before,
    normalize_fifth,
    normalize_previous,
    normalize_sixth,
    shape_of,
    truncate,
)
from rounds_bot.grouping.route import Route
from rounds_bot.grouping.skeletons import (
    REDACTED_MARK,
    skeleton,
    skeleton_with_context,
    skeleton_with_plurals,
)

_DIGIT = re.compile(r"[0-9]")
#: what the rules added in `rounds-fp:3` mask begins with
_MASKED_SINCE = re.compile(r"[\"'{\[]")
#: what the rules added in `rounds-fp:5` (`normalize.ADDED_IN_FP5`) mask holds: a month's name, `AM` or
#: `PM`, `=(` or PostgreSQL's failing row
_MASKED_IN_FP5 = re.compile(
    r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|[AaPp]\.?[Mm]|=\(|Failing row"
)
#: what the rules added in `rounds-fp:6` (`normalize.ADDED_IN_FP6`) mask holds: a query's `?`, a bytes
#: literal's `b'` or `b"`, a Ruby object's `#<`, an escape
_MASKED_IN_FP6 = re.compile(r"\?|b['\"]|#<|\\")
#: what the wordings whose code names `rounds-fp:7` keeps (`normalize.ADDED_IN_FP7`) hold
_KEPT_IN_FP7 = re.compile(
    r"has no attribute |unexpected keyword argument |is not defined|required (?:positional|keyword-only) "
    r"argument|\(reading |is not a function|undefined method |violates unique constraint |does not exist"
)
#: a digit of a kept name, while the skeleton is read: no digit, no letter, no space (a private-use
#: character), so the name stays one word; it is read back as `0`
_HIDDEN_DIGIT = "\ue000"
_HIDE_DIGITS = str.maketrans("0123456789", _HIDDEN_DIGIT * 10)
#: a digit of a kept number, hidden so too, one character per digit: it is read back as written
_HIDE_NUMBER = str.maketrans({str(digit): chr(0xE001 + digit) for digit in range(10)})
_SHOW_DIGITS = str.maketrans({_HIDDEN_DIGIT: "0", **{chr(0xE001 + digit): str(digit) for digit in range(10)}})
#: shapes kept before the memo is cleared, and the bytes they may hold (as `_shape_size` estimates)
MAX_SHAPES = 100_000
SHAPES_BUDGET = 24 * MB


class ShapeInfo:
    __slots__ = (
        "_before",
        "_code_test",
        "_earlier",
        "_may_hold_code",
        "_previous",
        "_skeleton",
        "_text",
        "normalized",
        "routes",
        "spans",
    )

    def __init__(
        self,
        text: str,
        spans: tuple[Span, ...],
        normalized: str | None,
        code_test: Callable[[str], bool] | None,
    ) -> None:
        self.spans = spans
        #: the normalised text, when it is the same for every message of the shape
        self.normalized = normalized
        #: the shape's first message (cut as normalising cuts it), until what is read from it lazily is
        #: worked out
        self._text: str | None = text
        self._code_test = code_test
        self._skeleton: tuple[str, ...] | None = None
        self._previous: tuple[str, ...] | None = None
        self._earlier: tuple[str, ...] | None = None
        self._before: tuple[str, ...] | None = None
        self._may_hold_code: bool | None = None
        #: what the engine worked out for this shape, per service and error type; it is
        #: forgotten with the shape and is only ever a shortcut to an answer that cannot change
        self.routes: dict[tuple[str, str | None], Route] = {}

    @property
    def skeleton(self) -> tuple[str, ...]:
        """The template shape of the shape's messages (`skeletons`)."""
        if self._skeleton is None:
            self._read_skeletons()
        return self._skeleton  # type: ignore[return-value]

    @property
    def previous(self) -> tuple[str, ...] | None:
        """The skeleton `rounds-fp:2` read (quotes and printed structures were text then), when it
        differs from `skeleton`."""
        if self._skeleton is None:
            self._read_skeletons()
        return self._previous

    @property
    def earlier(self) -> tuple[str, ...] | None:
        """The skeleton `rounds-fp:3` read (a trailing clause of redacted values kept, see
        `skeletons.split_context`), when it differs from `skeleton`."""
        if self._skeleton is None:
            self._read_skeletons()
        return self._earlier

    @property
    def before(self) -> tuple[str, ...] | None:
        """The skeleton `rounds-fp:4` read (without the rules added since, `normalize_before`, and the
        nouns after a count as printed, `skeleton_with_plurals`), when it differs from `skeleton`; when
        the one `rounds-fp:5` read differs too (`normalize_fifth`), that one, which says the other
        (`ReadBefore`)."""
        if self._skeleton is None:
            self._read_skeletons()
        return self._before

    @property
    def may_hold_code(self) -> bool:
        """False when no message of the shape can hold an error code (see ShapeCache)."""
        found = self._may_hold_code
        if found is None:
            text = self._text
            assert text is not None
            found = self._may_hold_code = self._code_test(text) if self._code_test is not None else True
            self._code_test = None
            self._release()
        return found

    def _read_skeletons(self) -> None:
        text = self._text
        assert text is not None
        normalized = apply_spans(text, self.spans)
        # (the rules added since match nothing where `kept_pieces` finds none of `rounds-fp:8`'s and
        # `_KEPT_IN_FP7`, `_MASKED_IN_FP5` and `_MASKED_IN_FP6` find nothing, and without a count nothing is
        # read in the singular)
        named = _KEPT_IN_FP7.search(text) is not None
        pieces = kept_pieces(text) if named or may_keep_pieces(text) else ()
        since_seventh = any(piece.since_fp8 for piece in pieces)
        tokens = _interned(_skeleton_keeping(text, self.spans, pieces) if pieces else skeleton(normalized))
        seventh_spans = mask_spans_seventh(text) if since_seventh else self.spans
        seventh = apply_spans(text, seventh_spans)
        sixth = normalize_sixth(text) if named else seventh
        since_fifth = _MASKED_IN_FP6.search(text) is not None
        fifth = normalize_fifth(text) if since_fifth else sixth
        since_fourth = since_fifth or _MASKED_IN_FP5.search(text) is not None
        normalized_before = normalize_before(text) if since_fourth else fifth
        if named or since_seventh or normalized_before != normalized or "<int> " in normalized:
            before = skeleton_with_plurals(normalized_before)
            self._before = None if before == tokens else _interned(before)
        readings: list[tuple[str, tuple[str, ...]]] = []
        if (
            since_seventh
        ):  # as `rounds-fp:7` read it: its names kept, the names and numbers added since masked
            then = kept_pieces(text, seventh=True)
            readings.append(
                ("seventh", _skeleton_keeping(text, seventh_spans, then) if then else skeleton(seventh))
            )
        readings += [("sixth", skeleton(sixth))] if named else []
        readings += [("fifth", skeleton(fifth))] if fifth != sixth else []
        if readings:
            newer = tuple((reading, _interned(read)) for reading, read in readings)
            self._before = _read_before(newer, tokens, self._before)
        if REDACTED_MARK in normalized_before:
            earlier = skeleton_with_context(normalized_before)
            self._earlier = None if earlier == tokens else _interned(earlier)
        if _MASKED_SINCE.search(text) or self._before is not None:
            # `rounds-fp:2` kept trailing clauses too
            previous = skeleton_with_context(normalize_previous(text))
            self._previous = None if previous == tokens else _interned(previous)
        self._skeleton = tokens
        self._release()

    def _release(self) -> None:
        # the first message is kept only as long as something is still to be read from it
        if self._skeleton is not None and self._may_hold_code is not None:
            self._text = None


class ReadBefore(tuple[str, ...]):
    """The skeleton `rounds-fp:7`, `rounds-fp:6` or `rounds-fp:5` read, where it differs from the one the
    version after read (`ShapeInfo.before`): found that version's way (`reading`, a key of
    `earlier_readings.READ_OTHERWISE_BY`), then `older`, what the versions before read, when that differs
    from it: another `ReadBefore`, or the skeleton `rounds-fp:4` read."""

    reading: str
    older: tuple[str, ...] | None


def _read_before(
    readings: tuple[tuple[str, tuple[str, ...]], ...], tokens: tuple[str, ...], fourth: tuple[str, ...] | None
) -> tuple[str, ...] | None:
    """`ShapeInfo.before` of a shape the versions since `rounds-fp:5` read into `readings` (each with its
    reading, newest first; `fourth`: what `rounds-fp:4` read, None when the same as this version's). A
    version that read the shape as the version after it did is not asked: that one's reading finds it."""
    distinct: list[tuple[str, tuple[str, ...]]] = []
    last = tokens
    for reading, read in readings:
        if read != last:
            distinct.append((reading, read))
            last = read
    older = None if (fourth or tokens) == last else (fourth or tokens)
    for reading, read in reversed(distinct):
        found = ReadBefore(read)
        found.reading, found.older = reading, older
        older = found
    return older


def _skeleton_keeping(text: str, spans: tuple[Span, ...], pieces: tuple[Piece, ...]) -> tuple[str, ...]:
    """The skeleton of `text` masked at `spans`, where what the rules keep (`normalize.kept_pieces`) stays a
    word though it holds a digit: a name's digits read as `0` (`loads2`: every message of the shape reads
    so, whichever came first), a number's as written (a status code, a port: they are part of the shape).
    A masked part right before a kept one (the address before a port, a table's qualifier) is a parameter
    of its own, so the kept part stays a word (`<*> :5432:`, `<*> .orders'`)."""
    starts = {piece.start for piece in pieces}
    apart = any(end in starts for _, end, _ in spans)
    if not apart and not any(_DIGIT.search(text, piece.start, piece.end) for piece in pieces):
        return skeleton(apply_spans(text, spans))
    parts: list[str] = []
    position = 0
    for piece in pieces:  # (each digit one character: the spans stay where they were)
        hidden = text[piece.start : piece.end].translate(_HIDE_NUMBER if piece.digits else _HIDE_DIGITS)
        parts += [text[position : piece.start], hidden]
        position = piece.end
    parts.append(text[position:])
    spaced = tuple((start, end, f"{mask} " if end in starts else mask) for start, end, mask in spans)
    return tuple(token.translate(_SHOW_DIGITS) for token in skeleton(apply_spans("".join(parts), spaced)))


def read_otherwise_before(shape: ShapeInfo) -> bool:
    """Whether an earlier version read the shape's messages into another skeleton than this one."""
    return shape.previous is not None or shape.earlier is not None or shape.before is not None


def _interned(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The skeleton with its words shared with every other skeleton's (a statement's words repeat across
    its shapes: one copy of each, not one per shape)."""
    return tuple([sys.intern(token) for token in tokens])


def _shape_size(key: bytes, info: ShapeInfo) -> int:
    """A shape's bytes, roughly: its key, its first message (or constant text) and spans, its skeleton
    and the objects around them."""
    return 2 * OVERHEAD + 2 * len(key) + 16 * len(info.spans)


class ShapeCache:
    """`code_test`, when given, must answer alike for every message of a shape (a pattern that
    treats digits only as `\\d`); its answer is kept with the shape. Without one, every shape
    may hold a code and the caller looks each time."""

    def __init__(
        self,
        max_shapes: int = MAX_SHAPES,
        code_test: Callable[[str], bool] | None = None,
        budget: int = SHAPES_BUDGET,
    ) -> None:
        self._shapes: BoundedMemo[bytes, ShapeInfo] = BoundedMemo(max_shapes, budget, _shape_size)
        self._code_test = code_test
        self.misses = 0

    def shape_of(self, message: str) -> ShapeInfo:
        """The shape's memo alone: `lookup` without building the normalised text."""
        if len(message) <= MAX_MESSAGE_CHARS and "\n" not in message:
            info = self._get(message.strip())
            if info is not None:
                return info
        return self.lookup(message)[1]

    def _get(self, text: str) -> ShapeInfo | None:
        """The memo of `text`'s shape (`normalize.shape_of`), if kept. Whether a message holds digits a rule
        may keep (`KEPT_DIGITS`) is the same for every message whose digits are all zeroed, so that is the
        key first, and only the messages of a shape that holds such digits are looked for them: the others
        are keyed without a second look (`_WITH_KEPT_DIGITS`)."""
        zeroed = text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
        info = self._shapes.get(zeroed)
        return self._shapes.get(_KEPT_KEY + shape_of(text)) if info is _WITH_KEPT_DIGITS else info

    def _put(self, text: str, info: ShapeInfo) -> None:
        zeroed = text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
        if not may_keep_digits(text) or KEPT_DIGITS.search(text) is None:
            self._shapes.put(zeroed, info)
        else:
            self._shapes.put(zeroed, _WITH_KEPT_DIGITS)
            self._shapes.put(_KEPT_KEY + shape_of(text), info)

    def lookup(self, message: str) -> tuple[str, ShapeInfo]:
        """The normalised message and its shape's memo."""
        if len(message) <= MAX_MESSAGE_CHARS and "\n" not in message:
            text = message.strip()  # what `truncate` does, without the call, on the common path
        else:
            text = truncate(message)
        info = self._get(text)
        if info is not None:
            return (info.normalized if info.normalized is not None else apply_spans(text, info.spans)), info
        self.misses += 1
        spans = mask_spans(text)
        normalized = apply_spans(text, spans)
        constant = normalized if _DIGIT.search(normalized) is None else None
        info = ShapeInfo(text, spans, constant, self._code_test)
        self._put(text, info)
        return normalized, info


#: what the memo keeps under a shape whose messages hold digits a rule may keep (`ShapeCache._get`), and
#: the start of the keys of those messages' own shapes (no UTF-8 text holds the byte 0xFF)
_WITH_KEPT_DIGITS = ShapeInfo("", (), "", None)
_KEPT_KEY = b"\xff"
