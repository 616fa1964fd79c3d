"""What one round saw of one signature: counts, time span, buckets, varied samples, where it was seen."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from rounds_bot.clock import bucket_of
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.triage import Occurrence

SAMPLES_PER_SIGNATURE = 5


@dataclass
class Tally:
    """What one round saw of one signature."""

    assignment: Assignment
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    buckets: dict[str, int] = field(default_factory=dict)
    samples: list[ErrorEvent] = field(default_factory=list)
    occurrences: list[tuple[str, str, datetime]] = field(default_factory=list)
    group_ids: set[str] = field(default_factory=set)
    services: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    timeline: list[Occurrence] = field(default_factory=list)
    # version -> (first occurrence this round, occurrences): the fix lifecycle judges recurrences by version
    by_version: dict[str, tuple[datetime, int]] = field(default_factory=dict)
    # (service, version) -> its first occurrence this round: when a release first ran (`store/versions.py`)
    service_versions: dict[tuple[str, str], datetime] = field(default_factory=dict)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> None:
        self.count += count
        self.first_seen = min(self.first_seen or first, first)
        self.last_seen = max(self.last_seen or last, last)
        self.buckets[bucket_of(last)] = self.buckets.get(bucket_of(last), 0) + count
        self.timeline.append(Occurrence(timestamp=last, count=count, fatal=event.fatal))
        self.services.add(event.service)
        if event.service_version:
            self.versions.add(event.service_version)
            earliest, seen = self.by_version.get(event.service_version, (first, 0))
            self.by_version[event.service_version] = (min(earliest, first), seen + count)
            pair = (event.service, event.service_version)
            self.service_versions[pair] = min(self.service_versions.get(pair, first), first)
        if event.environment:
            self.environments.add(event.environment)
        if event.source_group_id:
            self.group_ids.add(event.source_group_id)
        if len(self.samples) < SAMPLES_PER_SIGNATURE and self._varied(event):
            self.samples.append(event)

    def _varied(self, event: ErrorEvent) -> bool:
        """Keep samples that differ from each other: different service, version, or message."""
        return all(
            (s.service, s.service_version, s.message) != (event.service, event.service_version, event.message)
            for s in self.samples
        )
