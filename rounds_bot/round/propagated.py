"""One error recorded by every span it escapes is one occurrence: the events of a trace that repeat another
are found before grouping, and counted as the occurrence they repeat.

    enclosures = enclosing_records(polled.events)    the events enclosed, each one's outermost encloser

Instrumentation records an error where it happens and again on each span it leaves:
- Python's `start_as_current_span` (`record_exception=True` by default) records the exception on every span
  it escapes, each time with the traceback as it has grown;
- a Java agent records the same `Throwable` on the controller's span and on the server span above it;
- a Go service that calls `span.RecordError(err)` at each layer records `sql: no rows in result set`, then
  `load cart 17: sql: no rows in result set` (`fmt.Errorf("load cart %d: %w", ...)`), then
  `handle checkout: load cart 17: ...`, each on the span of its layer.

Counted as they arrive, the first two count one failure as several, and the third makes a signature of
each layer: three issues for one bug. Within one trace and one service, an event *encloses* another when
- its message ends with `": "` and the other's whole message (an error wrapped with context: Go's `%w`,
  anyhow's `{:#}`, a message built from its cause's), or
- it has the other's type and message, and its span is the other's parent span (the error left the child
  span and was recorded again on its parent), or
- it is the span's own record of an error (an exception event, an error status) that a log record of the
  same span repeats, type and message (the log line written where it was caught). Two records of a span's
  own are two occurrences (a loop recording each item's failure, a retry within the span); or
- it is a span's record of an exception that a log record of an exception on another span of the trace
  repeats, type and message as `logged_error` reads them (the type's last dotted name, the message out of
  one pair of quotes: Python's `LoggingHandler` logs `HTTPError` and `c-0` where its span recorded
  `requests.exceptions.HTTPError` and a KeyError's `'c-0'`): caught and logged in a caller's span. A log of
  another error of the same type stays an occurrence of its own; or
- its stack trace names the other's error as a cause (Java's `Caused by: T: message`, a Python chain's
  `T: message` line, .NET's ` ---> T: message`, or ` ---> T (0x80131904): message` with the error code
  some exceptions print): an app's own exception over the one a library's span recorded (a JDBC span's
  `SQLException` under the service's `CartException`, a SqlClient span's `SqlException` under EF Core's
  `DbUpdateException`); or
- it is a span's record of an error whose whole message a log record holds in an attribute: the error a
  caller logged with a message of its own (`slog.Error("request failed", "err", err)`, zap's `zap.Error`).
  The log is the span's record's, not the other way: a middleware that logs every failed request with one
  message would otherwise make one problem of every bug it logs; or
- it is the trace's first record of an error (not enclosed) beside a span's error status without an
  exception event: a server's 5xx or a client's failed call (`_STATUS_ONLY`), an internal span's status
  beside an exception (the Java agent's controller spans under `OTEL_SEMCONV_EXCEPTION_SIGNAL_OPT_IN=logs`).
  A status with no other record of its trace stays a problem of its own (docs/grouping.md says why).

Two records of a span's own are one when one is the other recorded again as it left the span (`grows`);
a log of an exception is a span's record when its traceback's last line prints that record's error
(`last_line_error`: a handler that logged only the exception's first argument). The text rules live in
`round.same_error`.

An event enclosed is counted as the outermost event that encloses it, so the occurrence is counted once,
in the signature of the error as it left the last span that recorded it: the one with the most context
(the full chain of a wrapped message, the longest traceback). A Go service's two queries that both fail
with `sql: no rows in result set` stay two problems, told apart by what wraps them. Events of different
services are never folded: a caller's error over its callee's is a cascade (`round/cascade.py`), each
service's its own problem.

What is read: the keys of every event (id and trace), each trace id kept as its 64-bit hash (8 bytes an
event, counted at once), then, only when two events or more share a trace, the few fields the rules compare
of the events in those traces, each trace's held until its last event is read. A round whose errors each
have a trace of their own (the usual) pays one pass over the keys.

Only a record of one occurrence is compared: a backend's group (`source_group_id`, a count) carries the
ids of one sample of its occurrences (SigNoz's error index), which says nothing of the others' traces. SigNoz
leaves the rows these rules enclose out of its counts itself, in ClickHouse (`sources/signoz/enclosed.py`).
Only events read in the same round are compared: an inner record read a round before its encloser (a
round reads up to 30 s before now) was counted as itself then. An encloser counted in an earlier round that
the source gives again is placed again to find its signature.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy

from rounds_bot.models import ErrorEvent
from rounds_bot.round.same_error import grows, last_line_error, logged_error, names_as_cause
from rounds_bot.sources.spill import fields_in, keys_of

#: the most errors of one trace and service whose stack traces are searched for each other's (`_causes`)
MAX_CAUSE_RECORDS = 200
#: the rank of a span's error status by its span's kind (`_statuses`): an internal span's (any other kind's)
#: under an exception, a client's or producer's under an error record or an internal span's status, a
#: server's or consumer's under any of those
_STATUS_ONLY = {"client": 2, "producer": 2, "server": 3, "consumer": 3}
#: the rank of an internal span's error status (and of a span of no kind's)
_INTERNAL_STATUS = 1
#: what wraps an error's message in another's: Go's `fmt.Errorf("...: %w", err)`, anyhow's `{:#}`, and most
#: hand-built messages (`f"load cart: {err}"`)
WRAP_SEPARATOR = ": "


@dataclass(frozen=True)
class Enclosures:
    """The events enclosed, by their indexes in the round's events (ascending), and the index of each one's
    outermost encloser: 16 bytes an event enclosed, whatever the round holds."""

    inner: numpy.ndarray
    outer: numpy.ndarray

    def __len__(self) -> int:
        return len(self.inner)

    def marks(self, size: int) -> bytearray:
        """One byte per event of the round's `size`: 1 for an event enclosed."""
        marks = bytearray(size)
        for index in self.inner.tolist():
            marks[index] = 1
        return marks

    def outers_of(self, inner: Sequence[int]) -> numpy.ndarray:
        """The outermost encloser of each of `inner` (events enclosed, ascending)."""
        return self.outer[numpy.searchsorted(self.inner, numpy.asarray(inner, dtype=numpy.int64))]

    def pairs(self) -> dict[int, int]:
        """{index enclosed: its outermost encloser's}."""
        return dict(zip(self.inner.tolist(), self.outer.tolist(), strict=True))


class _Record(NamedTuple):
    """What the rules compare of one event with a trace."""

    at: int  # its index in the round's events
    event_id: str
    trace_id: str
    service: str
    span_id: str
    parent_span_id: str
    error_type: str
    message: str
    stacktrace: str
    logged: bool  # a log record's, not a span's
    texts: tuple[str, ...]  # a log record's attributes' text values (`slog.Error("...", "err", err)`)
    status_only: int  # a span's error status without an exception event, its rank (`_STATUS_ONLY`); else 0


_FIELDS = (
    *("event_id", "trace_id", "span_id", "parent_span_id", "service", "error_type", "message"),
    *("stacktrace", "kind", "span_kind", "count", "source_group_id", "attributes"),
)


def enclosing_records(events: Sequence[ErrorEvent]) -> Enclosures:
    """Each event (by its index in `events`) that another of the same trace and service encloses, with the
    outermost event enclosing it; the events no other encloses are left out (nearly all)."""
    # events still to come of each trace hash held twice or more: a trace's records are compared, and let
    # go, once its last event is read, so only the traces being read are held (a trace's events are
    # written together, by the span processor's batch)
    to_come = _traces_with_several(events)
    inner, outer = array("q"), array("q")
    held: dict[int, list[_Record]] = defaultdict(list)
    for index, fields in enumerate(fields_in(events, *_FIELDS) if to_come else ()):
        (
            event_id,
            trace_id,
            span_id,
            parent,
            service,
            error_type,
            message,
            stacktrace,
            kind,
            span_kind,
            count,
            group,
            attributes,
        ) = fields
        if not trace_id or (key := hash(trace_id)) not in to_come:
            continue
        if count == 1 and group is None:
            record = _Record(
                *(index, event_id, trace_id, service, span_id or "", parent or ""),
                *(error_type or "", message, (stacktrace or "").strip() and stacktrace, kind == "log"),
                _texts(attributes) if kind == "log" else (),
                _STATUS_ONLY.get(span_kind, _INTERNAL_STATUS) if kind == "span_error" else 0,
            )
            held[key].append(record)
        to_come[key] -= 1
        if not to_come[key]:
            del to_come[key]
            for enclosed, outermost in _enclosed_in(held.pop(key, [])):
                inner.append(enclosed)
                outer.append(outermost)
    order = numpy.argsort(numpy.frombuffer(inner, dtype=numpy.int64), kind="stable")
    return Enclosures(
        numpy.frombuffer(inner, dtype=numpy.int64)[order], numpy.frombuffer(outer, dtype=numpy.int64)[order]
    )


def _traces_with_several(events: Sequence[ErrorEvent]) -> dict[int, int]:
    """The number of events of each trace (by its id's hash) that two events or more have: one pass over
    the events' keys, 8 bytes an event. (A hash two traces share, nearly never, only makes the rules look
    at both: they compare the ids too.)"""
    hashes = numpy.fromiter(
        (hash(trace_id) for _, _, trace_id in keys_of(events) if trace_id), dtype=numpy.int64
    )
    found, counts = numpy.unique(hashes, return_counts=True)
    several = counts > 1
    return dict(zip(found[several].tolist(), counts[several].tolist(), strict=True))


def _enclosed_in(records: list[_Record]) -> Iterator[tuple[int, int]]:
    """The records enclosed of one trace's (or of the traces that share its hash), each service's apart, with
    their outermost enclosers (indexes)."""
    by_service: dict[tuple[str, str], list[_Record]] = defaultdict(list)
    for record in records:
        by_service[record.trace_id, record.service].append(record)
    for same in by_service.values():
        if len(same) > 1:
            yield from _outermost(same).items()


def _outermost(records: list[_Record]) -> dict[int, int]:
    """The outermost encloser of each record of one trace and service that another encloses."""
    enclosing = _enclosing(records)
    _break_cycles(enclosing)
    outer_of: dict[int, int] = {}
    for index in enclosing:
        outer = index
        while outer in enclosing:
            outer = enclosing[outer]
        outer_of[index] = outer
    return outer_of


def _break_cycles(enclosing: dict[int, int]) -> None:
    """Records that enclose each other round a cycle (only spans given as their own ancestors make one): the
    cycle's first record encloses nothing, so each record is counted, as the cycle's first."""
    for start in list(enclosing):
        walked: list[int] = []
        at = start
        while at in enclosing and at not in walked:
            walked.append(at)
            at = enclosing[at]
        if at in walked:
            del enclosing[min(walked[walked.index(at) :])]


def _enclosing(records: list[_Record]) -> dict[int, int]:
    """One event that encloses each record enclosed (by index): the rules of the module docstring."""
    by_message: dict[str, list[_Record]] = defaultdict(list)
    by_span: dict[tuple[str, str, str], list[_Record]] = defaultdict(list)
    for record in records:
        by_message[record.message].append(record)
        if record.span_id:
            by_span[record.span_id, record.error_type, record.message].append(record)
    enclosing: dict[int, int] = {}
    for outer in records:
        for inner in _wrapped_by(outer, by_message):
            if inner.event_id != outer.event_id:
                enclosing.setdefault(inner.at, outer.at)
    for inner in records:
        if inner.parent_span_id:
            parents = by_span.get((inner.parent_span_id, inner.error_type, inner.message), ())
            for outer in parents:
                if outer.event_id != inner.event_id and outer.span_id != inner.span_id:
                    enclosing.setdefault(inner.at, outer.at)
                    break
    _causes(records, enclosing)
    _logs_of_errors(records, by_message, enclosing)
    _statuses(records, enclosing)
    for same_span in by_span.values():
        # a log record beside the span's own record of the error; two records of the span's own are two
        # occurrences (a loop that records each item's failure, a retry within the span), unless one is
        # the other recorded again as its traceback grew (`_regrown`)
        spans_own = [record for record in same_span if not record.logged]
        _regrown(spans_own, enclosing)
        if spans_own and len(spans_own) < len(same_span):
            kept = max(spans_own, key=_kept_first)
            for inner in same_span:
                if inner.logged:
                    enclosing.setdefault(inner.at, kept.at)
    _logged_exceptions(records, enclosing)
    return enclosing


def _regrown(spans_own: list[_Record], enclosing: dict[int, int]) -> None:
    """A span's records of one error (type and message) of which one is the other recorded again after it
    went up the stack: the same exception, its traceback grown by the frames it left (Python's
    `span.record_exception(e)` then `raise` inside `start_as_current_span`, which records it again as it
    leaves the span). The shorter is the longer's: added to `enclosing`. Two records whose traces are the
    same stay two (a loop's items failing alike)."""
    if len(spans_own) < 2:
        return
    by_length = sorted(spans_own, key=lambda record: len(record.stacktrace))
    for index, shorter in enumerate(by_length):
        for longer in by_length[index + 1 :]:
            if grows(longer.stacktrace, shorter.stacktrace):
                enclosing.setdefault(shorter.at, longer.at)
                break


def _logged_exceptions(records: list[_Record], enclosing: dict[int, int]) -> None:
    """Each log of an exception that repeats, type and message (`logged_error`), an exception a span of the
    trace recorded (logged where it was caught, often on another span) is that record's: added to
    `enclosing`. A log that already encloses a record (its message wraps one) is left as it is."""
    recorded = {
        logged_error(record.error_type, record.message): record
        for record in records
        if not record.logged and record.error_type and not record.status_only
    }
    if not recorded:
        return
    enclosers = set(enclosing.values())
    for log in records:
        if log.logged and log.error_type and log.at not in enclosing and log.at not in enclosers:
            found = recorded.get(logged_error(log.error_type, log.message)) or recorded.get(
                last_line_error(log.stacktrace)
            )
            if found is not None:
                enclosing[log.at] = found.at


def _causes(records: list[_Record], enclosing: dict[int, int]) -> None:
    """Each record whose error is named as a cause in another's stack trace (`Caused by: T: message`, a
    Python chain's `T: message` line, .NET's ` ---> T: message`) is that one's: added to `enclosing`. The
    same type and message are the parent-span rule's (a retry's exception names its own). A trace of more
    than `MAX_CAUSE_RECORDS` errors of one service (a batch job's) is left to the other rules."""
    if len(records) > MAX_CAUSE_RECORDS:
        return
    named: dict[tuple[str, str], list[_Record]] = defaultdict(list)
    for record in records:
        if record.error_type:
            named[record.error_type, record.message].append(record)
    for outer in records:
        if not outer.stacktrace:
            continue
        own = logged_error(outer.error_type, outer.message)
        for (error_type, message), inners in named.items():
            # the outer's own error, however a log spells its type (`ConnectionError` for a span's
            # `requests.exceptions.ConnectionError`), is the parent-span and log rules', not a cause
            if logged_error(error_type, message) != own and names_as_cause(
                outer.stacktrace, error_type, message.partition("\n")[0]
            ):
                for inner in inners:
                    enclosing.setdefault(inner.at, outer.at)


def _logs_of_errors(
    records: list[_Record], by_message: dict[str, list[_Record]], enclosing: dict[int, int]
) -> None:
    """Each log record whose attribute holds the whole message of a span's record of the trace (the error a
    caller logged, `slog.Error("checkout failed", "err", err)`) is that record's: added to `enclosing`. A
    log that already encloses a record (its own message wraps one) is left as it is."""
    enclosers = set(enclosing.values())
    for log in records:
        if not log.texts or log.at in enclosers or log.at in enclosing:
            continue
        found = next(
            (
                record
                for text in log.texts
                for record in by_message.get(text, ())
                if not record.logged and record.event_id != log.event_id
            ),
            None,
        )
        if found is not None:
            enclosing[log.at] = found.at


def _statuses(records: list[_Record], enclosing: dict[int, int]) -> None:
    """Each span's error status without an exception event (instrumentation's, for a call that failed, the
    5xx the handler answered, an operation an exception left) is the error beside it: enclosed by the
    trace's first record of an error of a lower rank (`_STATUS_ONLY`) that nothing encloses, when there is
    one; an internal span's, by the first exception (a record with a type: an exception event, a log of an
    exception). One that encloses a record (its status description wraps an error's message) is the error
    itself, and is left as it is."""
    enclosers = set(enclosing.values())
    for rank in (_INTERNAL_STATUS, *sorted(set(_STATUS_ONLY.values()))):
        lower = (r for r in records if r.status_only < rank and r.at not in enclosing)
        below = next((r for r in lower if rank > _INTERNAL_STATUS or r.error_type), None)
        if below is None:
            continue
        for record in records:
            if record.status_only == rank and record.at not in enclosing and record.at not in enclosers:
                enclosing[record.at] = below.at


def _texts(attributes: dict[str, Any] | None) -> tuple[str, ...]:
    return tuple(value for value in (attributes or {}).values() if isinstance(value, str) and value.strip())


def _wrapped_by(outer: _Record, by_message: dict[str, list[_Record]]) -> list[_Record]:
    """The records whose whole message ends `outer`'s after a `": "`."""
    message, found = outer.message, list[_Record]()
    at = message.find(WRAP_SEPARATOR)
    while at >= 0:
        tail = message[at + len(WRAP_SEPARATOR) :]
        if tail.strip():
            found.extend(by_message.get(tail, ()))
        at = message.find(WRAP_SEPARATOR, at + 1)
    return found


def _kept_first(record: _Record) -> tuple[bool, int]:
    """Of a span's own records of one error: the one with a stack trace, else the last read."""
    return bool(record.stacktrace), record.at
