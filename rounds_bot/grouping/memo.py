"""One bounded memo for every memo of the engine: cleared whole when it holds too many entries or too many
bytes, never evicted piecemeal (an answer is either all there or worked out again, never half stale).

Each memo states what one entry holds (`size`: the bytes of its key's and value's text; a fixed
`OVERHEAD` stands for the dictionary slot and the objects; an entry holding stack frames counts each
frame's objects and text, `frames_size`, as they cost far more than their text). The estimates bound the
entries' real bytes (a test compares them with the deep size of the entries a corpus gives), so the
budgets bound memory. The budgets below add up to the most the engine's memos hold together, whatever the
input, about `ENGINE_BUDGET`: a round of a million records keeps no more than a round of a thousand.

The memos every engine shares (kept at module level: `shared_memo`) are cleared when the last engine alive
is let go (`shared_while_alive`): a round's engine is let go once the signatures' states are read, and what
the memos hold (the components of thousands of stacks) would otherwise stay for the rest of the round,
which never reads them again; an engine made later fills them again, as the first one did. A module's memo
that is a plain dict, bounded by its entries alone (`shared_dict`), is cleared with them. A round clears them
all as it lets its engine go (`forget_shared`), before it builds what the signatures save, so that reuses
their memory.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar

K = TypeVar("K")
V = TypeVar("V")

#: what an entry costs beyond its text: the dictionary slot, the key and value objects
OVERHEAD = 200
MB = 1 << 20
#: the most the budgets of an engine's memos add up to, the memos all engines share included (a test adds
#: them up)
ENGINE_BUDGET = 139 * MB
#: how many times an entry holding frames keeps each character of a frame's text, at most: the frame's
#: own strings, and the component values, serialized hash input and rendered lines made of them (measured
#: on parsed traces of several runtimes, of ASCII and wider text)
FRAME_TEXT_COPIES = 8


class FrameText(Protocol):
    """The text a stack frame holds (`stacktrace.Frame`)."""

    @property
    def function(self) -> str | None: ...
    @property
    def module(self) -> str | None: ...
    @property
    def filename(self) -> str | None: ...
    @property
    def context_line(self) -> str | None: ...


def text_size(key: object, value: object = None) -> int:
    """An entry's bytes: its text keys and values (characters count as bytes), and the overhead."""
    size = OVERHEAD
    for part in (key, value):
        if isinstance(part, (str, bytes)):
            size += len(part)
        elif isinstance(part, tuple):
            size += sum(len(item) for item in part if isinstance(item, (str, bytes)))
    return size


def frames_size(frames: Iterable[FrameText], per_frame: int) -> int:
    """The bytes an entry holds for `frames`: `per_frame` for the objects each frame's part is made of
    (measured, per memo: the frame, its components and their tuples), and its text's characters, copied
    `FRAME_TEXT_COPIES` times. Counting objects rather than characters alone is what makes an estimate bound
    the memory: a frame of a few characters still holds hundreds of bytes of objects."""
    size = 0
    for frame in frames:
        text = 0
        for part in (frame.function, frame.module, frame.filename, frame.context_line):
            if part:
                # CPython keeps ASCII text in a byte a character, any other in up to four (PEP 393)
                text += len(part) if part.isascii() else 4 * len(part)
        size += per_frame + FRAME_TEXT_COPIES * text
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


#: the memos kept at module level, which every engine shares (`shared_memo`)
_SHARED: list[BoundedMemo[Any, Any]] = []
#: the memos kept at module level as plain dicts, cleared with the shared memos (`shared_dict`)
_SHARED_DICTS: list[dict[Any, Any]] = []


def shared_memo(entries: int, budget: int, size: Callable[[K, V], int] = text_size) -> BoundedMemo[K, V]:
    """A `BoundedMemo` that every engine shares: cleared once no engine is alive (`shared_while_alive`)."""
    memo: BoundedMemo[K, V] = BoundedMemo(entries, budget, size)
    _SHARED.append(memo)
    return memo


def shared_dict(memo: dict[K, V]) -> dict[K, V]:
    """A module's memo kept as a plain dict (bounded by its own count of entries), cleared with the shared
    memos (`forget_shared`); returns `memo`."""
    _SHARED_DICTS.append(memo)
    return memo


def forget_shared() -> None:
    """Clear every memo engines share now. It changes no answer (a full memo is cleared the same way): an
    engine alive, or made later, fills them again as it reads, as the first one did."""
    for memo in _SHARED:
        memo.clear()
    for plain in _SHARED_DICTS:
        plain.clear()


class _Holders:
    """How many engines alive hold the shared memos (`shared_while_alive`)."""

    alive = 0


def shared_while_alive(engine: object) -> None:
    """Keep the shared memos while `engine` is alive: once it and every other engine given here are let
    go, they are cleared. Clearing a memo changes no answer (a full memo is cleared the same way)."""
    _Holders.alive += 1
    weakref.finalize(engine, _let_go)


def _let_go() -> None:
    _Holders.alive -= 1
    if _Holders.alive == 0:
        forget_shared()
