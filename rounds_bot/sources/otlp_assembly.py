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
    (the others are at the model's defaults): the event's fields written out in the model's order, so that
    nothing is merged or checked once an event (tests pin it equal to `of_typed`, field order included)."""
    return assembled_event(
        {
            "event_id": event_id,
            "timestamp": timestamp,
            "service": service,
            "kind": kind,
            "error_type": error_type,
            "message": message,
            "stacktrace": stacktrace,
            "error_code": error_code,
            "severity": severity,
            "fatal": fatal,
            "trace_id": trace_id,
            "span_id": span_id,
            "parent_span_id": parent_span_id,
            "span_kind": span_kind,
            "service_version": service_version,
            "environment": environment,
            "attributes": attributes,
            "source_group_id": None,
            "count": 1,
            "source_url": None,
            "context": [] if context is None else context,
        },
        set(given),
    )
