"""A signature's occurrences this round, in compact arrays: what triage reads of each (`Timeline`)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import overload

from rounds_bot.models import assembled
from rounds_bot.tally.list_like import ListLike
from rounds_bot.triage import ListedFigures, Occurrence

#: where a timeline's moments are counted from
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_MICROSECOND = timedelta(microseconds=1)


class Timeline(ListLike[Occurrence]):
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
            micros = (moment - EPOCH) // _MICROSECOND
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
                EPOCH + timedelta(microseconds=micros) if moment is None else moment,
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
            EPOCH + timedelta(microseconds=self._micros[index]) if aside is None else aside,
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
        limit = (moment - EPOCH) // _MICROSECOND
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
    return assembled(
        Occurrence, {"timestamp": moment, "count": count, "fatal": fatal}, {"timestamp", "count", "fatal"}
    )
