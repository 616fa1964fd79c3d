"""The sequences a tally keeps compactly (`Timeline`, `Samples`) compare and show themselves as lists do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

_T = TypeVar("_T")


class ListLike(Sequence[_T]):
    """A sequence that compares with any other as a list does, shows itself as its class and items, and is
    unhashable, like a list (what a tally held as lists before it kept them compactly)."""

    __slots__ = ()  # (its subclasses keep their fields in slots: a round has one of each per signature)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"
