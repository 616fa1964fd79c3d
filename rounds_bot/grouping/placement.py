"""Where an event went, for a caller that keeps one assignment per signature (`GroupingEngine.place_each`).

A round tallies its occurrences per signature and keeps the first one's assignment (its explanation, title
and normalised message); every later occurrence adds to the tally by its signature alone. So the engine
builds an event's assignment only when the caller may keep it: an event known by its error code or its
trace's hashes, of a signature the caller has already, is placed without one.
"""

from __future__ import annotations

from dataclasses import dataclass

from rounds_bot.models import Assignment, Tier


@dataclass(frozen=True, slots=True)
class Placement:
    """An event's signature and the tier that decided; with its full assignment unless the caller said it
    had the signature's already."""

    signature_id: str
    tier: Tier
    assignment: Assignment | None = None
