"""The `otlp-file:PATH` source: errors from OTLP/JSON lines, as the OpenTelemetry Collector's
file exporter writes them (one ExportTraceServiceRequest or ExportLogsServiceRequest per line).

What counts as an error:
- a span event named `exception` or `<prefix>.exception` (kind "exception", `is_exception_event`), read
  from its `exception.*` attributes;
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
counts each event id once. The exporter's rotated backups written to since the window began are read first
(`otlp_rotation.py`); how damaged or unfinished files are read is `otlp_file_lines.py`, and a line whose
records are not all readable is read without them (`otlp_salvage.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rounds_bot.errors import SourceError, SourceFormatError
from rounds_bot.sources.base import Counted, PollResult, Sink, SkippedRecord, Window
from rounds_bot.sources.line_memory import (
    Deferred,
    LineMemory,
    Read,
    digest_of,
    micros_of,
)
from rounds_bot.sources.otlp_events import (
    errors_in_export_line,
)
from rounds_bot.sources.otlp_file_lines import MAX_LINE, UTF8_BOM, Line, NotText, RawLines
from rounds_bot.sources.otlp_json import (
    CutShort,
    ExportLine,
    parse_export_line,
)
from rounds_bot.sources.otlp_lean import (
    LeanLine,
    lean_line,
)
from rounds_bot.sources.otlp_reading import Built, Reading
from rounds_bot.sources.otlp_rotation import rotated_backups
from rounds_bot.sources.otlp_salvage import salvaged


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

    def poll_into(
        self, window: Window, known_group_ids: frozenset[str], counted: Counted, sink: Sink
    ) -> PollResult:
        """`poll_new`, each event given to `sink` as it is built, in file order; the result holds none."""
        return self._read(window, counted, sink)

    def _read(self, window: Window, counted: Counted | None, sink: Sink | None = None) -> PollResult:
        end = window.end if window.end.tzinfo else window.end.replace(tzinfo=UTC)
        start = window.start if window.start.tzinfo else window.start.replace(tzinfo=UTC)
        skipped: list[SkippedRecord] = []
        reading = Reading(end, start if counted is not None else None, counted, sink)
        memory = LineMemory.restore(window.source_state)
        reading.ask_ahead(memory)
        notes: list[str] = []
        # the exporter's backups the window may hold lines of, then the file: their lines in the order written
        for path in [*rotated_backups(self.path, since=start), self.path]:
            self._read_file(path, reading, memory, skipped, notes)
        return PollResult(
            events=reading.events,
            skipped=skipped,
            notes=notes + _notes(self.path, end, reading.later, reading.repeated),
            already_counted=reading.counted_count,
            newest_counted=reading.newest_counted,
            source_state=memory.state(),
        )

    def _read_file(
        self,
        path: Path,
        reading: Reading,
        memory: LineMemory,
        skipped: list[SkippedRecord],
        notes: list[str],
    ) -> None:
        """Offers the error records of one file to `reading`, line after line."""
        with Deferred(path, gzipped=RawLines(path).gzipped()) as deferred:
            for where, place, line in self._export_lines(path, skipped, memory, notes):
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
                        moment = event.timestamp
                        reading.offer(event.event_id, moment, micros_of(moment), Built(event))
                # asked about once a line: what waits for the answer holds the line's records, which are let
                # go as soon as it comes (a batch of many lines kept them all alive, at a cost in memory and
                # time)
                reading.flush()
            if (
                path != self.path
            ):  # a backup: the file's error logs may have these lines' records as neighbours
                for raw in deferred.take():
                    reading.note_neighbours(raw)

    def _export_lines(
        self, path: Path, skipped: list[SkippedRecord], memory: LineMemory, notes: list[str]
    ) -> Iterator[tuple[str, _Place, LeanLine | ExportLine | Read]]:
        """Each line that is an export request: what an earlier round read of it when it is remembered, else
        the line read lean when it plainly can be, else read with the models; the others are listed as
        skipped, but for a last line without its line end, which the exporter may still be writing: that is
        noted, and read by a later round. A file none of whose lines is one is not OTLP/JSON: that is said
        once (SourceError), not once per line."""
        good = 0
        lines = RawLines(path)
        for line in _raw_lines(lines):
            raw, offset = line.raw, line.offset
            if line.number == 1 and raw.startswith(UTF8_BOM):
                raw, offset = raw[len(UTF8_BOM) :], offset + len(UTF8_BOM)
            where = f"{path}:{line.number}"
            if line.too_long:  # its bytes were let go as they were read
                skipped.append(SkippedRecord(where=where, reason=_TOO_LONG))
                continue
            if not raw.strip():
                continue
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
                parsed = parse_export_line(raw)
            except SourceFormatError as exc:
                salvage = salvaged(raw)
                if salvage is not None:  # a record, scope or resource refused alone: the rest is read
                    parsed, problems = salvage
                    skipped.extend(SkippedRecord(where=where, reason=problem) for problem in problems)
                    good += 1
                    yield where, place, parsed
                    continue
                if line.open_end and isinstance(exc, CutShort):
                    notes.append(
                        f"{where}, the last line, is not complete yet (no line end): a later round reads it"
                    )
                    continue
                skipped.append(SkippedRecord(where=where, reason=str(exc)))
                if not good and len(skipped) >= NOT_OTLP_AFTER:
                    raise _not_otlp(path, skipped[0].reason) from None
                continue
            good += 1
            yield where, place, parsed
        if lines.damage is not None:
            number, why = lines.damage
            if not good:
                raise _not_otlp(path, f"it is a damaged gzip file ({why})")
            reason = f"{why}: the text stops in this line, and what the file holds after it is not read"
            skipped.append(SkippedRecord(where=f"{path}:{number}", reason=reason))
        if skipped and not good:
            raise _not_otlp(path, skipped[0].reason)


@dataclass(frozen=True)
class _Place:
    """A line's bytes, where it begins in the file, and its digest (`line_memory.digest_of`)."""

    raw: bytes
    offset: int
    digest: str

    @property
    def length(self) -> int:
        return len(self.raw)


def _raw_lines(lines: RawLines) -> Iterator[Line]:
    try:
        yield from lines.lines()
    except NotText as exc:
        raise _not_otlp(lines.path, str(exc)) from None
    except OSError as exc:
        raise _unreadable(lines.path, exc) from exc


def _decoded(raw: bytes) -> LeanLine | ExportLine:
    """A line remembered from an earlier round, decoded after all: it was read lean then, and its bytes are
    the same, so it is read lean again."""
    return lean_line(raw) or parse_export_line(raw)


def _has_logs(line: LeanLine | ExportLine) -> bool:
    return bool(line.logs) if isinstance(line, LeanLine) else bool(line.resource_logs)


#: This many malformed lines before the first good one: the file is not OTLP/JSON, and that is said once.
NOT_OTLP_AFTER = 20
_TOO_LONG = (
    f"the line is longer than {MAX_LINE >> 20} MiB, more than any export request the collector receives "
    "(a file without line ends, or damaged): it is not read"
)


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
