"""From one OTLP/JSON export request, read with the models (`otlp_json.py`), to the error events it holds: a
span's exception events and error status, an error log record, each with its stable id, time and the
resource and scope it came from.

The models read the lines the lean reader (`otlp_lean.py`) leaves to them; both build each event the same
way (`otlp_build.py`), from the same facts."""

from __future__ import annotations

from rounds_bot.errors import SourceFormatError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import SkippedRecord
from rounds_bot.sources.log_bodies import attribute_message
from rounds_bot.sources.neighbours import Neighbours, context_records
from rounds_bot.sources.otlp_build import (
    SEVERITY_ERROR,
    LogFacts,
    Origin,
    SpanFacts,
    exception_event,
    exception_known,
    log_error,
    log_known,
    log_severity,
    span_error_event,
    span_error_known,
)
from rounds_bot.sources.otlp_json import (
    STATUS_CODE_ERROR,
    ExportLine,
    InstrumentationScope,
    LogRecord,
    Resource,
    Span,
    decode_any_value,
    flatten_attributes,
    is_exception_event,
    message_text,
    to_text,
)


def origin_of(resource: Resource, scope: InstrumentationScope) -> Origin:
    return Origin.of(flatten_attributes(resource.attributes), scope.name)


def errors_in_export_line(
    line: ExportLine, where: str, neighbours: Neighbours | None = None
) -> tuple[list[ErrorEvent], list[SkippedRecord]]:
    """The errors of one export request; a record that cannot become an event is skipped alone. With
    `neighbours`, the log records below ERROR are noted there and an error log gets those before it."""
    events: list[ErrorEvent] = []
    skipped: list[SkippedRecord] = []
    for resource_spans in line.resource_spans or []:
        for scope_spans in resource_spans.scope_spans:
            origin = origin_of(resource_spans.resource, scope_spans.scope)
            for span in scope_spans.spans:
                refused: list[SourceFormatError] = []
                try:
                    events.extend(errors_in_span(span, origin, refused))
                except SourceFormatError as exc:
                    refused.append(exc)
                span_id = span.span_id or "?"
                skipped.extend(SkippedRecord(where=where, reason=f"span {span_id}: {exc}") for exc in refused)
    for resource_logs in line.resource_logs or []:
        for scope_logs in resource_logs.scope_logs:
            origin = origin_of(resource_logs.resource, scope_logs.scope)
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
    """A record below ERROR as `Neighbours.note` keeps it: trace id, time, severity text and number, body; an
    empty body reads its message from its attributes, as an error record's (`log_bodies.attribute_message`).
    """
    body = "" if record.body is None else message_text(decode_any_value(record.body))
    if not body:  # (its attributes flattened only then: most records below ERROR have a body)
        body = attribute_message(body, flatten_attributes(record.attributes))
    moment = record.time_unix_nano or record.observed_time_unix_nano
    return record.trace_id, moment, record.severity_text, record.severity_number, body


def errors_in_span(span: Span, origin: Origin, refused: list[SourceFormatError]) -> list[ErrorEvent]:
    """The span's errors; an exception event whose time cannot be worked out is refused alone (added to
    `refused`, in the events' order): it is a record of its own, and its siblings' times may be good."""
    exception_events = [
        (index, event) for index, event in enumerate(span.events) if is_exception_event(event.name)
    ]
    if not exception_events and span.status.code != STATUS_CODE_ERROR:
        return []
    facts = span_facts(span)
    if not exception_events:
        return [span_error_event(facts, origin, span_error_known(facts, origin))]
    events: list[ErrorEvent] = []
    for index, event in exception_events:
        try:
            known = exception_known(facts, index, event.time_unix_nano, origin)
        except SourceFormatError as exc:
            refused.append(exc)
            continue
        events.append(exception_event(facts, flatten_attributes(event.attributes), origin, known))
    return events


def span_facts(span: Span) -> SpanFacts:
    return SpanFacts(
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


def error_in_log_record(record: LogRecord, origin: Origin) -> ErrorEvent | None:
    facts = log_facts(record)
    if log_severity(facts) < SEVERITY_ERROR:
        return None  # not an error: its id and time are not asked for
    return log_error(facts, origin, log_known(facts, origin))


def log_facts(record: LogRecord) -> LogFacts:
    value = None if record.body is None else decode_any_value(record.body)
    return LogFacts(
        trace_id=record.trace_id,
        span_id=record.span_id,
        time_unix_nano=record.time_unix_nano,
        observed_time_unix_nano=record.observed_time_unix_nano,
        severity_number=record.severity_number,
        severity_text=record.severity_text,
        event_name=record.event_name,
        body="" if record.body is None else to_text(value),
        attributes=flatten_attributes(record.attributes),
        message_body=None if record.body is None or isinstance(value, str) else message_text(value),
    )
