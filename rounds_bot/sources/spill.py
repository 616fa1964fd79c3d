"""The events of one round, in the order they were read, without holding them all in memory.

A round may read a million error records; each event is a few kilobytes as an object. `EventSpill` keeps
the first events as they are while they take a few megabytes (`IN_MEMORY_BYTES`, as `held_bytes` reckons
them) and are at most `in_memory`, and past that writes them to an anonymous temporary file in compressed
chunks (`spill_chunk.py`), so a round's memory grows neither with its records nor with their size. It is
read again by iterating it (each pass decodes the chunks in order) or, for the few records a step needs out
of order, by index.

    events = EventSpill()
    events.append(event)                     many times
    for event in events: ...                 as often as needed, in order
    events[index]; events.replace(index, changed)
    events.newest                            the latest timestamp appended (None when empty)
    events.keys()                            each event's id, time and trace id, without reading it back
    events.fields("message", "service")      each event's values of a few fields, without making the events
    some = Picked(events); some.append(index)   some of them, in order, without a copy

A pass (over the events, their keys, their fields, some picked) gives what was appended before it was
asked for, as a pass over a list copied then would, even if events are appended while it runs.

Nothing in it outlives the round: the file has no name and is gone when the spill is closed or collected.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from itertools import islice
from typing import IO, Any, TypeVar, overload

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.spill_chunk import (
    BLANK_TRACE,
    Key,
    fields_of,
    key_of,
    read_events,
    read_fields,
    read_keys,
    written,
)

#: events kept as objects before the spill starts writing; a small round never touches the disk
IN_MEMORY = 20_000
#: what the events kept as objects may take (`held_bytes`) before the spill starts writing: a count alone lets
#: the first 20,000 events of a large round take 70 MB at a few kilobytes each (the peak of reading it, though
#: they go to the file a moment later), and 20,000 events with Java traces of 30 kB take 600 MB; some 4,000 of
#: a few kilobytes fit, the hundreds a small round reads many times over
IN_MEMORY_BYTES = 16 << 20
#: what an event takes as objects besides its texts' characters (`held_bytes`): the model and its fields'
#: dict, its time, ids and their strings, as measured (tracemalloc) for events read from OTLP
EVENT_BYTES = 1_536
#: what an attribute, a context record or a text takes besides its characters: its strings' headers, its slot
#: in a dict or list, a context record's model
PART_BYTES = 100
#: events written, compressed, and read back as one piece: 500 rather than 1,000, as a pass decodes a chunk
#: of them with fewer instructions and the chunk it holds is half the size; the bytes written are the
#: same (a chunk's shared values are few), and so is the cost of writing them
CHUNK = 500

_Item = TypeVar("_Item")


class _EventSequence(Sequence[ErrorEvent]):
    """Compares with any sequence of events as a list does, item by item; unhashable, like a list."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list


class EventSpill(_EventSequence):
    """An append-only sequence of events, in memory up to `in_memory` of them, then in a temporary file."""

    def __init__(
        self, events: Iterable[ErrorEvent] = (), *, in_memory: int | None = None, chunk: int | None = None
    ) -> None:
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self._chunk = max(CHUNK if chunk is None else chunk, 1)
        self._tail: list[ErrorEvent] = []  # not yet written (all of them while the spill is in memory)
        self._held = 0  # what the events in memory take, roughly (`held_bytes`), until the file is made
        self._file: IO[bytes] | None = None
        # each written chunk: its offset, then the length of its events' keys (`keys`) and of the events
        self._chunks: list[tuple[int, int, int]] = []
        self._written = 0
        self._replaced: dict[int, ErrorEvent] = {}
        self._cached: tuple[int, list[ErrorEvent]] | None = None
        self.newest: datetime | None = None
        for event in events:
            self.append(event)

    def append(self, event: ErrorEvent) -> None:
        self._tail.append(event)
        if self.newest is None or event.timestamp > self.newest:
            self.newest = event.timestamp
        if self._file is None:
            self._held += held_bytes(event)
            if len(self._tail) > self._in_memory or self._held > IN_MEMORY_BYTES:
                self._file = tempfile.TemporaryFile(prefix="rounds-events-")  # noqa: SIM115 (by close())
        if self._file is not None:
            while len(self._tail) >= self._chunk:
                self._write(self._tail[: self._chunk])
                del self._tail[: self._chunk]

    def replace(self, index: int, event: ErrorEvent) -> None:
        """The event at `index` is `event` from now on: for every pass that reads its chunk after this, and
        for a pass reading its chunk now (the chunk read last is changed in place)."""
        index = self._index(index)
        if index >= self._written:
            self._tail[index - self._written] = event
            return
        self._replaced[index] = event
        number, offset = divmod(index, self._chunk)
        if self._cached is not None and self._cached[0] == number:
            self._cached[1][offset] = event

    def __len__(self) -> int:
        return self._written + len(self._tail)

    # A pass gives the events appended before it began (when it was asked for), however many are appended
    # while it runs: its length is taken then, and an event appended since is never read, even from a chunk
    # written while it ran (which may hold events it must give: those that were in the tail when it began).

    def __iter__(self) -> Iterator[ErrorEvent]:
        return self._events(len(self))

    def _events(self, size: int) -> Iterator[ErrorEvent]:
        for number, count in self._chunks_within(size):
            events = self._read(number)
            # the whole chunk (the usual) is read as it is; a lazy cut keeps a change made in place visible
            chunk: Iterable[ErrorEvent] = events if count == len(events) else islice(events, count)
            # no event replaced (the usual): the chunk as it was read, without a look-up per event
            yield from self._with_replaced(number, chunk) if self._replaced else chunk
        yield from self._tail[: self._in_tail(size)]

    def _chunks_within(self, size: int) -> Iterator[tuple[int, int]]:
        """Each written chunk holding some of the first `size` events: its number and how many of them, the
        chunks written while the pass runs too (the count is looked at again after each chunk is read)."""
        number = 0
        while number < len(self._chunks) and (start := number * self._chunk) < size:
            yield number, min(self._chunk, size - start)
            number += 1

    def _in_tail(self, size: int) -> int:
        """How many of the first `size` events are in the tail, once every chunk holding some is read."""
        return max(size - self._written, 0)

    def _with_replaced(self, number: int, events: Iterable[ErrorEvent]) -> Iterator[ErrorEvent]:
        start, replaced = number * self._chunk, self._replaced
        for offset, event in enumerate(events):
            yield replaced.get(start + offset, event)

    def keys(self) -> Iterator[Key]:
        """Each event's id, time and trace id, in order, as a pass over the events would give them, without
        reading the events back: what a pass that only sorts them needs."""
        return self._keys(len(self))

    def _keys(self, size: int) -> Iterator[Key]:
        for number, count in self._chunks_within(size):
            start = number * self._chunk
            for offset, key in enumerate(_cut(self._read_keys(number), count)):
                replaced = self._replaced.get(start + offset)
                yield key if replaced is None else key_of(replaced)
        yield from map(key_of, self._tail[: self._in_tail(size)])

    def fields(self, *names: str) -> Iterator[tuple[Any, ...]]:
        """Each event's values of the fields `names` (of `ErrorEvent`), in order, as a pass over the events
        would give them, without making the events: what a pass that reads a few fields needs."""
        return self._fields(len(self), _checked(names))

    def _fields(self, size: int, wanted: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
        for number, count in self._chunks_within(size):
            start = number * self._chunk
            for offset, values in enumerate(_cut(self._read_fields(number, wanted), count)):
                replaced = self._replaced.get(start + offset)
                yield values if replaced is None else fields_of(replaced, wanted)
        for event in self._tail[: self._in_tail(size)]:
            yield fields_of(event, wanted)

    @overload
    def __getitem__(self, index: int) -> ErrorEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[ErrorEvent]: ...
    def __getitem__(self, index: int | slice) -> ErrorEvent | list[ErrorEvent]:
        if isinstance(index, slice):
            return list(self)[index]
        index = self._index(index)
        if index >= self._written:
            return self._tail[index - self._written]
        replaced = self._replaced.get(index)
        if replaced is not None:
            return replaced
        return self._read(index // self._chunk)[index % self._chunk]

    @property
    def bytes_on_disk(self) -> int:
        """What the events written take in the file (0 while they are all in memory)."""
        return sum(keys + length for _, keys, length in self._chunks)

    def __repr__(self) -> str:
        return f"EventSpill({len(self)} events, {self._written} written)"

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _index(self, index: int) -> int:
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("event index out of range")
        return index

    def _write(self, events: list[ErrorEvent]) -> None:
        assert self._file is not None
        keys, data = written(events)
        offset = self._file.seek(0, 2)
        self._file.write(keys)
        self._file.write(data)
        self._chunks.append((offset, len(keys), len(data)))
        self._written += len(events)
        # the chunk read last stays: a pass reading it sees an event replaced in it even if a chunk is written

    def _read(self, number: int) -> list[ErrorEvent]:
        if self._cached is not None and self._cached[0] == number:
            return self._cached[1]
        assert self._file is not None
        offset, keys, length = self._chunks[number]
        self._file.seek(offset)
        data = self._file.read(keys + length)
        events = read_events(data[:keys], data[keys:])
        self._cached = (number, events)
        return events

    def _read_fields(self, number: int, names: tuple[str, ...]) -> list[tuple[Any, ...]]:
        if self._cached is not None and self._cached[0] == number:
            return [fields_of(event, names) for event in self._cached[1]]
        assert self._file is not None
        offset, keys, length = self._chunks[number]
        self._file.seek(offset)
        data = self._file.read(keys + length)
        return read_fields(data[:keys], data[keys:], names)

    def _read_keys(self, number: int) -> list[Key]:
        assert self._file is not None
        offset, length, _ = self._chunks[number]
        self._file.seek(offset)
        return read_keys(self._file.read(length))


def held_bytes(event: ErrorEvent) -> int:
    """Roughly what `event` takes in memory as objects: `EVENT_BYTES`, its texts' characters (a byte each, as
    an ASCII string holds them) and `PART_BYTES` for each attribute and context record. Its texts are what
    varies: a redacted trace may be 64 KiB (`redact.event.STACKTRACE_CHARS`), an event may carry 200
    attributes of 4 KiB, where most events of a round take a few kilobytes in all."""
    held = EVENT_BYTES + len(event.message) + len(event.stacktrace or "")
    attributes = event.attributes
    if attributes:
        held += PART_BYTES * len(attributes)
        for key, value in attributes.items():
            held += len(key) + len(value) if type(value) is str else len(key)
    for record in event.context:
        held += PART_BYTES + len(record.body)
    return held


def _cut(items: list[_Item], count: int) -> list[_Item]:
    """The first `count` of `items`: all of them (the usual) without a copy."""
    return items if count == len(items) else items[:count]


def keys_of(events: Sequence[ErrorEvent]) -> Iterator[Key]:
    """`EventSpill.keys` of any sequence of events."""
    return events.keys() if isinstance(events, EventSpill) else map(key_of, events)


def fields_in(events: Sequence[ErrorEvent], *names: str) -> Iterator[tuple[Any, ...]]:
    """`EventSpill.fields` of any sequence of events (a spill, some of a spill picked, a list)."""
    if isinstance(events, EventSpill | Picked):
        return events.fields(*names)
    wanted = _checked(names)
    return (fields_of(event, wanted) for event in events)


def _checked(names: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [name for name in names if name not in ErrorEvent.model_fields and name != BLANK_TRACE]
    if unknown:
        raise ValueError(f"an event has no field {', '.join(unknown)}")
    return names


class Picked(_EventSequence):
    """Some events of a sequence (a spill), by their indexes in it, in its order, without a copy of them: read
    by reading the sequence (a spill's chunks are decoded as in any pass over it) and keeping those picked."""

    def __init__(self, events: Sequence[ErrorEvent], indexes: Iterable[int] = ()) -> None:
        self._events = events
        self._indexes = array("q", indexes)  # ascending: each is appended after the ones before it

    def append(self, index: int) -> None:
        """Pick the event at `index`, which comes after every one picked so far."""
        if self._indexes and index <= self._indexes[-1]:
            raise ValueError("events are picked in the order of the sequence they are picked from")
        self._indexes.append(index)

    def __len__(self) -> int:
        return len(self._indexes)

    @property
    def indexes(self) -> array[int]:
        """The indexes picked, ascending (the array itself: not to be changed)."""
        return self._indexes

    # A pass gives the events picked before it began (when it was asked for), as a pass over the sequence
    # begun then gives them: one picked, or appended to the sequence, while it runs is not read.

    def __iter__(self) -> Iterator[ErrorEvent]:
        return iter(self._events) if self._all() else self._kept(iter(self._events), self._picked())

    def fields(self, *names: str) -> Iterator[tuple[Any, ...]]:
        """`EventSpill.fields` of the events picked, in order."""
        values = fields_in(self._events, *names)
        return values if self._all() else self._kept(values, self._picked())

    def _picked(self) -> Iterator[int]:
        """The indexes picked so far, and none picked after this."""
        return islice(self._indexes, len(self._indexes))

    @staticmethod
    def _kept(items: Iterator[_Item], picked: Iterator[int]) -> Iterator[_Item]:
        """Those of `items` (one for each event of the sequence, in order) at the indexes `picked`."""
        wanted = next(picked, -1)
        if wanted < 0:
            return
        for index, item in enumerate(items):
            if index == wanted:
                yield item
                wanted = next(picked, -1)
                if wanted < 0:
                    return

    def _all(self) -> bool:
        """Every event of the sequence is picked (as in a first round): the indexes, ascending, are exactly 0
        to its length less one, so a pass over them is one over the sequence, without a test per event."""
        size = len(self._events)
        return 0 < len(self._indexes) == size and self._indexes[0] == 0 and self._indexes[-1] == size - 1

    @overload
    def __getitem__(self, index: int) -> ErrorEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[ErrorEvent]: ...
    def __getitem__(self, index: int | slice) -> ErrorEvent | list[ErrorEvent]:
        if isinstance(index, slice):
            return [self._events[i] for i in self._indexes[index]]
        return self._events[self._indexes[index]]

    def __repr__(self) -> str:
        return f"Picked({len(self)} of {len(self._events)} events)"
