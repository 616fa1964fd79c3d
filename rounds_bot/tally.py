"""What one round saw of one signature: counts, time span, buckets, varied samples, where it was seen.

A round may count a million occurrences: what it keeps of each (its moment and count for triage's timeline)
is kept in compact arrays (`Timeline`), read back as the `Occurrence`s they were given as; everything else is
an aggregate or a bounded sample (the ids counted wait for the commit elsewhere: `round/counted.py`). The
samples of a signature are a few events of a few kilobytes each, and a round of many signatures keeps
thousands of them: past the first, they are kept packed, in a round in a temporary file (`Samples`).
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Protocol, TypeVar, overload

import lz4.frame

from rounds_bot.clock import BUCKET_SECONDS, bucket_of
from rounds_bot.models import Assignment, ErrorEvent, sharing_fields_set
from rounds_bot.triage import ListedFigures, Occurrence

SAMPLES_PER_SIGNATURE = 5


#: a set nothing was added to: one, shared, immutable, in place of an empty set of each tally's own (a set
#: holds room for a few items from the start, some 200 bytes, and a round may tally 20,000 signatures)
_NOTHING: frozenset[str] = frozenset()


@dataclass(slots=True)
class Tally:
    """What one round saw of one signature. Kept in slots, and a set of group ids, versions or environments
    is made when the first is added (until then the shared empty one), and the versions are `by_version`'s:
    a round keeps a tally per signature, and one of a single occurrence held 2.4 kB, mostly empty or
    one-item containers."""

    assignment: Assignment
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    buckets: dict[str, int] = field(default_factory=dict)
    samples: Samples = field(default_factory=lambda: Samples())
    group_ids: AbstractSet[str] = _NOTHING
    services: set[str] = field(default_factory=set)
    environments: AbstractSet[str] = _NOTHING
    timeline: Timeline = field(default_factory=lambda: Timeline())
    # version -> (first occurrence this round, occurrences): the fix lifecycle judges recurrences by version
    by_version: dict[str, tuple[datetime, int]] = field(default_factory=dict)
    # (service, version) -> its first occurrence this round: when a release first ran (`store/versions.py`)
    service_versions: dict[tuple[str, str], datetime] = field(default_factory=dict)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> None:
        # called once per occurrence counted: each field is read once and each aggregate looked up once
        self.count += count
        first_seen, last_seen = self.first_seen, self.last_seen
        if first_seen is None or first < first_seen:  # `min(first_seen, first)`: a tie keeps the one seen
            self.first_seen = first
        if last_seen is None or last > last_seen:
            self.last_seen = last
        micros = self.timeline.note(last, count, event.fatal)
        bucket = _bucket(last) if micros is None else _bucket_at(micros)
        buckets = self.buckets
        buckets[bucket] = buckets.get(bucket, 0) + count
        service, version = event.service, event.service_version
        self.services.add(service)
        if version:
            self._add_version(service, version, count, first)
        environment = event.environment
        if environment and environment not in self.environments:
            self.environments = _adding(self.environments, environment)
        group_id = event.source_group_id
        if group_id and group_id not in self.group_ids:
            self.group_ids = _adding(self.group_ids, group_id)
        self.samples.offer(event)

    @property
    def versions(self) -> frozenset[str]:
        """The versions seen: those `by_version` counts (each one it is given), not kept twice."""
        return frozenset(self.by_version)

    def _add_version(self, service: str, version: str, count: int, first: datetime) -> None:
        by_version = self.by_version
        before = by_version.get(version)
        if before is None:
            by_version[version] = (first, count)
        else:
            earliest, seen = before
            by_version[version] = (first if first < earliest else earliest, seen + count)
        pair = (service, version)
        ran_from = self.service_versions.get(pair)
        if ran_from is None or first < ran_from:
            self.service_versions[pair] = first


def _adding(values: AbstractSet[str], value: str) -> set[str]:
    """`values` with `value` added: the tally's own set, made now if it had none (the shared empty one)."""
    if isinstance(values, set):
        values.add(value)
        return values
    return {*values, value}


def _bucket(moment: datetime) -> str:
    """`bucket_of(moment)`: a round's occurrences fall in a few buckets, each named once."""
    epoch = int(moment.timestamp())
    return _bucket_starting(epoch - epoch % BUCKET_SECONDS)


#: moments (microseconds since the epoch) whose whole seconds `int(moment.timestamp())` reads exactly: from
#: the epoch, and below 2**33 seconds (the year 2242), where a float's step is under a microsecond's double
_EXACT_MICROS = 2**33 * 1_000_000


def _bucket_at(micros: int) -> str:
    """`_bucket` of a moment in UTC given as microseconds since the epoch (as `Timeline.note` kept it)."""
    if not 0 <= micros < _EXACT_MICROS:
        return _bucket(_EPOCH + timedelta(microseconds=micros))
    epoch = micros // 1_000_000
    return _bucket_starting(epoch - epoch % BUCKET_SECONDS)


# keyed by the bucket's start, all its name depends on: it cannot go stale; bounded, and a round's
# occurrences come in time order mostly, so the buckets in use stay in it
@lru_cache(maxsize=4_096)
def _bucket_starting(epoch: int) -> str:
    return bucket_of(datetime.fromtimestamp(epoch, UTC))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


_T = TypeVar("_T")


class _ListLike(Sequence[_T]):
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


_MICROSECOND = timedelta(microseconds=1)


class Timeline(_ListLike[Occurrence]):
    """The round's occurrences of a signature for triage, in the order counted: a moment, a count, whether
    fatal; read back as `Occurrence`s. A moment is kept as microseconds since the epoch (one not in UTC, or
    naive, is kept as it is, aside). A record is one occurrence: its count is kept only once a count is
    not 1."""

    __slots__ = ("_aside", "_counts", "_fatal", "_micros")

    def __init__(self) -> None:
        self._micros = array("q")
        self._aside: dict[int, datetime] | None = None  # made for the first moment kept aside
        self._counts: array[int] | None = None  # None while every count is 1
        self._fatal = bytearray()

    def note(self, moment: datetime, count: int, fatal: bool) -> int | None:
        """Keep one entry; the moment as it was kept, in microseconds since the epoch (None when it is
        not in UTC): what a tally reads its bucket from without reading the moment again."""
        if count != 1:
            if count < 1:  # what `Occurrence` refuses, refused as it would be
                Occurrence(timestamp=moment, count=count, fatal=fatal)
            if self._counts is None:
                self._counts = array("q", [1]) * len(self)
        micros: int | None = None
        if moment.tzinfo is UTC:
            micros = (moment - _EPOCH) // _MICROSECOND
            self._micros.append(micros)
        else:
            if self._aside is None:
                self._aside = {}
            self._aside[len(self._micros)] = moment
            self._micros.append(0)
        if self._counts is not None:
            self._counts.append(count)
        self._fatal.append(fatal)
        return micros

    def append(self, occurrence: Occurrence) -> None:
        self.note(occurrence.timestamp, occurrence.count, occurrence.fatal)

    def __len__(self) -> int:
        return len(self._fatal)

    def __iter__(self) -> Iterator[Occurrence]:
        # what indexing each in turn gives, without checking each index (triage reads every entry)
        counts, aside = self._counts, self._aside
        for index, (micros, fatal) in enumerate(zip(self._micros, self._fatal, strict=True)):
            moment = aside.get(index) if aside else None
            yield _occurrence(
                _EPOCH + timedelta(microseconds=micros) if moment is None else moment,
                1 if counts is None else counts[index],
                bool(fatal),
            )

    @overload
    def __getitem__(self, index: int) -> Occurrence: ...
    @overload
    def __getitem__(self, index: slice) -> list[Occurrence]: ...
    def __getitem__(self, index: int | slice) -> Occurrence | list[Occurrence]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("timeline index out of range")
        aside = self._aside.get(index) if self._aside else None
        return _occurrence(
            _EPOCH + timedelta(microseconds=self._micros[index]) if aside is None else aside,
            1 if self._counts is None else self._counts[index],
            bool(self._fatal[index]),
        )

    # `triage.OccurrenceFigures` read off the arrays: what `ListedFigures` of the entries gives, without an
    # `Occurrence` per entry (triage reads every signature's timeline, a round counts millions). Moments kept
    # aside (not in UTC, or naive: compared as datetimes, or refused, as they are now) take the listed path.

    def total(self) -> int:
        return len(self) if self._counts is None else sum(self._counts)

    def any_fatal(self) -> bool:
        return 1 in self._fatal

    def count_after(self, moment: datetime) -> int:
        if self._aside or moment.utcoffset() is None:
            return ListedFigures(self).count_after(moment)
        # microseconds compare as the moments do: each is a whole number of them
        limit = (moment - _EPOCH) // _MICROSECOND
        if self._counts is None:
            return sum(1 for micros in self._micros if micros > limit)
        return sum(count for micros, count in zip(self._micros, self._counts, strict=True) if micros > limit)

    def peak_count(self, window: timedelta) -> int:
        if self._aside or window < timedelta(0):
            return ListedFigures(self).peak_count(window)
        width = window // _MICROSECOND
        counts = self._counts
        # sorted by moment; the order of equal moments does not change the peak (a window holds all or none)
        if counts is None:
            return _peak(sorted(self._micros), None, width)
        ordered = sorted(zip(self._micros, counts, strict=True))
        return _peak([micros for micros, _ in ordered], [count for _, count in ordered], width)


def _peak(moments: list[int], counts: list[int] | None, width: int) -> int:
    """`triage.peak_count` over moments in order (microseconds; each counting 1 when `counts` is None): the
    most counted within `width` of the earliest counted, by two pointers."""
    best = running = start = 0
    for end, micros in enumerate(moments):
        running += 1 if counts is None else counts[end]
        while micros - moments[start] > width:
            running -= 1 if counts is None else counts[start]
            start += 1
        if running > best:
            best = running
    return best


def _occurrence(moment: datetime, count: int, fatal: bool) -> Occurrence:
    """`Occurrence.model_construct(timestamp=moment, count=count, fatal=fatal)`: the same object, put together
    as it puts one (every field given, in the fields' order; nothing validated: a timeline's entries were
    checked when they were noted), without its walk over the model's fields: a third of the cost. Triage
    reads an entry per occurrence counted."""
    occurrence = _new_occurrence(Occurrence)
    _set(occurrence, "__dict__", {"timestamp": moment, "count": count, "fatal": fatal})
    _set(occurrence, "__pydantic_fields_set__", {"timestamp", "count", "fatal"})
    _set(occurrence, "__pydantic_extra__", None)
    _set(occurrence, "__pydantic_private__", None)
    return occurrence


_new_occurrence = Occurrence.__new__
_set = object.__setattr__


class SampleKeeper(Protocol):
    """Where a round's samples past each signature's first wait (`round.spilled.SpilledBlobs`): a blob given
    is read back as it was, by the number `put` answered."""

    def put(self, blob: bytes) -> int: ...

    def get(self, number: int) -> bytes: ...


class Samples(_ListLike[ErrorEvent]):
    """A signature's samples: up to `SAMPLES_PER_SIGNATURE` events that differ from each other (another
    service, version or message), in the order offered. The first stays an object (it is the signature's
    representative, `Signature.first`, read at once), its set of given fields shared (`sharing_fields_set`).
    The others are read only if the signature is diagnosed: given a `SampleKeeper` (a round's), each is
    pickled, compressed and handed to it as it is kept, so a round's memory does not hold them (a round of
    20,000 signatures held 80 MB of them); without one, they are kept pickled and compressed once the set is
    full (similar events of one signature compress to a fifth). Either way they are read back as given."""

    __slots__ = ("_first", "_keeper", "_kept", "_kinds", "_packed", "_rest")

    def __init__(self, keeper: SampleKeeper | None = None) -> None:
        self._kinds: list[tuple[str, str | None, str]] = []  # what makes each sample differ from the others
        self._first: ErrorEvent | None = None
        self._rest: list[ErrorEvent] | None = None  # made for the second sample (without a keeper)
        self._packed: bytes | None = None
        self._keeper = keeper
        self._kept: tuple[int, ...] = ()  # the keeper's number of each sample after the first

    def offer(self, event: ErrorEvent) -> None:
        """Keep `event` if there is room and no sample is like it."""
        if len(self._kinds) >= SAMPLES_PER_SIGNATURE:
            return
        kind = (event.service, event.service_version, event.message)
        if kind in self._kinds:
            return
        self._kinds.append(kind)
        if self._first is None:
            self._first = sharing_fields_set(event)
            return
        if self._keeper is not None:
            self._kept = (*self._kept, self._keeper.put(_packed([event])))
            return
        if self._rest is None:
            self._rest = []
        self._rest.append(event)
        if len(self._kinds) == SAMPLES_PER_SIGNATURE:  # full: no sample is added any more
            self._packed = _packed(self._rest)
            self._rest = None

    def _events(self) -> list[ErrorEvent]:
        if self._first is None:
            return []
        if self._keeper is not None:
            return [self._first, *(_unpacked(self._keeper.get(number))[0] for number in self._kept)]
        if self._packed is None:
            return [self._first, *(self._rest or ())]
        return [self._first, *_unpacked(self._packed)]

    def __len__(self) -> int:
        return len(self._kinds)

    def __iter__(self) -> Iterator[ErrorEvent]:
        return iter(self._events())

    @overload
    def __getitem__(self, index: int) -> ErrorEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[ErrorEvent]: ...
    def __getitem__(self, index: int | slice) -> ErrorEvent | list[ErrorEvent]:
        if index == 0 and self._first is not None:
            return self._first
        return self._events()[index]


def _packed(events: list[ErrorEvent]) -> bytes:
    return bytes(lz4.frame.compress(pickle.dumps(events, pickle.HIGHEST_PROTOCOL)))


def _unpacked(blob: bytes) -> list[ErrorEvent]:
    events: list[ErrorEvent] = pickle.loads(lz4.frame.decompress(blob))  # packed by `_packed`, this round
    return events
