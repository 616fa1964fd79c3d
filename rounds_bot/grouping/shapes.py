"""A bounded memo of what a message *shape* normalises to.

Messages that differ only in digit values (`user 12 not found` / `user 907 not found`) share a
shape (digits zeroed). Masking never depends on digit values (see `normalize`), and neither
does the skeleton (any token with a digit is a parameter), so both are computed once per shape
and reused; only the final text is rebuilt when a masked message still shows a digit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rounds_bot.grouping.normalize import (
    ZERO_DIGITS,
    MAX_MESSAGE_CHARS,
    Span,
    apply_spans,
    mask_spans,
    truncate,
)
from rounds_bot.grouping.templates import skeleton


@dataclass
class ShapeInfo:
    spans: tuple[Span, ...]
    skeleton: tuple[str, ...]
    #: the normalised text, when it is the same for every message of the shape
    normalized: str | None
    #: what the engine worked out for this shape, per bucket (service and error type); it is
    #: forgotten with the shape and is only ever a shortcut to an answer that cannot change
    routes: dict[tuple[str, str | None], Any] = field(default_factory=dict)


class ShapeCache:
    def __init__(self, max_shapes: int = 100_000) -> None:
        self._shapes: dict[bytes, ShapeInfo] = {}
        self._max_shapes = max_shapes
        self.hits = 0
        self.misses = 0

    def lookup(self, message: str) -> tuple[str, ShapeInfo]:
        """The normalised message and its shape's memo."""
        if len(message) <= MAX_MESSAGE_CHARS and "\n" not in message:
            text = message.strip()  # what `truncate` does, without the call, on the common path
        else:
            text = truncate(message)
        shape = text.encode("utf-8", "surrogatepass").translate(ZERO_DIGITS)
        info = self._shapes.get(shape)
        if info is not None:
            self.hits += 1
            return (info.normalized if info.normalized is not None else apply_spans(text, info.spans)), info
        self.misses += 1
        spans = mask_spans(text)
        normalized = apply_spans(text, spans)
        constant = normalized if not any(c.isdigit() for c in normalized) else None
        info = ShapeInfo(spans, skeleton(normalized), constant)
        if len(self._shapes) >= self._max_shapes:
            self._shapes.clear()
        self._shapes[shape] = info
        return normalized, info
