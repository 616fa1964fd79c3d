"""A bounded memo of what a message *shape* normalises to.

Messages that differ only in digit values (`user 12 not found` / `user 907 not found`) share a
shape (digits zeroed). Masking never depends on digit values (see `normalize`), and neither
does the skeleton (any token with a digit is a parameter), so both are computed once per shape
and reused; only the final text is rebuilt when a masked message still shows a digit.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rounds_bot.grouping.normalize import (
    MAX_MESSAGE_CHARS,
    SHAPE_DIGITS,
    Span,
    apply_spans,
    mask_spans,
    normalize_previous,
    truncate,
)
from rounds_bot.grouping.route import Route
from rounds_bot.grouping.skeletons import skeleton

_DIGIT = re.compile(r"[0-9]")
#: what the rules added in `rounds-fp:3` mask begins with
_MASKED_SINCE = re.compile(r"[\"'{\[]")


class ShapeInfo:
    __slots__ = ("may_hold_code", "normalized", "previous", "routes", "skeleton", "spans")

    def __init__(
        self,
        spans: tuple[Span, ...],
        skeleton: tuple[str, ...],
        normalized: str | None,
        may_hold_code: bool,
        previous: tuple[str, ...] | None = None,
    ) -> None:
        self.spans = spans
        self.skeleton = skeleton
        #: the normalised text, when it is the same for every message of the shape
        self.normalized = normalized
        #: False when no message of the shape can hold an error code (see ShapeCache)
        self.may_hold_code = may_hold_code
        #: the skeleton `rounds-fp:2` read (quotes and printed structures were text then), when
        #: it differs from `skeleton`
        self.previous = previous
        #: what the engine worked out for this shape, per service and error type; it is
        #: forgotten with the shape and is only ever a shortcut to an answer that cannot change
        self.routes: dict[tuple[str, str | None], Route] = {}


class ShapeCache:
    """`code_test`, when given, must answer alike for every message of a shape (a pattern that
    treats digits only as `\\d`); its answer is kept with the shape. Without one, every shape
    may hold a code and the caller looks each time."""

    def __init__(self, max_shapes: int = 100_000, code_test: Callable[[str], bool] | None = None) -> None:
        self._shapes: dict[bytes, ShapeInfo] = {}
        self._max_shapes = max_shapes
        self._code_test = code_test
        self.misses = 0

    def shape_of(self, message: str) -> ShapeInfo:
        """The shape's memo alone: `lookup` without building the normalised text."""
        if len(message) <= MAX_MESSAGE_CHARS and "\n" not in message:
            info = self._shapes.get(message.strip().encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS))
            if info is not None:
                return info
        return self.lookup(message)[1]

    def lookup(self, message: str) -> tuple[str, ShapeInfo]:
        """The normalised message and its shape's memo."""
        if len(message) <= MAX_MESSAGE_CHARS and "\n" not in message:
            text = message.strip()  # what `truncate` does, without the call, on the common path
        else:
            text = truncate(message)
        shape = text.encode("utf-8", "surrogatepass").translate(SHAPE_DIGITS)
        info = self._shapes.get(shape)
        if info is not None:
            return (info.normalized if info.normalized is not None else apply_spans(text, info.spans)), info
        self.misses += 1
        spans = mask_spans(text)
        normalized = apply_spans(text, spans)
        constant = normalized if _DIGIT.search(normalized) is None else None
        may_hold_code = self._code_test(text) if self._code_test is not None else True
        tokens = skeleton(normalized)
        previous = None
        if _MASKED_SINCE.search(text):
            previous = skeleton(normalize_previous(text))
            previous = None if previous == tokens else previous
        info = ShapeInfo(spans, tokens, constant, may_hold_code, previous)
        if len(self._shapes) >= self._max_shapes:
            self._shapes.clear()
        self._shapes[shape] = info
        return normalized, info
