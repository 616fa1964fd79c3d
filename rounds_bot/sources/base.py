"""The source interface shared by every telemetry backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, Protocol, runtime_checkable

from pydantic import Field, PlainSerializer, SkipValidation

from rounds_bot.models import ErrorEvent, Frozen


class Window(Frozen):
    """The time range one round reads: [start, end)."""

    start: datetime
    end: datetime
    resume_from: datetime | None = Field(
        default=None,
        description="the previous round's cursor: everything before it was counted. Sources that return "
        "aggregated counts (no per-occurrence ids to de-duplicate the overlap) count from here instead.",
    )
    source_state: dict[str, Any] | None = Field(
        default=None,
        description="what the source kept after the previous round (SigNoz: each stream's cursor and "
        "what it counted of the minutes it re-reads); saved with the round, so a failed round keeps it",
    )


class SkippedRecord(Frozen):
    """A record the source could not use, and why; reported, never silently dropped."""

    where: str = Field(description="file:line, URL or record id")
    reason: str


class GroupCount(Frozen):
    """Counts for a backend group already mapped to a signature: no detail request needed."""

    source_group_id: str
    service: str
    count: int
    first_seen: datetime
    last_seen: datetime


class PollResult(Frozen):
    # a list, or for a file source an EventSpill (`spill.py`): a round's events need not all be in memory;
    # they are built by the source, so they are not validated again
    events: Annotated[
        Sequence[ErrorEvent], SkipValidation, PlainSerializer(list, return_type=list[ErrorEvent])
    ] = Field(default_factory=list)
    known_group_counts: list[GroupCount] = Field(default_factory=list)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="things the round report must say")
    requests: int = Field(default=0, description="HTTP requests made, for the report and benchmarks")
    already_counted: int = Field(
        default=0,
        description="records the source recognised as counted by an earlier round from the raw record (by "
        "their identity, or as older than the window's start) and so did not read further",
    )
    newest_counted: datetime | None = Field(
        default=None, description="the time of the newest of those, which the cursor may move to"
    )
    read_until: datetime | None = Field(
        default=None,
        description="where the data read really ended when the source had to stop short of the window's "
        "end; the cursor moves no further, so the next round reads the rest",
    )
    read_from: datetime | None = Field(
        default=None,
        description="where the source's reading began when earlier than the window's start (SigNoz re-reads "
        "whole minutes and counts only what it had not counted): its events are new although older",
    )
    source_state: dict[str, Any] | None = Field(
        default=None, description="what the source keeps for the next round (see Window.source_state)"
    )
    failures: list[str] = Field(
        default_factory=list,
        description="one line per part of the source that failed this round (a SigNoz stream); the "
        "others were counted, the failed part is read again next round",
    )


class Source(Protocol):
    """A telemetry backend. `name` is stable: the round keeps one cursor per name."""

    name: str

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult: ...


#: Given occurrence ids as a source builds them (before redaction), the ones an earlier round counted.
Counted = Callable[[list[str]], set[str]]
#: Takes each event a source builds, as it builds it, in the order a poll would return them: the redaction
#: boundary (`redact/boundary.py`'s `Boundary`), so a raw event is never kept, written or read back.
Sink = Callable[[ErrorEvent], None]


@runtime_checkable
class SkipsCounted(Protocol):
    """A source that recognises an occurrence already counted from its raw record, before building,
    redacting or grouping it: a quiet round over a window it has fully counted costs little more than
    reading it. Records older than the window's start count as counted too, as the round counts them."""

    name: str

    def poll_new(self, window: Window, known_group_ids: frozenset[str], counted: Counted) -> PollResult: ...


@runtime_checkable
class PollsInto(Protocol):
    """A source that skips counted records (`SkipsCounted`) and gives each event to a `Sink` the moment it
    builds it, in the order `poll_new` would return them, rather than returning them: the redaction boundary
    takes each event as it is made, so no raw event is kept or written anywhere."""

    name: str

    def poll_into(
        self, window: Window, known_group_ids: frozenset[str], counted: Counted, sink: Sink
    ) -> PollResult:
        """`poll_new`, each event given to `sink` instead of returned: the result's `events` are empty."""
        ...
