"""What one poll gathers, and the rule that turns a backend group into an event or a count.

A group already mapped to a signature (its id is in `known_group_ids`) costs nothing more: it
becomes a `GroupCount`. A new group becomes one `ErrorEvent` standing for all its occurrences in
the window, with an id that stays the same when the same window is read again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord
from rounds_bot.sources.signoz.queries import NORMALISATION_RULES
from rounds_bot.sources.signoz.times import ns_to_datetime

# re.ASCII: ClickHouse's RE2 reads \d and \b as ASCII-only, and both sides must mask alike
_COMPILED_RULES = tuple((re.compile(pattern, re.ASCII), repl) for pattern, repl in NORMALISATION_RULES)


def normalise_message(text: str) -> str:
    """The Python twin of the SQL `normalised()` expression, for rows grouped in rounds."""
    for pattern, replacement in _COMPILED_RULES:
        text = pattern.sub(replacement, text)
    return text


def derived_group_id(kind: str, *parts: str) -> str:
    """A stable group id for groups SigNoz has no id for (error spans, error logs)."""
    digest = hashlib.md5("\x1f".join(parts).encode(), usedforsecurity=False).hexdigest()
    return f"{kind}:{digest}"


def group_event_id(group_id: str, first_seen_ns: int) -> str:
    """Same group, same first occurrence in the window: the same event on every re-read."""
    prefix = "" if group_id.startswith("signoz-") else "signoz:"
    return f"{prefix}{group_id}@{first_seen_ns}"


@dataclass
class GroupSpan:
    """A group's occurrences in the window."""

    group_id: str
    service: str
    count: int
    first_seen_ns: int
    last_seen_ns: int


@dataclass
class Collector:
    known_group_ids: frozenset[str]
    events: list[ErrorEvent] = field(default_factory=list)
    known_counts: list[GroupCount] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def is_known(self, group_id: str) -> bool:
        return group_id in self.known_group_ids

    def count_known(self, group: GroupSpan) -> None:
        self.known_counts.append(
            GroupCount(
                source_group_id=group.group_id,
                service=group.service,
                count=group.count,
                first_seen=ns_to_datetime(group.first_seen_ns),
                last_seen=ns_to_datetime(group.last_seen_ns),
            )
        )

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append(SkippedRecord(where=where, reason=reason))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def result(self, requests: int) -> PollResult:
        return PollResult(
            events=self.events,
            known_group_counts=self.known_counts,
            skipped=self.skipped,
            notes=self.notes,
            requests=requests,
        )


@dataclass
class RowTally:
    """Occurrences of one group counted in rounds (the raw-row fallback), newest kept as sample."""

    count: int = 0
    first_seen_ns: int = 0
    last_seen_ns: int = 0
    sample: dict[str, object] = field(default_factory=dict)

    def add(self, timestamp_ns: int, row: dict[str, object]) -> None:
        if self.count == 0 or timestamp_ns < self.first_seen_ns:
            self.first_seen_ns = timestamp_ns
        if self.count == 0 or timestamp_ns >= self.last_seen_ns:
            self.last_seen_ns = timestamp_ns
            self.sample = row
        self.count += 1
