"""From one OTLP/JSON export request to the error events it holds: a span's exception events and error
status, an error log record, each with its stable id, time and the resource and scope it came from.

The file source (`otlp_file`) decides which records to build; this module builds them, from the models or
from the plain records the lean reader already checked (`SpanFacts.of_lean`, `LogFacts.of_lean`), alike."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from rounds_bot.errors import SourceFormatError
from rounds_bot.models import AttributeValue, ErrorEvent
from rounds_bot.sources.base import SkippedRecord
from rounds_bot.sources.neighbours import Neighbours, context_records
from rounds_bot.sources.otlp_json import (
    STATUS_CODE_ERROR,
    ExportLine,
    InstrumentationScope,
    LogRecord,
    Resource,
    Span,
    decode_any_value,
    flatten_attributes,
    to_text,
)
from rounds_bot.sources.otlp_lean import (
    checked_int,
    checked_span_id,
    checked_trace_id,
    decode_plain,
    flatten_plain,
)

SEVERITY_ERROR = 17
SEVERITY_FATAL = 21
SEVERITY_FATAL_MAX = 24

#: Severity words of log bridges that write only severityText, and the number they stand for.
_SEVERITY_BY_TEXT = {
    "ERROR": SEVERITY_ERROR,
    "ERR": SEVERITY_ERROR,
    "SEVERE": SEVERITY_ERROR,
    "CRITICAL": SEVERITY_FATAL,
    "CRIT": SEVERITY_FATAL,
    "ALERT": SEVERITY_FATAL,
    "EMERGENCY": SEVERITY_FATAL,
    "FATAL": SEVERITY_FATAL,
    "PANIC": SEVERITY_FATAL,
}

EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"
EXCEPTION_STACKTRACE = "exception.stacktrace"
#: Kept in ErrorEvent's own fields, so not repeated in its attributes.
_EXCEPTION_KEYS = (EXCEPTION_TYPE, EXCEPTION_MESSAGE, EXCEPTION_STACKTRACE)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: an error's id and time, when its reader worked them out already (to decide whether to build it): the
#: ones the functions below would work out
Known = tuple[str, datetime]
#: OTLP's SpanKind, by number or by name (without its `SPAN_KIND_` prefix)
_SPAN_KINDS = {
    **dict.fromkeys(("1", "internal"), "internal"),
    **dict.fromkeys(("2", "server"), "server"),
    **dict.fromkeys(("3", "client"), "client"),
    **dict.fromkeys(("4", "producer"), "producer"),
    **dict.fromkeys(("5", "consumer"), "consumer"),
}


# --- from one export request to ErrorEvents ---------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """What a record inherits from its resource and instrumentation scope."""

    service: str
    version: str | None
    environment: str | None
    attributes: dict[str, AttributeValue]

    @classmethod
    def of(cls, resource: Resource, scope: InstrumentationScope) -> Origin:
        return cls._of(flatten_attributes(resource.attributes), scope.name)

    @classmethod
    def of_plain(cls, resource: dict[str, Any], scope: dict[str, Any]) -> Origin:
        """`of`, from a resource and scope read lean (`otlp_lean.py`)."""
        return cls._of(flatten_plain(resource.get("attributes", [])), scope.get("name", ""))

    @classmethod
    def _of(cls, attributes: dict[str, AttributeValue], scope_name: str) -> Origin:
        if scope_name:
            attributes["otel.scope.name"] = scope_name
        environment = attributes.get("deployment.environment.name", attributes.get("deployment.environment"))
        version = attributes.get("service.version")
        return cls(
            service=str(attributes.get("service.name") or "unknown"),
            version=None if version is None else str(version),
            environment=None if environment is None else str(environment),
            attributes=attributes,
        )


def errors_in_export_line(
    line: ExportLine, where: str, neighbours: Neighbours | None = None
) -> tuple[list[ErrorEvent], list[SkippedRecord]]:
    """The errors of one export request; a record that cannot become an event is skipped alone. With
    `neighbours`, the log records below ERROR are noted there and an error log gets those before it."""
    events: list[ErrorEvent] = []
    skipped: list[SkippedRecord] = []
    for resource_spans in line.resource_spans or []:
        for scope_spans in resource_spans.scope_spans:
            origin = Origin.of(resource_spans.resource, scope_spans.scope)
            for span in scope_spans.spans:
                try:
                    events.extend(errors_in_span(span, origin))
                except SourceFormatError as exc:
                    skipped.append(SkippedRecord(where=where, reason=f"span {span.span_id or '?'}: {exc}"))
    for resource_logs in line.resource_logs or []:
        for scope_logs in resource_logs.scope_logs:
            origin = Origin.of(resource_logs.resource, scope_logs.scope)
            for record in scope_logs.log_records:
                try:
                    event = error_in_log_record(record, origin)
                except SourceFormatError as exc:
                    skipped.append(SkippedRecord(where=where, reason=f"log record: {exc}"))
                    continue
                if neighbours is None:
                    if event is not None:
                        events.append(event)
                elif event is None:
                    neighbours.note(origin.service, *neighbour_of(record))
                else:
                    moment = record.time_unix_nano or record.observed_time_unix_nano
                    before = neighbours.before(origin.service, record.trace_id, moment)
                    update = {"context": context_records(before)}
                    events.append(event.model_copy(update=update) if before else event)
    return events, skipped


def neighbour_of(record: LogRecord) -> tuple[str, int, str, int, str]:
    """A record below ERROR as `Neighbours.note` keeps it: trace id, time, severity text and number, body."""
    body = "" if record.body is None else to_text(decode_any_value(record.body))
    moment = record.time_unix_nano or record.observed_time_unix_nano
    return record.trace_id, moment, record.severity_text, record.severity_number, body


def errors_in_span(span: Span, origin: Origin) -> list[ErrorEvent]:
    exception_events = [
        (index, event) for index, event in enumerate(span.events) if event.name == "exception"
    ]
    if not exception_events and span.status.code != STATUS_CODE_ERROR:
        return []
    facts = SpanFacts.of(span)
    if exception_events:
        return [
            exception_event(facts, index, event.time_unix_nano, flatten_attributes(event.attributes), origin)
            for index, event in exception_events
        ]
    return [span_error_event(facts, origin)]


@dataclass(frozen=True)
class SpanFacts:
    """What an error event reads of its span, as the span's model holds it."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int | str
    start_time_unix_nano: int
    end_time_unix_nano: int
    status_message: str
    attributes: dict[str, AttributeValue]

    @classmethod
    def of(cls, span: Span) -> SpanFacts:
        return cls(
            trace_id=span.trace_id,
            span_id=span.span_id,
            parent_span_id=span.parent_span_id,
            name=span.name,
            kind=span.kind,
            start_time_unix_nano=span.start_time_unix_nano,
            end_time_unix_nano=span.end_time_unix_nano,
            status_message=span.status.message,
            attributes=flatten_attributes(span.attributes),
        )

    @classmethod
    def of_lean(cls, span: dict[str, Any]) -> SpanFacts:
        """`of` the span's model, from its record read lean: `otlp_lean.py` checked that each value is what
        the model would hold (or converts as the model does), so the span is not validated again."""
        status = span.get("status", {})
        return cls(
            trace_id=checked_trace_id(span.get("traceId", "")),
            span_id=checked_span_id(span.get("spanId", "")),
            parent_span_id=checked_span_id(span.get("parentSpanId", "")),
            name=span.get("name", ""),
            kind=span.get("kind", 0),
            start_time_unix_nano=checked_int(span.get("startTimeUnixNano", 0)),
            end_time_unix_nano=checked_int(span.get("endTimeUnixNano", 0)),
            status_message=status.get("message", ""),
            attributes=flatten_plain(span.get("attributes", [])),
        )


def exception_event(
    span: SpanFacts,
    index: int,
    time_unix_nano: int,
    own: dict[str, AttributeValue],
    origin: Origin,
    known: Known | None = None,
) -> ErrorEvent:
    """The error of the span's `exception` event number `index`, of that time and with those attributes."""
    attributes = {**origin.attributes, **span.attributes, **own}
    if known is None:
        moment = time_unix_nano or span.end_time_unix_nano or span.start_time_unix_nano
        known = (
            stable_id("span-event", *_span_identity(span, origin), str(index)),
            moment_from_nanos(moment, "exception event"),
        )
    return ErrorEvent.of_typed(
        event_id=known[0],
        timestamp=known[1],
        service=origin.service,
        kind="exception",
        error_type=_text_or_none(own.get(EXCEPTION_TYPE)),
        message=_text_or_none(own.get(EXCEPTION_MESSAGE)) or "",
        stacktrace=_text_or_none(own.get(EXCEPTION_STACKTRACE)),
        error_code=_error_code(attributes),
        trace_id=span.trace_id or None,
        span_id=span.span_id or None,
        parent_span_id=span.parent_span_id or None,
        span_kind=_SPAN_KINDS.get(str(span.kind).removeprefix("SPAN_KIND_").lower()),
        service_version=origin.version,
        environment=origin.environment,
        attributes=_without_exception_keys(attributes),
    )


def span_error_event(span: SpanFacts, origin: Origin, known: Known | None = None) -> ErrorEvent:
    attributes = {**origin.attributes, **span.attributes}
    if known is None:
        moment = span.end_time_unix_nano or span.start_time_unix_nano
        known = (stable_id("span", *_span_identity(span, origin)), moment_from_nanos(moment, "span"))
    return ErrorEvent.of_typed(
        event_id=known[0],
        timestamp=known[1],
        service=origin.service,
        kind="span_error",
        # `error.type` is the semantic conventions' low-cardinality class of a failed operation.
        error_type=_text_or_none(span.attributes.get("error.type")),
        message=span.status_message or span.name,
        error_code=_error_code(attributes),
        trace_id=span.trace_id or None,
        span_id=span.span_id or None,
        parent_span_id=span.parent_span_id or None,
        span_kind=_SPAN_KINDS.get(str(span.kind).removeprefix("SPAN_KIND_").lower()),
        service_version=origin.version,
        environment=origin.environment,
        attributes=attributes,
    )


def _span_identity(span: SpanFacts, origin: Origin) -> tuple[str, ...]:
    if span.trace_id and span.span_id:
        return (span.trace_id, span.span_id)
    # A span without valid ids is still one record: name it by what it says about itself.
    return ("no-ids", origin.service, span.name, str(span.start_time_unix_nano))


@dataclass(frozen=True)
class LogFacts:
    """What an error event reads of its log record, as the record's model holds it (the body as text)."""

    trace_id: str
    span_id: str
    time_unix_nano: int
    observed_time_unix_nano: int
    severity_number: int
    severity_text: str
    event_name: str
    body: str
    attributes: dict[str, AttributeValue]

    @classmethod
    def of(cls, record: LogRecord) -> LogFacts:
        return cls(
            trace_id=record.trace_id,
            span_id=record.span_id,
            time_unix_nano=record.time_unix_nano,
            observed_time_unix_nano=record.observed_time_unix_nano,
            severity_number=record.severity_number,
            severity_text=record.severity_text,
            event_name=record.event_name,
            body="" if record.body is None else to_text(decode_any_value(record.body)),
            attributes=flatten_attributes(record.attributes),
        )

    @classmethod
    def of_lean(cls, record: dict[str, Any]) -> LogFacts:
        """`of` the record's model, from the record read lean: `otlp_lean.py` checked every field the model
        reads to be what the model would hold (or converts as the model does): it is not validated again."""
        body = record.get("body")
        return cls(
            trace_id=checked_trace_id(record.get("traceId", "")),
            span_id=checked_span_id(record.get("spanId", "")),
            time_unix_nano=checked_int(record.get("timeUnixNano", 0)),
            observed_time_unix_nano=checked_int(record.get("observedTimeUnixNano", 0)),
            severity_number=checked_int(record.get("severityNumber", 0)),
            severity_text=record.get("severityText", ""),
            event_name=record.get("eventName", ""),
            body="" if body is None else to_text(decode_plain(body)),
            attributes=flatten_plain(record.get("attributes", [])),
        )


def error_in_log_record(record: LogRecord, origin: Origin) -> ErrorEvent | None:
    return log_error(LogFacts.of(record), origin)


def log_error(record: LogFacts, origin: Origin, known: Known | None = None) -> ErrorEvent | None:
    severity = record.severity_number or _SEVERITY_BY_TEXT.get(record.severity_text.strip().upper(), 0)
    if severity < SEVERITY_ERROR:
        return None
    fatal = SEVERITY_FATAL <= severity <= SEVERITY_FATAL_MAX
    own = record.attributes
    body = record.body
    exception_message = _text_or_none(own.get(EXCEPTION_MESSAGE))
    attributes = {**origin.attributes, **_without_exception_keys(own)}
    if exception_message is not None and body and body != exception_message:
        # The exception is the error; the log line around it is kept as context.
        attributes["log.body"] = body
    if known is None:
        known = (log_event_id(record, origin), log_timestamp(record))
    return ErrorEvent.of_typed(
        event_id=known[0],
        timestamp=known[1],
        service=origin.service,
        kind="log",
        error_type=_text_or_none(own.get(EXCEPTION_TYPE)),
        message=exception_message if exception_message is not None else body,
        stacktrace=_text_or_none(own.get(EXCEPTION_STACKTRACE)),
        error_code=_error_code({**origin.attributes, **own}),
        severity="FATAL" if fatal else "ERROR",
        fatal=fatal,
        trace_id=record.trace_id or None,
        span_id=record.span_id or None,
        service_version=origin.version,
        environment=origin.environment,
        attributes=attributes,
    )


def log_event_id(record: LogFacts, origin: Origin) -> str:
    """What identifies a log record: everything it says of itself, and where it was logged."""
    return stable_id(
        "log",
        origin.service,
        str(origin.attributes.get("otel.scope.name", "")),
        record.trace_id,
        record.span_id,
        str(record.time_unix_nano),
        str(record.observed_time_unix_nano),
        str(record.severity_number),
        record.severity_text,
        record.event_name,
        record.body,
        _IDENTITY_JSON.encode(record.attributes),
    )


#: `json.dumps(attributes, sort_keys=True, default=str)`, the spelling a log record's id hashes, with its
#: encoder made once rather than once a record
_IDENTITY_JSON = json.JSONEncoder(sort_keys=True, default=str)


def log_timestamp(record: LogFacts) -> datetime:
    return moment_from_nanos(record.time_unix_nano or record.observed_time_unix_nano, "log record")


# --- small conversions ------------------------------------------------------------------------


def stable_id(*parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(("otlp", *parts)).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def moment_from_nanos(unix_nano: int, what: str) -> datetime:
    if unix_nano <= 0:
        raise SourceFormatError(f"the {what} has no timestamp (timeUnixNano is 0 or missing)")
    try:
        return _EPOCH + timedelta(microseconds=unix_nano // 1_000)
    except OverflowError:
        raise SourceFormatError(
            f"the {what}'s timestamp {unix_nano} is not a time in Unix nanoseconds"
        ) from None


def _error_code(attributes: dict[str, AttributeValue]) -> str | None:
    return _text_or_none(attributes.get("error.code"))


def _text_or_none(value: AttributeValue | None) -> str | None:
    return None if value is None else str(value)


def _without_exception_keys(attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
    return {key: value for key, value in attributes.items() if key not in _EXCEPTION_KEYS}
