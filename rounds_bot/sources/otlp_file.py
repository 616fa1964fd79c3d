"""The `otlp-file:PATH` source: errors from OTLP/JSON lines, as the OpenTelemetry Collector's
file exporter writes them (one ExportTraceServiceRequest or ExportLogsServiceRequest per line).

What counts as an error:
- a span event named `exception` (kind "exception"), read from its `exception.*` attributes;
- a span whose status is ERROR (code 2) and that carries no exception event (kind "span_error"),
  with the status message as its message, or the span name when the status says nothing;
- a log record of severity ERROR or above (severityNumber >= 17; FATAL is 21-24), kind "log",
  its `exception.*` attributes read like a span event's. A record with no severityNumber is
  judged by its severityText, as some log bridges only write that.

Everything else (OK spans, INFO and WARN logs, other span events) is not an error and is skipped
silently; but the last few log records below ERROR of each trace and service are kept while reading
(`neighbours.py`), and an error log carries those logged in the minute before it as its context.

Event ids are hashes of what identifies the record in OTLP (trace id, span id, event
index; for logs their times, body and attributes), so reading a file again yields the same ids.
The file holds history: `poll` returns every error before the window's end, and the round
counts each event id once.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from rounds_bot.errors import SourceError, SourceFormatError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import Counted, PollResult, SkippedRecord, Window
from rounds_bot.sources.line_memory import (
    Deferred,
    LineMemory,
    Read,
    digest_of,
    event_id_of,
    micros_of,
    moment_of,
)
from rounds_bot.sources.neighbours import Neighbours, Noted, context_records
from rounds_bot.sources.otlp_events import (
    SEVERITY_ERROR,
    Known,
    LogFacts,
    Origin,
    SpanFacts,
    error_in_log_record,
    errors_in_export_line,
    exception_event,
    log_error,
    log_event_id,
    moment_from_nanos,
    span_error_event,
    stable_id,
)
from rounds_bot.sources.otlp_json import (
    ExportLine,
    LogRecord,
    int64,
    parse_export_line,
)
from rounds_bot.sources.otlp_lean import (
    LeanLine,
    checked_logs,
    exception_indexes,
    flatten_plain,
    lean_line,
    log_moment,
    log_neighbour,
    log_severity,
    span_ids,
    span_is_error,
    span_moment,
    span_moment_start,
)
from rounds_bot.sources.spill import EventSpill


class OtlpFileSource:
    """Reads errors from one OTLP/JSON file; `name` (the round's cursor key) is its spec."""

    def __init__(self, path: Path | str, *, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or f"otlp-file:{path}"

    def poll(self, window: Window, known_group_ids: frozenset[str] = frozenset()) -> PollResult:
        """Every error in the file before `window.end`; malformed lines are skipped and listed.

        `known_group_ids` is unused: a file has no backend groups to count.
        """
        return self._read(window, None)

    def poll_new(self, window: Window, known_group_ids: frozenset[str], counted: Counted) -> PollResult:
        """Like `poll`, without the errors an earlier round counted: those older than the window's start
        and those `counted` names. They are recognised from the raw record, never built or validated."""
        return self._read(window, counted)

    def _read(self, window: Window, counted: Counted | None) -> PollResult:
        end = window.end if window.end.tzinfo else window.end.replace(tzinfo=UTC)
        start = window.start if window.start.tzinfo else window.start.replace(tzinfo=UTC)
        skipped: list[SkippedRecord] = []
        reading = _Reading(end, start if counted is not None else None, counted)
        memory = LineMemory.restore(window.source_state)
        reading.ask_ahead(memory)
        with Deferred(self.path, gzipped=self._gzipped()) as deferred:
            for where, place, line in self._export_lines(skipped, memory):
                if isinstance(line, Read):
                    if reading.offer_read(line):
                        # every error record of the line was counted, or is left for later: not decoded
                        memory.keep(place.digest, line)
                        if line.neighbours:
                            deferred.add(place.offset, place.length)
                        continue
                    line = _decoded(place.raw)
                if deferred and _has_logs(line):
                    for raw in deferred.take():  # the neighbours of the lines not decoded, in file order
                        reading.note_neighbours(raw)
                if isinstance(line, LeanLine):
                    read = reading.offer_lean(line, where, skipped)
                    if read is not None:
                        memory.keep(place.digest, read)
                else:
                    line_events, line_skipped = errors_in_export_line(line, where, reading.neighbours)
                    skipped.extend(line_skipped)
                    for event in line_events:
                        reading.offer(event.event_id, event.timestamp, _Built(event))
                # asked about once a line: what waits for the answer holds the line's records, which are let
                # go as soon as it comes (a batch of many lines kept them all alive, at a cost in memory and
                # time)
                reading.flush()
        return PollResult(
            events=reading.events,
            skipped=skipped,
            notes=_notes(self.path, end, reading.later, reading.repeated),
            already_counted=reading.counted_count,
            newest_counted=reading.newest_counted,
            source_state=memory.state(),
        )

    def _export_lines(
        self, skipped: list[SkippedRecord], memory: LineMemory
    ) -> Iterator[tuple[str, _Place, LeanLine | ExportLine | Read]]:
        """Each line that is an export request: what an earlier round read of it when it is remembered, else
        the line read lean when it plainly can be, else read with the models; the others are listed as
        skipped. A file none of whose lines is one is not OTLP/JSON: that is said once (SourceError), not
        once per line."""
        good = 0
        for number, offset, raw in self._raw_lines():
            if number == 1 and raw.startswith(UTF8_BOM):
                raw, offset = raw[len(UTF8_BOM) :], offset + len(UTF8_BOM)
            if not raw.strip():
                continue
            where = f"{self.path}:{number}"
            place = _Place(raw, offset, digest_of(raw))
            read = memory.recall(place.digest)
            if read is not None:
                good += 1
                yield where, place, read
                continue
            lean = lean_line(raw)
            if lean is not None:
                good += 1
                yield where, place, lean
                continue
            try:
                line = parse_export_line(raw)
            except SourceFormatError as exc:
                skipped.append(SkippedRecord(where=where, reason=str(exc)))
                if not good and len(skipped) >= NOT_OTLP_AFTER:
                    raise _not_otlp(self.path, skipped[0].reason) from None
                continue
            good += 1
            yield where, place, line
        if skipped and not good:
            raise _not_otlp(self.path, skipped[0].reason)

    def _gzipped(self) -> bool:
        try:
            with self.path.open("rb") as probe:
                return probe.read(len(GZIP_MAGIC)) == GZIP_MAGIC
        except OSError:
            return False  # `_raw_lines` says what is wrong with the file

    def _raw_lines(self) -> Iterator[tuple[int, int, bytes]]:
        """Each line with its number and where it begins (in the uncompressed text)."""
        try:
            with self.path.open("rb") as probe:
                head = probe.read(_PROBE_BYTES)
            opener = gzip.open if head.startswith(GZIP_MAGIC) else open
            if opener is gzip.open:
                with gzip.open(self.path, "rb") as handle:
                    head = handle.read(_PROBE_BYTES)
            if _binary(head):
                raise _not_otlp(self.path, "it holds binary data (NUL bytes or bytes that are not UTF-8)")
            with opener(self.path, "rb") as handle:
                offset = 0
                for number, raw in enumerate(handle, start=1):
                    yield number, offset, raw
                    offset += len(raw)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile):
                raise _unreadable(self.path, exc) from exc
            raise _not_otlp(self.path, f"it is a damaged gzip file ({exc})") from exc


@dataclass(frozen=True)
class _Place:
    """A line's bytes, where it begins in the file, and its digest (`line_memory.digest_of`)."""

    raw: bytes
    offset: int
    digest: str

    @property
    def length(self) -> int:
        return len(self.raw)


def _decoded(raw: bytes) -> LeanLine | ExportLine:
    """A line remembered from an earlier round, decoded after all: it was read lean then, and its bytes are
    the same, so it is read lean again."""
    return lean_line(raw) or parse_export_line(raw)


def _has_logs(line: LeanLine | ExportLine) -> bool:
    return bool(line.logs) if isinstance(line, LeanLine) else bool(line.resource_logs)


UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
_PROBE_BYTES = 65_536
#: This many malformed lines before the first good one: the file is not OTLP/JSON, and that is said once.
NOT_OTLP_AFTER = 20


def _binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start < len(head) - 4  # a character cut at the probe's end is not binary
    return False


def _not_otlp(path: Path, why: str) -> SourceError:
    return SourceError(
        f"{path} is not OTLP/JSON: {why}",
        hint="give otlp-file:PATH the file the OpenTelemetry Collector's file exporter writes "
        "(JSON, one export request per line; a .gz of it is read too)",
    )


def _unreadable(path: Path, error: OSError) -> SourceError:
    fix = (
        "give otlp-file:PATH (ROUNDS_SOURCE) the file that the OpenTelemetry Collector's file "
        "exporter writes (its `path` setting)"
    )
    if isinstance(error, FileNotFoundError):
        return SourceError(f"OTLP file {path} does not exist", hint=fix)
    if isinstance(error, IsADirectoryError):
        return SourceError(f"OTLP file {path} is a directory, not a file", hint=fix)
    if isinstance(error, PermissionError):
        return SourceError(
            f"OTLP file {path} cannot be read: permission denied",
            hint="make it readable by the user that runs rounds",
        )
    return SourceError(f"OTLP file {path} cannot be read: {error.strerror or error}", hint=fix)


def _notes(path: Path, end: datetime, later: int, repeated: int) -> list[str]:
    notes = []
    if later:
        notes.append(
            f"{later} error(s) in {path} at or after the window's end ({end.isoformat()}) "
            "were left for a later round"
        )
    if repeated:
        notes.append(f"{repeated} error record(s) repeated in {path} were counted once")
    return notes


# --- reading lean, and leaving out what was counted -------------------------------------------

#: Candidates asked about in one go at most (a line's are asked about together, and at its end): the counted
#: check is one database query per batch, not per record.
COUNTED_BATCH = 2_000


class _Built:
    """An event already built (a line read with the models)."""

    def __init__(self, event: ErrorEvent) -> None:
        self.event = event

    def __call__(self) -> ErrorEvent:
        return self.event


class _FromSpan:
    """The error events of one span, built from its plain record only when one of them is wanted."""

    def __init__(self, span: dict[str, Any], origin: Origin) -> None:
        self.plain, self.origin = span, origin
        self._span: SpanFacts | None = None

    def event(self, index: int | None, known: Known) -> Callable[[], ErrorEvent]:
        """The error of the span's exception event `index` (None: of its error status), whose id and time
        `offer` was given."""
        return lambda: self._build(index, known)

    def _build(self, index: int | None, known: Known) -> ErrorEvent:
        if self._span is None:
            self._span = SpanFacts.of_lean(self.plain)
        if index is None:
            return span_error_event(self._span, self.origin, known)
        event = self.plain["events"][index]
        own = flatten_plain(event.get("attributes", []))
        moment = int64(event.get("timeUnixNano", 0))
        return exception_event(self._span, index, moment, own, self.origin, known)


class _Reading:
    """The events of one poll, in file order, less those outside the window and those counted before."""

    def __init__(self, end: datetime, start: datetime | None, counted: Counted | None) -> None:
        self.end, self.start, self.counted = end, start, counted
        self.events = EventSpill()
        self.later = self.repeated = self.counted_count = 0
        self.newest_counted: datetime | None = None
        self.neighbours = Neighbours()
        # every id read, to count a repeated record once; an id is 32 hex digits (`stable_id`), kept as the
        # number it spells, which takes half the memory of the text
        self._seen: set[int] = set()
        self._pending: list[tuple[str, datetime, Callable[[], ErrorEvent]]] = []
        # the records offered while a line is read lean, in order: what it gave, for the line memory
        self._trail: list[tuple[int, datetime]] | None = None
        # the errors of the lines remembered that an earlier round counted (`ask_ahead`), as numbers
        self._counted_ahead: set[int] = set()

    def offer(self, event_id: str, moment: datetime, build: Callable[[], ErrorEvent]) -> None:
        number = int(event_id, 16)
        if self._trail is not None:
            self._trail.append((number, moment))
        if moment >= self.end:
            self.later += 1
        elif number in self._seen:
            self.repeated += 1
        else:
            self._seen.add(number)
            if self.start is not None and moment < self.start:
                self._count(moment)
            elif self.counted is None:
                self.events.append(build())
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
        for event_id, moment, build in self._pending:
            if event_id in done:
                self._count(moment)
            else:
                self.events.append(build())
        self._pending.clear()

    def _count(self, moment: datetime) -> None:
        self.counted_count += 1
        self.newest_counted = max(self.newest_counted or moment, moment)

    def offer_lean(self, line: LeanLine, where: str, skipped: list[SkippedRecord]) -> Read | None:
        """The error records of a line read lean; a record that cannot become an event is skipped alone (and
        added to `skipped`). What the line gave, unless it had such a record (that line is read anew)."""
        self._trail = []
        neighbours = False
        before_skips = len(skipped)
        for scope in line.spans:
            origin = Origin.of_plain(scope.resource, scope.scope)
            for span in scope.records:
                try:
                    self._offer_span(span, origin)
                except SourceFormatError as exc:
                    skipped.append(
                        SkippedRecord(where=where, reason=f"span {span_ids(span)[1] or '?'}: {exc}")
                    )
        for scope in line.logs:
            origin = Origin.of_plain(scope.resource, scope.scope)
            for record in scope.records:
                severity = log_severity(record)
                if severity < SEVERITY_ERROR:
                    neighbours = True
                    self.neighbours.note(origin.service, *log_neighbour(record, severity))
                    continue
                moment = log_moment(record)
                if moment <= 0:
                    try:
                        error_in_log_record(LogRecord.model_validate(record), origin)
                    except SourceFormatError as exc:
                        skipped.append(SkippedRecord(where=where, reason=f"log record: {exc}"))
                    continue
                try:
                    timestamp = moment_from_nanos(moment, "log record")
                except SourceFormatError as exc:
                    skipped.append(SkippedRecord(where=where, reason=f"log record: {exc}"))
                    continue
                facts = LogFacts.of_lean(record)
                event_id = log_event_id(facts, origin)
                # the context is taken now: the record may be built later, after more records were noted
                before = self.neighbours.before(origin.service, facts.trace_id, moment)
                self.offer(event_id, timestamp, _log_builder(facts, origin, (event_id, timestamp), before))
        trail, self._trail = self._trail, None
        return Read.of(trail, neighbours) if len(skipped) == before_skips else None

    def note_neighbours(self, raw: bytes) -> None:
        """The records below ERROR of a line whose errors were not read (`offer_read`), noted as reading it
        notes them. The line was read lean when it was remembered, and its bytes are the same: it is not
        checked again."""
        for scope in checked_logs(raw):
            service = Origin.of_plain(scope.resource, scope.scope).service
            for record in scope.records:
                severity = log_severity(record)
                if severity < SEVERITY_ERROR:
                    self.neighbours.note(service, *log_neighbour(record, severity))

    def _offer_span(self, span: dict[str, Any], origin: Origin) -> None:
        indexes: list[int | None] = list(exception_indexes(span))
        if not indexes:
            if not span_is_error(span):
                return
            indexes = [None]
        # every error of the span has a time, or the span is read (and refused) as the models read it
        moments = [span_moment(span, index) for index in indexes]
        what = "span" if indexes == [None] else "exception event"
        timestamps = [moment_from_nanos(moment, what) for moment in moments]
        trace_id, span_id = span_ids(span)
        identity = (
            (trace_id, span_id)
            if trace_id and span_id
            else ("no-ids", origin.service, span.get("name", ""), str(span_moment_start(span)))
        )
        built = _FromSpan(span, origin)
        for index, timestamp in zip(indexes, timestamps, strict=True):
            event_id = (
                stable_id("span", *identity)
                if index is None
                else stable_id("span-event", *identity, str(index))
            )
            self.offer(event_id, timestamp, built.event(index, (event_id, timestamp)))


def _log_builder(
    record: LogFacts, origin: Origin, known: Known, before: list[Noted]
) -> Callable[[], ErrorEvent]:
    def build() -> ErrorEvent:
        event = log_error(record, origin, known)
        assert event is not None  # its severity was checked before it was offered
        return event.model_copy(update={"context": context_records(before)}) if before else event

    return build
