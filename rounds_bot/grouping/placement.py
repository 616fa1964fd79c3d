"""Where an event went, for a caller that keeps one assignment per signature (`GroupingEngine.place_each`).

A round tallies its occurrences per signature and keeps the first one's assignment (its explanation, title
and normalised message); every later occurrence adds to the tally by its signature alone. So the engine
builds an event's assignment only when the caller may keep it: an event known by its error code, its
trace's hashes or its message's route (the template it matched, `routes`), of a signature the caller has
already, is placed without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from rounds_bot.models import Assignment, AttributeValue, ErrorEvent, EventKind, Tier


@dataclass(frozen=True, slots=True)
class Placement:
    """An event's signature and the tier that decided; with its full assignment unless the caller said it
    had the signature's already."""

    signature_id: str
    tier: Tier
    assignment: Assignment | None = None


#: placements without an assignment kept for the repeats of their signatures (`KeptPlacements`)
PLACEMENTS_KEPT = 65_536


class KeptPlacements:
    """The placements without an assignment given so far: one object for all the repeats of a signature placed
    by one tier (a placement is never changed); bounded, cleared whole when full."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, Tier], Placement] = {}

    def __call__(self, signature_id: str, tier: Tier) -> Placement:
        """The placement without an assignment of a signature and tier."""
        key = (signature_id, tier)
        placed = self._kept.get(key)
        if placed is None:
            if len(self._kept) >= PLACEMENTS_KEPT:
                self._kept.clear()
            placed = self._kept[key] = Placement(signature_id, tier)
        return placed


class MessageFacts(NamedTuple):
    """What the engine's counting pass (`GroupingEngine._expect`) reads of an event: a caller whose events are
    costly to build (a spilled round) gives these fields alone, read without making the events."""

    service: str
    error_type: str | None
    kind: EventKind
    message: str
    stacktrace: str | None
    error_code: str | None
    attributes: dict[str, AttributeValue]


#: the time of an event the engine builds from a message's fields (grouping never reads it)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def event_of_message(
    message: str, service: str, error_type: str | None, environment: str | None, version: str | None
) -> ErrorEvent:
    """The event of a message given by its fields (`GroupingEngine.assign_message`)."""
    return ErrorEvent(
        event_id="message",
        timestamp=_EPOCH,
        service=service,
        kind="log",
        error_type=error_type,
        message=message,
        environment=environment,
        service_version=version,
    )
