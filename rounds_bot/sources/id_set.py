"""An exact set of the ids a round has read, growing by 16 bytes an id rather than by a Python object.

A round reads every record of its window once and must know, for each, whether its id came before (a record
the exporter wrote twice, a window read again): a million ids in a Python set are a million int objects and
their table, about 80 bytes each. Here the latest `RECENT` ids are such a set; past that they are packed,
a batch at a time, each 128-bit number as two 64-bit halves in sorted arrays (`array`, 16 bytes an id),
and a fixed-size filter over the packed ones (`FILTER_BITS`, two bits an id, as a Bloom filter sets them)
answers "never added" for almost every new id without searching the arrays:

    ids = IdSet()
    ids.first(key)          True when `key` was not in the set (it is now), False when it was
    key in ids; ids.add(key)

A key is an id of 32 hex digits as the number it spells (`int(id, 16)`), or any other id as its text; keys
are equal as a set's are. Only numbers below 2**128 are packed; any other key stays in a plain set. The
filter can only say "maybe": a key whose two bits are set is looked for in the arrays, so the answer is
exact whatever the ids are (ids made to share filter bits cost a search each, never a wrong answer).
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import repeat
from typing import TypeGuard

#: ids kept as Python objects before they are packed (some 1.5 MiB of them: the set's table and an int of
#: 128 bits each): a round this small packs none. A quarter of the 65,536 once kept: each batch packed is one
#: more pair of arrays that an id the filter cannot rule out is looked for in (one in 250 new ids at a
#: million, and each repeated record), and 4 MiB less is held by every set a round keeps while it reads
RECENT = 16_384
#: bits of the filter over the packed ids (4 MiB, made when the first ids are packed): with a million ids
#: packed, about one new id in 250 has both its bits set and is looked for in the arrays
FILTER_BITS = 1 << 25
_MASK = FILTER_BITS - 1
_SECOND = 25  # where the second bit's index starts in an id's hash (`_bits_of`)
_LIMIT = 1 << 128
_HALF = (1 << 64) - 1


class IdSet:
    """An exact set of ids (numbers below 2**128 and texts), most of them packed; see the module."""

    def __init__(self, keys: Iterable[int | str] = (), *, recent: int | None = None) -> None:
        self._recent_limit = max(RECENT if recent is None else recent, 1)
        self._recent: set[int | str] = set()
        self._unpacked: set[int | str] = set()  # keys that are not numbers below 2**128, once packing began
        # each batch packed: the high halves of its ids, ascending, and the low halves beside them
        self._runs: list[tuple[array[int], array[int]]] = []
        self._bits = bytearray()  # the filter, once some are packed
        for key in keys:
            self.add(key)

    def __len__(self) -> int:
        return len(self._recent) + len(self._unpacked) + self.packed

    @property
    def packed(self) -> int:
        """How many ids are packed (the others are Python objects)."""
        return sum(len(highs) for highs, _ in self._runs)

    def __contains__(self, key: object) -> bool:
        if key in self._recent or (self._unpacked and key in self._unpacked):
            return True
        return bool(self._runs) and _packable(key) and self._in_runs(key)

    def first(self, key: int | str) -> bool:
        """Whether `key` was not in the set: then it is added (the check and the addition in one)."""
        # `__contains__` written out: this runs once for every record a round reads
        recent = self._recent
        if key in recent or (self._unpacked and key in self._unpacked):
            return False
        if self._bits:
            at = hash(key)  # `_bits_of`
            one, two = at & _MASK, at >> _SECOND & _MASK
            bits = self._bits
            if bits[one >> 3] >> (one & 7) & bits[two >> 3] >> (two & 7) & 1 and self._in_runs(key):
                return False
            # its bits set now, while they are at hand: it will be packed with them set (`_note`)
            bits[one >> 3] |= 1 << (one & 7)
            bits[two >> 3] |= 1 << (two & 7)
        recent.add(key)
        if len(recent) >= self._recent_limit:
            self._pack()
        return True

    def add(self, key: int | str) -> None:
        self.first(key)

    def _in_runs(self, key: object) -> bool:
        """Whether `key` is packed: looked for in each batch's arrays when both its filter bits are set."""
        if not _packable(key):
            return False
        bits = self._bits
        if not all(bits[at >> 3] >> (at & 7) & 1 for at in _bits_of(key)):
            return False
        high, low = key >> 64, key & _HALF
        for highs, lows in self._runs:
            at = bisect_left(highs, high)
            while at < len(highs) and highs[at] == high:
                if lows[at] == low:
                    return True
                at += 1
        return False

    def _pack(self) -> None:
        """The recent ids into a batch of sorted arrays (numbers) or kept as they are (any other key)."""
        recent, self._recent = self._recent, set()
        try:  # the usual: every key a number below 2**128 (`to_bytes` refuses any other)
            numbers = sorted(recent)
            raw = b"".join(map(int.to_bytes, numbers, repeat(16), repeat("big")))  # type: ignore[arg-type]
        except (TypeError, OverflowError):
            self._unpacked.update(key for key in recent if not _packable(key))
            numbers = sorted(key for key in recent if _packable(key))
            raw = b"".join(map(int.to_bytes, numbers, repeat(16), repeat("big")))  # type: ignore[arg-type]
        if not numbers:
            return
        if not self._bits:  # the first batch: the bits of those added later are set as they are added
            self._note(numbers)  # type: ignore[arg-type]
        # each id as its 16 big-endian bytes, read back as 64-bit halves (high, low, high, low ...)
        halves = array("Q")  # (an unsigned long long: 64 bits on every platform Python runs on)
        halves.frombytes(raw)
        if sys.byteorder == "little":  # (the usual)
            halves.byteswap()
        self._runs.append((halves[0::2], halves[1::2]))

    def _note(self, numbers: list[int]) -> None:
        """The filter made, with the two bits of each id of `numbers` set."""
        bits = self._bits = bytearray(FILTER_BITS // 8)
        for number in numbers:
            at = hash(number)
            one, two = at & _MASK, at >> _SECOND & _MASK
            bits[one >> 3] |= 1 << (one & 7)
            bits[two >> 3] |= 1 << (two & 7)


def _packable(key: object) -> TypeGuard[int]:
    # (a bool is the number it equals, as a set takes it)
    return isinstance(key, int) and 0 <= key < _LIMIT


def _bits_of(number: int) -> tuple[int, int]:
    """The filter's two bits of a packed id, from Python's hash of the number: its remainder modulo
    2**61 - 1, which every bit of the id changes (an id's low bits alone would put ids that differ only in
    their high bits, as time-based UUIDs of one host do, on the same bits)."""
    at = hash(number)
    return at & _MASK, at >> _SECOND & _MASK
