"""One poll of an OTLP/JSON file as it is read: the error records of each line offered in file order, less
those outside the window, read twice, or counted by an earlier round, which are never built.

A line read lean offers each record with the id and time its reader worked out (`offer_lean`), and the event
is built only when it is wanted (`_FromSpan`, `_log_builder`); a line an earlier round remembered is taken
whole when none of its records is wanted (`offer_read`). Whether a record was counted is asked of the
database in batches (`COUNTED_BATCH`), never once a record. Each event built goes, in file order, to the
poll's sink (the redaction boundary: a raw event is never kept), or without one to the poll's `EventSpill`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from itertools import islice

from rounds_bot.errors import SourceFormatError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import Counted, Sink, SkippedRecord
from rounds_bot.sources.id_set import IdSet
from rounds_bot.sources.line_memory import LineMemory, Read, event_id_of, micros_of, moment_of
from rounds_bot.sources.neighbours import Neighbours, Noted, context_records
from rounds_bot.sources.otlp_build import (
    SEVERITY_ERROR,
    Known,
    LogFacts,
    Origin,
    exception_event,
    log_error,
    log_known,
    moment_from_nanos,
    span_error_event,
    span_identity,
    stable_id,
)
from rounds_bot.sources.otlp_events import error_in_log_record
from rounds_bot.sources.otlp_json import LogRecord
from rounds_bot.sources.otlp_lean import (
    LeanLine,
    LeanSpan,
    checked_logs,
    log_neighbour,
    log_severity,
    origin_of,
)
from rounds_bot.sources.otlp_time_units import event_moment, span_nanos
from rounds_bot.sources.spill import EventSpill

#: Candidates asked about in one go at most (a line's are asked about together, and at its end): the counted
#: check is one database query per batch, not per record.
COUNTED_BATCH = 2_000


class Built:
    """An event already built (a line read with the models)."""

    def __init__(self, event: ErrorEvent) -> None:
        self.event = event

    def __call__(self) -> ErrorEvent:
        return self.event


class Reading:
    """The events of one poll, in file order, less those outside the window and those counted before."""

    def __init__(
        self, end: datetime, start: datetime | None, counted: Counted | None, sink: Sink | None = None
    ) -> None:
        self.end, self.start, self.counted = end, start, counted
        # the window as the records' times are compared with it: microseconds since the epoch
        self._end_micros = micros_of(end)
        self._start_micros = None if start is None else micros_of(start)
        # the events, unless a sink takes each as it is built (then none is kept here)
        self.events: EventSpill | list[ErrorEvent] = EventSpill() if sink is None else []
        self._put: Sink = self.events.append if sink is None else sink
        self.later = self.repeated = self.counted_count = 0
        self.newest_counted: datetime | None = None
        self.neighbours = Neighbours()
        # every id read, to count a repeated record once; an id is 32 hex digits (`stable_id`), kept as the
        # number it spells, most of them packed into 16 bytes (`IdSet`): a round's memory does not grow by
        # a Python object for each record it reads
        self._seen = IdSet()
        self._pending: list[tuple[str, datetime, Callable[[], ErrorEvent]]] = []
        # the records offered while a line is read lean, in order: what it gave, for the line memory
        self._trail: list[tuple[int, int]] | None = None
        # the errors of the lines remembered that an earlier round counted (`ask_ahead`), as numbers
        self._counted_ahead: set[int] = set()

    def offer(self, event_id: str, moment: datetime, micros: int, build: Callable[[], ErrorEvent]) -> None:
        """An error record, by its id and time (`micros`: the same time in microseconds since the epoch, as
        `micros_of` gives it), and how its event is built when it is wanted."""
        number = int(event_id, 16)
        trail = self._trail
        if trail is not None:
            trail.append((number, micros))
        if micros >= self._end_micros:
            self.later += 1
        elif not self._seen.first(number):  # (added to the ids read when it is the first)
            self.repeated += 1
        else:
            if self._start_micros is not None and micros < self._start_micros:
                self._count(moment)
            elif self.counted is None:
                self._put(build())
            else:
                self._pending.append((event_id, moment, build))
                if len(self._pending) >= COUNTED_BATCH:
                    self.flush()

    def ask_ahead(self, memory: LineMemory) -> None:
        """Which errors of the lines remembered are counted, asked in a few batches (not once a line): those
        in the window, the ones `offer_read` needs to know about. The database does not change while the
        file is read, so the answers are the ones a line's own question would get."""
        if self.counted is None:
            return
        end, start = micros_of(self.end), micros_of(self.start) if self.start is not None else None
        inside = (
            number
            for read in memory.reads()
            for number, moment in read.records
            if moment < end and (start is None or moment >= start)
        )
        while batch := [event_id_of(number) for number in islice(inside, COUNTED_BATCH)]:
            self._counted_ahead.update(int(event_id, 16) for event_id in self.counted(batch))

    def offer_read(self, read: Read) -> bool:
        """The error records of a line an earlier round read, offered as `offer` takes them, when none of
        them is to be built (each is later, repeated, older than the window or counted): then True, and the
        line need not be decoded. Otherwise False, and nothing was taken: the line is decoded."""
        end = micros_of(self.end)
        start = micros_of(self.start) if self.start is not None else None
        firsts: set[int] = set()
        for number, moment in read.records:
            if moment >= end or number in self._seen or number in firsts:
                continue
            firsts.add(number)
            if (start is None or moment >= start) and number not in self._counted_ahead:
                return False  # to be built
        # `offer` for each, knowing that none is built
        newest: int | None = None
        for number, moment in read.records:
            if moment >= end:
                self.later += 1
            elif number in self._seen:
                self.repeated += 1
            else:
                self._seen.add(number)
                self.counted_count += 1
                newest = moment if newest is None else max(newest, moment)
        if newest is not None:
            self.newest_counted = max(self.newest_counted or moment_of(newest), moment_of(newest))
        return True

    def flush(self) -> None:
        if not self._pending or self.counted is None:
            return
        done = self.counted([event_id for event_id, _, _ in self._pending])
        put = self._put
        if not done:  # none was counted (always so in a first round): each is built, without asking
            for _, _, build in self._pending:
                put(build())
        else:
            for event_id, moment, build in self._pending:
                if event_id in done:
                    self._count(moment)
                else:
                    put(build())
        self._pending.clear()

    def _count(self, moment: datetime) -> None:
        self.counted_count += 1
        self.newest_counted = max(self.newest_counted or moment, moment)

    def offer_lean(self, line: LeanLine, where: str, skipped: list[SkippedRecord]) -> Read | None:
        """The error records of a line read lean; a record that cannot become an event is skipped alone (and
        added to `skipped`). What the line gave, unless it had such a record (that line is read anew)."""
        self._trail = []
        neighbours = False
        # this line's own refusals, counted here rather than by `skipped`'s length: the verdict is the line's
        refused_here = 0
        for scope in line.spans:
            origin = origin_of(scope.resource, scope.scope)
            for span in scope.read:
                if span is None:
                    continue  # not an error
                refused: list[SourceFormatError] = []
                try:
                    self._offer_span(span, origin, refused)
                except SourceFormatError as exc:
                    refused.append(exc)
                if refused:
                    refused_here += len(refused)
                    span_id = span.facts.span_id or "?"
                    skipped.extend(
                        SkippedRecord(where=where, reason=f"span {span_id}: {exc}") for exc in refused
                    )
        for logs in line.logs:
            origin = origin_of(logs.resource, logs.scope)
            for record, facts in zip(logs.records, logs.read, strict=True):
                if facts is None:  # below ERROR
                    neighbours = True
                    self.neighbours.note(origin.service, *log_neighbour(record, log_severity(record)))
                    continue
                moment = facts.time_unix_nano or facts.observed_time_unix_nano
                if moment <= 0:
                    try:  # refused, as the models' reading refuses it
                        error_in_log_record(LogRecord.model_validate(record), origin)
                    except SourceFormatError as exc:
                        refused_here += 1
                        skipped.append(SkippedRecord(where=where, reason=f"log record: {exc}"))
                    continue
                try:
                    known = log_known(facts, origin)
                except SourceFormatError as exc:
                    refused_here += 1
                    skipped.append(SkippedRecord(where=where, reason=f"log record: {exc}"))
                    continue
                # the context is taken now: the record may be built later, after more records were noted
                before = self.neighbours.before(origin.service, facts.trace_id, moment)
                build = partial(_log_event, facts, origin, known, before)
                self.offer(known[0], known[1], moment // 1_000, build)
        trail, self._trail = self._trail, None
        return Read.of(trail, neighbours) if not refused_here else None

    def note_neighbours(self, raw: bytes) -> None:
        """The records below ERROR of a line whose errors were not read (`offer_read`), noted as reading it
        notes them. The line was read lean when it was remembered, and its bytes are the same: it is not
        checked again."""
        for scope in checked_logs(raw):
            service = origin_of(scope.resource, scope.scope).service
            for record in scope.records:
                severity = log_severity(record)
                if severity < SEVERITY_ERROR:
                    self.neighbours.note(service, *log_neighbour(record, severity))

    def _offer_span(self, span: LeanSpan, origin: Origin, refused: list[SourceFormatError]) -> None:
        """Offer the span's errors; one that cannot be read raises, but for one of several exception events,
        which is added to `refused` (each is a record of its own)."""
        facts, exceptions = span
        end, start = facts.end_time_unix_nano, facts.start_time_unix_nano
        trace_id, span_id = facts.trace_id, facts.span_id
        identity = (
            (trace_id, span_id)
            if trace_id and span_id
            else span_identity(trace_id, span_id, origin.service, facts.name, facts.start_time_unix_nano)
        )
        if not exceptions:
            late = span_nanos(end, start)
            timestamp = moment_from_nanos(late, "span")
            event_id = stable_id("span", *identity)
            known = (event_id, timestamp)
            self.offer(event_id, timestamp, late // 1_000, partial(span_error_event, facts, origin, known))
            return
        if len(exceptions) == 1:  # the usual span: one exception, offered without the lists below
            ((index, at, own),) = exceptions
            at = event_moment(at, index, end, start)
            timestamp = moment_from_nanos(at, "exception event")
            event_id = stable_id("span-event", *identity, str(index))
            build = partial(exception_event, facts, own, origin, (event_id, timestamp))
            self.offer(event_id, timestamp, at // 1_000, build)
            return
        # an event whose time cannot be worked out is refused alone, in the events' order, as the models'
        # reading refuses it (`otlp_events.errors_in_span`): its siblings' times may be good
        offer = self.offer
        for index, at, own in exceptions:
            try:
                at = event_moment(at, index, end, start)
                timestamp = moment_from_nanos(at, "exception event")
            except SourceFormatError as exc:
                refused.append(exc)
                continue
            event_id = stable_id("span-event", *identity, str(index))
            # each event built by a partial rather than a closure: one frame fewer when it is built
            build = partial(exception_event, facts, own, origin, (event_id, timestamp))
            offer(event_id, timestamp, at // 1_000, build)


def _log_event(record: LogFacts, origin: Origin, known: Known, before: list[Noted]) -> ErrorEvent:
    event = log_error(record, origin, known, context_records(before) if before else None)
    assert event is not None  # its severity was checked before it was offered
    return event
