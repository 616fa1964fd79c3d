"""One bounded memo for every memo of the engine: cleared whole when it holds too many entries or too many
bytes, never evicted piecemeal (an answer is either all there or worked out again, never half stale).

Each memo states what one entry holds, roughly (`size`: the bytes of its key's and value's text; a fixed
`OVERHEAD` stands for the dictionary slot and the objects). The budgets below add up to the most the
engine's memos hold together, whatever the input, about `ENGINE_BUDGET`: a round of a million records
keeps no more than a round of a thousand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

#: what an entry costs beyond its text: the dictionary slot, the key and value objects
OVERHEAD = 200
MB = 1 << 20
#: the most the budgets of an engine's memos add up to, the memos all engines share included (a test adds
#: them up)
ENGINE_BUDGET = 152 * MB


def text_size(key: object, value: object = None) -> int:
    """An entry's bytes: its text keys and values (characters count as bytes), and the overhead."""
    size = OVERHEAD
    for part in (key, value):
        if isinstance(part, (str, bytes)):
            size += len(part)
        elif isinstance(part, tuple):
            size += sum(len(item) for item in part if isinstance(item, (str, bytes)))
    return size


class BoundedMemo(Generic[K, V]):
    """A dict of at most `entries` entries and about `budget` bytes (as `size` estimates them)."""

    __slots__ = ("_budget", "_data", "_entries", "_held", "_size", "get")

    #: the dict's own `get` (a lookup costs what a dict's does; clearing keeps the same dict)
    get: Callable[..., V | None]

    def __init__(self, entries: int, budget: int, size: Callable[[K, V], int] = text_size) -> None:
        self._data: dict[K, V] = {}
        self._entries = entries
        self._budget = budget
        self._size = size
        self._held = 0
        self.get = self._data.get

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def put(self, key: K, value: V) -> V:
        """Keep `value` under `key` (clearing the memo first when it is full); returns `value`."""
        size = self._size(key, value)
        if len(self._data) >= self._entries or self._held + size > self._budget:
            self.clear()
        if size <= self._budget:
            self._data[key] = value
            self._held += size
        return value

    def clear(self) -> None:
        self._data.clear()
        self._held = 0

    @property
    def held(self) -> int:
        """The bytes the entries hold, as estimated."""
        return self._held
