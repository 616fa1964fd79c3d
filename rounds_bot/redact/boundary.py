"""The redaction boundary as a source builds its events, or as a source returned them: each event redacted by
the round's `Redactor` (`event.py`) a batch at a time, and only the redacted copy kept, in the round's spill.

    boundary = Boundary(redactor)
    polled = source.poll_into(window, known, counted, boundary)    boundary(event) for each event built
    safe = boundary.finish(polled)

    safe = redact_poll(redactor, polled)                           a source that returns its events
"""

from __future__ import annotations

from rounds_bot.models import ErrorEvent
from rounds_bot.redact.engine import forget_remembered_lines
from rounds_bot.redact.event import NAME_CHARS, NOTE_CHARS, Redactor
from rounds_bot.redact.rule import REDACTED
from rounds_bot.redact.split import StreamWatch
from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord
from rounds_bot.sources.spill import EventSpill

#: events a `Boundary` redacts together (the raw events it holds at most, in memory)
BOUNDARY_BATCH = 1_000


class Boundary:
    """The redaction boundary as a source builds its events (a `sources.base.Sink`): each event is redacted
    the moment it is made, in the order made, and only the redacted copy is kept, in the round's one spill
    (in memory up to 16 MB of events, then in a temporary file): raw telemetry never reaches the disk.

        boundary = Boundary(redactor)
        polled = source.poll_into(window, known, counted, boundary)    boundary(event) for each event built
        safe = boundary.finish(polled)

    `StreamWatch` sees each raw event as it is redacted and keeps a byte of it, so the records that continue a
    secret begun earlier in their stream are found after the last event without reading any event again.

    The events are redacted a few hundred at a time (`BOUNDARY_BATCH`), in the order given: redacting many
    in a row, not a line's few between reading lines, keeps the scan's tables and the memo at hand (a tenth
    faster), and the raw events waiting meanwhile are a bounded few, in memory only."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.events = EventSpill()
        self._watch = StreamWatch()
        self._waiting: list[ErrorEvent] = []

    def __call__(self, event: ErrorEvent) -> None:
        self._waiting.append(event)
        if len(self._waiting) >= BOUNDARY_BATCH:
            self._redact_waiting()

    def _redact_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        redacted = self.redactor.events(waiting)
        self._watch.see_many(waiting, [safe.trace_id for safe in redacted])
        append = self.events.append
        for safe in redacted:
            append(safe)

    def finish(self, polled: PollResult) -> PollResult:
        """The poll with the events given to the boundary, then those it returned itself (a source that takes
        no sink returns them all), redacted, and its other parts redacted (`redacted_rest`)."""
        for event in polled.events:
            self(event)
        self._redact_waiting()
        forget_remembered_lines()  # the frames' scans helped these events; the round keeps none of them
        events, redactor = self.events, self.redactor
        for index, category in self._watch.hidden(events.keys()).items():
            redactor.counts[category] += 1
            events.replace(
                index, events[index].model_copy(update={"message": REDACTED.format(category=category)})
            )
        return redacted_rest(redactor, polled).model_copy(update={"events": events})


def redact_poll(redactor: Redactor, polled: PollResult) -> PollResult:
    """Everything a source returned, redacted: events, group counts, skipped records and notes; then the
    records that continue a secret an earlier record of their stream began (`split.py`). The way for a
    source that returns its events; one that takes a sink gives each to a `Boundary` as it builds it."""
    return Boundary(redactor).finish(polled)


def redacted_rest(redactor: Redactor, polled: PollResult) -> PollResult:
    """The poll's group counts, skipped records and notes, redacted (its events are the `Boundary`'s)."""
    text = redactor.text
    return polled.model_copy(
        update={
            "known_group_counts": [_redacted_group(redactor, group) for group in polled.known_group_counts],
            "skipped": [
                SkippedRecord(where=text(s.where, NAME_CHARS), reason=text(s.reason, NOTE_CHARS))
                for s in polled.skipped
            ],
            "notes": [text(note, NOTE_CHARS) for note in polled.notes],
        }
    )


def _redacted_group(redactor: Redactor, group: GroupCount) -> GroupCount:
    return group.model_copy(
        update={
            "source_group_id": redactor.identifier(group.source_group_id),
            "service": redactor.name(group.service) or "unknown",
        }
    )
