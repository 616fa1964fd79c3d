"""Which traces may hold errors of two signatures or more, known in a fixed amount of memory, whatever the
number of traces: what lets a round keep only those traces' errors for the cascade step (`round/cascade.py`),
when most traces hold one error (or errors of one signature) and show no cascade.

    seen = SharedTraceFilter()
    seen.note(trace_id, signature_id)       for each error with a trace, in any order, as often as wished
    seen.may_share(trace_id)                True for every trace noted with two signatures or more

Each trace id falls in one of a fixed number of slots (by its hash); a slot keeps the one signature noted in
it, until a second signature is noted there: from then on it is "shared". A trace noted with two signatures
has made its slot shared, so `may_share` never misses one; a trace whose slot it shares with other traces may
be answered True without a cascade of its own (the caller looks at its errors, and finds none): the answer
errs only on the side of looking.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

#: slots (a power of two), 4 MB of them: a round of a million records (a few hundred thousand traces) still
#: finds most of its slots holding one signature, and the memory stays the same whatever the round reads
SLOTS = 1 << 20
#: a slot where two signatures or more were noted
_SHARED = -1
#: a slot where none was
_EMPTY = 0


class SharedTraceFilter:
    def __init__(self, slots: int | None = None) -> None:
        slots = SLOTS if slots is None else slots
        if slots <= 0 or slots & (slots - 1):
            raise ValueError(f"the slots must be a power of two, not {slots}")
        self._mask = slots - 1
        # each slot: the number of the one signature noted in it (from 1), or _EMPTY, or _SHARED
        self._slots = array("i", bytes(slots * array("i").itemsize))
        self._numbers: dict[str, int] = {}  # a signature's number: one entry per signature, not per trace

    def note(self, trace_id: str, signature_id: str) -> None:
        self.note_each([(trace_id, signature_id)])

    def note_each(self, errors: Iterable[tuple[str, str]]) -> None:
        """`note` of each (trace id, signature id), in one loop (a round notes hundreds of thousands)."""
        slots, mask, numbers = self._slots, self._mask, self._numbers
        for trace_id, signature_id in errors:
            number = numbers.get(signature_id)
            if number is None:
                number = numbers[signature_id] = len(numbers) + 1
            slot = hash(trace_id) & mask
            held = slots[slot]
            if held == _EMPTY:
                slots[slot] = number
            elif held != number:
                slots[slot] = _SHARED

    def may_share(self, trace_id: str) -> bool:
        """False only for a trace never noted with two signatures."""
        return self._slots[hash(trace_id) & self._mask] == _SHARED

    def may_share_each(self, trace_ids: Iterable[str]) -> Iterator[bool]:
        """`may_share` of each trace id, in order."""
        slots, mask = self._slots, self._mask
        return (slots[hash(trace_id) & mask] == _SHARED for trace_id in trace_ids)
