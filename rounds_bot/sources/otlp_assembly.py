"""An error event put together from its fields, written out in the model's order: what the OTLP readers
build once a record (`otlp_build.py`), so nothing is merged or checked per event.
`tests/test_otlp_event_assembly.py` pins every kind of error equal to `ErrorEvent.of_typed`, field order and
the fields given included, and fails when the model gains a field."""

from __future__ import annotations

from datetime import datetime

from rounds_bot.models import AttributeValue, ContextRecord, ErrorEvent, EventKind, assembled_event

#: the fields each kind of error is given (its event's `model_fields_set`): the rest keep their defaults
EXCEPTION_GIVEN = frozenset(
    {
        *("event_id", "timestamp", "service", "kind", "error_type", "message", "stacktrace", "error_code"),
        *(
            "trace_id",
            "span_id",
            "parent_span_id",
            "span_kind",
            "service_version",
            "environment",
            "attributes",
        ),
    }
)
SPAN_ERROR_GIVEN = EXCEPTION_GIVEN - {"stacktrace"}
LOG_GIVEN = (EXCEPTION_GIVEN - {"parent_span_id", "span_kind"}) | {"severity", "fatal"}
#: a log error with records logged before it: an event without context has it by default, not given
LOG_WITH_CONTEXT_GIVEN = LOG_GIVEN | {"context"}


#: one set of the given fields for all the events of each kind, as `models.sharing_fields_set` shares one
#: (safe for a frozen model: pydantic copies the set before it changes it): not a set made once an event
_SHARED_GIVEN: dict[frozenset[str], set[str]] = {
    given: set(given) for given in (EXCEPTION_GIVEN, SPAN_ERROR_GIVEN, LOG_GIVEN, LOG_WITH_CONTEXT_GIVEN)
}


def assembled(
    given: frozenset[str],
    *,
    event_id: str,
    timestamp: datetime,
    service: str,
    kind: EventKind,
    error_type: str | None,
    message: str,
    error_code: str | None,
    trace_id: str | None,
    span_id: str | None,
    service_version: str | None,
    environment: str | None,
    attributes: dict[str, AttributeValue],
    stacktrace: str | None = None,
    severity: str | None = None,
    fatal: bool = False,
    parent_span_id: str | None = None,
    span_kind: str | None = None,
    context: list[ContextRecord] | None = None,
) -> ErrorEvent:
    """`ErrorEvent.of_typed` of these values (each of its field's type), `given` the fields the record gave
    (the others are at the model's defaults): `in_order` of them (tests pin it equal to `of_typed`, field
    order included)."""
    return in_order(
        given,
        event_id,
        timestamp,
        service,
        kind,
        error_type,
        message,
        stacktrace,
        error_code,
        severity,
        fatal,
        trace_id,
        span_id,
        parent_span_id,
        span_kind,
        service_version,
        environment,
        attributes,
        context,
    )


def in_order(
    given: frozenset[str],
    event_id: str,
    timestamp: datetime,
    service: str,
    kind: EventKind,
    error_type: str | None,
    message: str,
    stacktrace: str | None,
    error_code: str | None,
    severity: str | None,
    fatal: bool,
    trace_id: str | None,
    span_id: str | None,
    parent_span_id: str | None,
    span_kind: str | None,
    service_version: str | None,
    environment: str | None,
    attributes: dict[str, AttributeValue],
    context: list[ContextRecord] | None,
) -> ErrorEvent:
    """`assembled`, its values given by position in the model's order (the builders' call, once an event:
    a call by keyword costs more than the event's own dict). The event's fields are a copy of the template
    (its keys already in the model's order, so the copy is one block) with each value written in place."""
    values = _TEMPLATE.copy()
    values["event_id"] = event_id
    values["timestamp"] = timestamp
    values["service"] = service
    values["kind"] = kind
    values["error_type"] = error_type
    values["message"] = message
    values["stacktrace"] = stacktrace
    values["error_code"] = error_code
    values["severity"] = severity
    values["fatal"] = fatal
    values["trace_id"] = trace_id
    values["span_id"] = span_id
    values["parent_span_id"] = parent_span_id
    values["span_kind"] = span_kind
    values["service_version"] = service_version
    values["environment"] = environment
    values["attributes"] = attributes
    values["context"] = [] if context is None else context
    return assembled_event(values, _SHARED_GIVEN.get(given) or set(given))


#: every field of an event, in the model's order, at the value no OTLP record changes (the others are
#: written over): written out, so a field the model gains shows in the tests rather than being left out
_TEMPLATE: dict[str, object] = {
    "event_id": None,
    "timestamp": None,
    "service": None,
    "kind": None,
    "error_type": None,
    "message": None,
    "stacktrace": None,
    "error_code": None,
    "severity": None,
    "fatal": False,
    "trace_id": None,
    "span_id": None,
    "parent_span_id": None,
    "span_kind": None,
    "service_version": None,
    "environment": None,
    "attributes": None,
    "source_group_id": None,
    "count": 1,
    "source_url": None,
    "context": None,
}
