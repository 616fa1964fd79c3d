"""One bounded memo for every memo of the engine: cleared whole when it holds too many entries or too many
bytes, never evicted piecemeal (an answer is either all there or worked out again, never half stale).

Each memo states what one entry holds (`size`: the bytes of its key's and value's text; a fixed
`OVERHEAD` stands for the dictionary slot and the objects; an entry holding stack frames counts each
frame's objects and text, as they cost far more than their text). Entries that hold the same frames and
the components made of them (the parse, the reading, the candidate and the stacks of traces that share a
framework's or a test runner's frames) are kept in a `SharingMemo`, which charges each shared object once
while it holds it (`Ledger`, `shared_costs`): charged per entry, 4,000 Java traces were estimated at 16 times
what the memos held, and the memos were cleared a hundred times. The estimates bound the memos' real bytes
(a test compares each memo's estimate with the deep size of everything it holds, when it is fullest), so the
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
ENGINE_BUDGET = 147 * MB
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


def text_bytes(text: str | None) -> int:
    """A string's characters as CPython keeps them: a byte each for ASCII, up to four otherwise (PEP 393)."""
    if not text:
        return 0
    return len(text) if text.isascii() else 4 * len(text)


def frame_text(frame: FrameText) -> int:
    """The bytes of a frame's text."""
    return (
        text_bytes(frame.function)
        + text_bytes(frame.module)
        + text_bytes(frame.filename)
        + text_bytes(frame.context_line)
    )


def frames_size(frames: Iterable[FrameText], per_frame: int) -> int:
    """The bytes an entry holds for `frames` when no other entry holds them (a frame's component, one entry a
    frame): `per_frame` for the objects each frame's part is made of (measured: the frame, its components and
    their tuples), and its text's characters, copied `FRAME_TEXT_COPIES` times. Counting objects rather than
    characters alone is what makes an estimate bound the memory: a frame of a few characters still holds
    hundreds of bytes of objects. Entries that share frames charge them once (`SharingMemo`)."""
    return sum(per_frame + FRAME_TEXT_COPIES * frame_text(frame) for frame in frames)


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


class Ledger:
    """The objects a memo's entries share (frames, the components made of them: `shared_costs`), each
    charged once while the memo holds it. An object charged is held by an entry the memo keeps, so its id
    names it until the memo is cleared (`SharingMemo` forgets the ids of an entry it does not keep)."""

    __slots__ = ("_charged", "_new")

    def __init__(self) -> None:
        self._charged: set[int] = set()
        self._new: list[int] = []

    def once(self, shared: object, cost: int) -> int:
        """`cost` the first time `shared` is met while the memo holds it, else nothing."""
        key = id(shared)
        if key in self._charged:
            return 0
        self._charged.add(key)
        self._new.append(key)
        return cost

    def keep(self) -> None:
        """The entry just sized is kept: what it was charged for stays charged."""
        self._new.clear()

    def forget_new(self) -> None:
        """The entry just sized is not kept: nothing holds what only it was charged for."""
        self._charged.difference_update(self._new)
        self._new.clear()

    def clear(self) -> None:
        self._charged.clear()
        self._new.clear()


class SharingMemo(BoundedMemo[K, V]):
    """A `BoundedMemo` whose entries share objects: `size(key, value, ledger)` charges an entry for what it
    alone holds, and for a shared object through the ledger (only when no entry kept has paid for it)."""

    __slots__ = ("_ledger", "_sized")

    def __init__(self, entries: int, budget: int, size: Callable[[K, V, Ledger], int]) -> None:
        super().__init__(entries, budget)
        self._ledger = Ledger()
        self._sized = size

    def put(self, key: K, value: V) -> V:
        if key in self._data:
            # kept as it is: the key object the dict keeps and what the entry holds stay, so what was charged
            # for them stays true (a replaced entry could free objects the ledger still names)
            return value
        size = self._sized(key, value, self._ledger)
        if len(self._data) >= self._entries or self._held + size > self._budget:
            self.clear()
            size = self._sized(key, value, self._ledger)  # nothing is paid for in an empty memo
        if size <= self._budget:
            self._data[key] = value
            self._held += size
            self._ledger.keep()
        else:
            self._ledger.forget_new()
        return value

    def grew(self, key: K, value: V, size: Callable[[Ledger], int]) -> None:
        """The entry kept under `key`, `value`, holds more than when it was put (`size` charges what it
        gained, through the ledger): it is counted, and the memo cleared when that takes it over its budget.
        An entry the memo no longer holds is not counted."""
        if self._data.get(key, _ABSENT) is not value:
            return
        self._held += size(self._ledger)
        self._ledger.keep()
        if self._held > self._budget:
            self.clear()

    def clear(self) -> None:
        super().clear()
        self._ledger.clear()


#: no entry (`SharingMemo.grew`: a kept value may be None)
_ABSENT = object()


#: the memos kept at module level, which every engine shares (`shared_memo`)
_SHARED: list[BoundedMemo[Any, Any]] = []
#: the memos kept at module level as plain dicts, cleared with the shared memos (`shared_dict`)
_SHARED_DICTS: list[dict[Any, Any]] = []


def shared_memo(entries: int, budget: int, size: Callable[[K, V], int] = text_size) -> BoundedMemo[K, V]:
    """A `BoundedMemo` that every engine shares: cleared once no engine is alive (`shared_while_alive`)."""
    return _shared(BoundedMemo(entries, budget, size))


def shared_sharing_memo(entries: int, budget: int, size: Callable[[K, V, Ledger], int]) -> SharingMemo[K, V]:
    """A `SharingMemo` that every engine shares, as `shared_memo`."""
    return _shared(SharingMemo(entries, budget, size))


M = TypeVar("M", bound=BoundedMemo[Any, Any])


def _shared(memo: M) -> M:
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
