"""What one round saw of one signature: counts, time span, buckets, varied samples, where it was seen.

A round may count a million occurrences: what it keeps of each (its moment and count for triage's timeline)
is kept in compact arrays (`Timeline`), read back as the `Occurrence`s they were given as; everything else is
an aggregate or a bounded sample (the ids counted wait for the commit elsewhere: `round/counted.py`). The
samples of a signature are a few events of a few kilobytes each, and a round of many signatures keeps
thousands of them: past the first, they are kept packed, in a round in a temporary file (`Samples`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from rounds_bot.clock import BUCKET_SECONDS, bucket_of
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.tally.assignment import PackedAssignment, packed, unpacked
from rounds_bot.tally.samples import SAMPLES_PER_SIGNATURE, SampleKeeper, Samples
from rounds_bot.tally.timeline import EPOCH, Timeline

__all__ = ["SAMPLES_PER_SIGNATURE", "SampleKeeper", "Samples", "Tally", "Timeline"]


#: a set nothing was added to: one, shared, immutable, in place of an empty set of each tally's own (a set
#: holds room for a few items from the start, some 200 bytes, and a round may tally 20,000 signatures)
_NOTHING: frozenset[str] = frozenset()

# Most of a round's signatures are seen in one service, version, environment and bucket: a set or dict of
# one item is some 200 bytes, its item 8. So a tally keeps each of its sets as the shared empty one, its one
# item itself (a string), or its own set from the second item on; and each of its mappings as nothing, its
# one entry (a tuple), or its own dict from the second key on, keys in the order first added, as the dict
# would have them. Readers get the set or dict they always did (`Tally.services`, `Tally.buckets`, ...).

#: a set of strings, as a tally keeps it: the shared empty set, its one item, or the tally's own set
_OneOrMore = str | AbstractSet[str]
#: `buckets`, as kept: nothing, (bucket, count), or bucket -> count
_Buckets = tuple[str, int] | dict[str, int] | None
#: `by_version`, as kept: nothing, (version, first, count), or version -> (first, count)
_ByVersion = tuple[str, datetime, int] | dict[str, tuple[datetime, int]] | None
#: `service_versions`, as kept: nothing, (service, version, first), or (service, version) -> first
_ServiceVersions = tuple[str, str, datetime] | dict[tuple[str, str], datetime] | None


@dataclass(slots=True, init=False)
class Tally:
    """What one round saw of one signature. Kept in slots; its sets and mappings are kept as nothing, their
    one item, or their own container from the second item on (above): a round keeps a tally per signature,
    and most hold one service, version, environment and bucket. Its assignment is kept as its values
    (`tally/assignment.py`); the versions are `by_version`'s."""

    _assignment: PackedAssignment
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    samples: Samples
    timeline: Timeline
    _buckets: _Buckets
    _services: _OneOrMore
    _environments: _OneOrMore
    _group_ids: _OneOrMore
    _by_version: _ByVersion
    _service_versions: _ServiceVersions

    def __init__(
        self,
        assignment: Assignment,
        count: int = 0,
        first_seen: datetime | None = None,
        last_seen: datetime | None = None,
        samples: Samples | None = None,
        timeline: Timeline | None = None,
    ) -> None:
        self._assignment = packed(assignment)
        self.count, self.first_seen, self.last_seen = count, first_seen, last_seen
        self.samples = Samples() if samples is None else samples
        self.timeline = Timeline() if timeline is None else timeline
        self._buckets = self._by_version = self._service_versions = None
        self._services = self._environments = self._group_ids = _NOTHING

    @property
    def assignment(self) -> Assignment:
        """Where the engine put the signature's first occurrence this round: the model the tally was given,
        put together again from its values (`tally/assignment.py`)."""
        return unpacked(self._assignment)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> int | None:
        """Count `event` (`count` occurrences from `first` to `last`); returns `last` in microseconds since
        the epoch as the timeline keeps it (None when it is not in UTC), for a round's other records of the
        occurrence (`Counted.append_at`, `TraceErrors.add`) to take rather than work it out again."""
        # called once per occurrence counted: each field is read once and each aggregate looked up once
        self.count += count
        first_seen, last_seen = self.first_seen, self.last_seen
        if first_seen is None or first < first_seen:  # `min(first_seen, first)`: a tie keeps the one seen
            self.first_seen = first
        if last_seen is None or last > last_seen:
            self.last_seen = last
        micros = self.timeline.note(last, count, event.fatal)
        if micros is not None and 0 <= micros < _EXACT_MICROS:  # `_bucket_at`, without the call
            epoch = micros // 1_000_000
            bucket = _bucket_starting(epoch - epoch % BUCKET_SECONDS)
        else:
            bucket = _bucket(last) if micros is None else _bucket_at(micros)
        buckets = self._buckets  # (each container's cases inline: this runs once per occurrence counted)
        if isinstance(buckets, dict):
            buckets[bucket] = buckets.get(bucket, 0) + count
        elif buckets is None:
            self._buckets = (bucket, count)
        elif buckets[0] == bucket:
            self._buckets = (buckets[0], buckets[1] + count)
        else:
            self._buckets = {buckets[0]: buckets[1], bucket: count}
        service, version = event.service, event.service_version
        # each set is a string (equal when it is the one item), the shared empty set, or the tally's own
        services = self._services
        if service != services and (isinstance(services, str) or service not in services):
            self._services = _adding(services, service)
        if version:
            self._add_version(service, version, count, first)
        environment, environments = event.environment, self._environments
        if (
            environment
            and environment != environments
            and (isinstance(environments, str) or environment not in environments)
        ):
            self._environments = _adding(environments, environment)
        group_id, group_ids = event.source_group_id, self._group_ids
        if group_id and group_id != group_ids and (isinstance(group_ids, str) or group_id not in group_ids):
            self._group_ids = _adding(group_ids, group_id)
        self.samples.offer(event)
        return micros

    @property
    def services(self) -> AbstractSet[str]:
        """The services seen (a set or frozenset: what `|` with a set needs)."""
        return _set_of(self._services)

    @property
    def environments(self) -> AbstractSet[str]:
        return _set_of(self._environments)

    @property
    def group_ids(self) -> AbstractSet[str]:
        return _set_of(self._group_ids)

    @property
    def buckets(self) -> dict[str, int]:
        """Occurrences counted in each bucket (`clock.bucket_of`), the buckets in the order first seen."""
        buckets = self._buckets
        if isinstance(buckets, tuple):
            bucket, count = buckets
            return {bucket: count}
        return {} if buckets is None else buckets

    @property
    def by_version(self) -> dict[str, tuple[datetime, int]]:
        """version -> (first occurrence this round, occurrences): the fix lifecycle judges recurrences by
        version."""
        by_version = self._by_version
        if isinstance(by_version, tuple):
            version, first, count = by_version
            return {version: (first, count)}
        return {} if by_version is None else by_version

    @property
    def service_versions(self) -> dict[tuple[str, str], datetime]:
        """(service, version) -> its first occurrence this round: when a release first ran
        (`store/versions.py`)."""
        pairs = self._service_versions
        if isinstance(pairs, tuple):
            service, version, first = pairs
            return {(service, version): first}
        return {} if pairs is None else pairs

    @property
    def versions(self) -> frozenset[str]:
        """The versions seen: those `by_version` counts (each one it is given), not kept twice."""
        return frozenset(self.by_version)

    def _add_version(self, service: str, version: str, count: int, first: datetime) -> None:
        # each the running `min` of a dict's value, a tie keeping the earlier; a tuple while it has one key
        by_version = self._by_version
        if isinstance(by_version, dict):
            before = by_version.get(version)
            if before is None:
                by_version[version] = (first, count)
            else:
                earliest, seen = before
                by_version[version] = (first if first < earliest else earliest, seen + count)
        elif by_version is None:
            self._by_version = (version, first, count)
        elif by_version[0] == version:
            known, earliest, seen = by_version
            self._by_version = (known, first if first < earliest else earliest, seen + count)
        else:
            known, earliest, seen = by_version
            self._by_version = {known: (earliest, seen), version: (first, count)}
        pairs = self._service_versions
        if isinstance(pairs, dict):
            pair = (service, version)
            ran_from = pairs.get(pair)
            if ran_from is None or first < ran_from:
                pairs[pair] = first
        elif pairs is None:
            self._service_versions = (service, version, first)
        elif pairs[0] == service and pairs[1] == version:
            if first < pairs[2]:
                self._service_versions = (pairs[0], pairs[1], first)
        else:
            self._service_versions = {(pairs[0], pairs[1]): pairs[2], (service, version): first}


def _set_of(values: _OneOrMore) -> AbstractSet[str]:
    """The set a tally keeps as `values`: one item kept alone is read as a frozenset of it."""
    return frozenset((values,)) if isinstance(values, str) else values


def _adding(values: _OneOrMore, value: str) -> _OneOrMore:
    """`values` with `value` added: the item alone while it is the first, then the tally's own set."""
    if isinstance(values, str):
        return values if values == value else {values, value}
    if isinstance(values, set):
        values.add(value)
        return values
    return value if not values else {*values, value}


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
        return _bucket(EPOCH + timedelta(microseconds=micros))
    epoch = micros // 1_000_000
    return _bucket_starting(epoch - epoch % BUCKET_SECONDS)


# keyed by the bucket's start, all its name depends on: it cannot go stale; bounded, and a round's
# occurrences come in time order mostly, so the buckets in use stay in it
@lru_cache(maxsize=4_096)
def _bucket_starting(epoch: int) -> str:
    return bucket_of(datetime.fromtimestamp(epoch, UTC))
