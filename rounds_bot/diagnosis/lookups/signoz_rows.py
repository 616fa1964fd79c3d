"""The builder requests of the SigNoz look-ups, and the rows they return read into records.

A trace is read as `raw` spans with the fields in TRACE_FIELDS (the first exception event's type,
message and stack trace kept as attributes); logs with SigNoz's default log columns. The texts are
redacted once, by the look-up tools that answer the model (`tools.one_line`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from rounds_bot.diagnosis.lookups.scope import LogRow, SpanRecord
from rounds_bot.sources.signoz.queries import MAX_V5_LIMIT
from rounds_bot.sources.signoz.times import check_unix_ns, datetime_to_ns, ns_to_datetime, parse_rfc3339_ns
from rounds_bot.sources.signoz.wire import body_message, exception_event

#: the span fields a trace look-up reads (SigNoz adds timestamp, trace_id and span_id itself)
TRACE_FIELDS = (
    ("service.name", "resource", "string"),
    ("name", "span", "string"),
    ("parent_span_id", "span", "string"),
    ("kind_string", "span", "string"),
    ("duration_nano", "span", "number"),
    ("status_code", "span", "number"),
    ("status_message", "span", "string"),
    ("http_method", "span", "string"),
    ("http_url", "span", "string"),
    ("response_status_code", "span", "string"),
    ("events", "span", None),
)
STATUS_NAMES = {0: "UNSET", 1: "OK", 2: "ERROR"}
EXCEPTION_ATTRIBUTES = ("exception.type", "exception.message", "exception.stacktrace")


def _field(name: str, context: str, data_type: str | None) -> dict[str, str]:
    field = {"name": name, "fieldContext": context}
    if data_type:
        field["fieldDataType"] = data_type
    return field


def _builder(
    signal: str,
    expression: str,
    *,
    order: list[tuple[str, str]],
    limit: int,
    fields: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "A",
        "signal": signal,
        "disabled": False,
        "filter": {"expression": expression},
        "order": [{"key": {"name": key}, "direction": direction} for key, direction in order],
        "limit": limit,
        "offset": 0,
    }
    if fields:
        spec["selectFields"] = [{**field, "signal": signal} for field in fields]
    return {"type": "builder_query", "spec": spec}


def trace_spec(expression: str, limit: int) -> dict[str, Any]:
    """Spans matching `expression`, oldest first, with the fields of TRACE_FIELDS."""
    fields = [_field(name, context, kind) for name, context, kind in TRACE_FIELDS]
    return _builder("traces", expression, order=[("timestamp", "asc")], limit=limit, fields=fields)


def logs_spec(expression: str, direction: str, limit: int) -> dict[str, Any]:
    # No selectFields: SigNoz then returns its default log columns, the shape the source reads.
    return _builder("logs", expression, order=[("timestamp", direction), ("id", direction)], limit=limit)


def bounded(limit: int, ceiling: int) -> int:
    """A row limit of at least 1, at most `ceiling` and at most what a v5 query accepts."""
    return max(1, min(int(limit), ceiling, MAX_V5_LIMIT))


def span_record(trace_id: str, data: dict[str, Any]) -> SpanRecord:
    status_code = data.get("status_code")
    attributes = {
        "kind": data.get("kind_string"),
        "status_message": data.get("status_message"),
        "http.method": data.get("http_method"),
        "http.url": data.get("http_url"),
        "http.status_code": data.get("response_status_code"),
        **_exception_attributes(data.get("events")),
    }
    duration = data.get("duration_nano")
    return SpanRecord(
        trace_id=trace_id,
        span_id=_text(data.get("span_id")) or None,
        parent_span_id=_text(data.get("parent_span_id")) or None,
        name=_text(data.get("name")) or "(unnamed span)",
        service=_text(data.get("service.name")) or "unknown",
        start=_moment(data.get("timestamp") or data.get("__row_timestamp")),
        duration_ms=round(float(duration) / 1e6, 3) if isinstance(duration, int | float) else None,
        status=STATUS_NAMES.get(status_code, str(status_code)) if isinstance(status_code, int) else None,
        attributes={key: _text(value) for key, value in attributes.items() if value not in (None, "")},
    )


def _exception_attributes(events: Any) -> dict[str, str]:
    """The first exception event's type, message and stack trace."""
    event = exception_event(events)
    if event is None:
        return {}
    attributes = event.get("attributes") or event.get("attributeMap") or {}
    return {key: str(attributes[key]) for key in EXCEPTION_ATTRIBUTES if attributes.get(key)}


def log_record(data: dict[str, Any]) -> LogRow:
    resources = data.get("resources_string") or {}
    attributes = data.get("attributes_string") or {}
    body = _body(data.get("body"))
    exception = ": ".join(
        str(attributes[key]) for key in ("exception.type", "exception.message") if attributes.get(key)
    )
    if exception and exception not in body:
        body = f"{body} [{_text(exception)}]" if body else _text(exception)
    return LogRow(
        timestamp=_moment(data.get("timestamp") or data.get("__row_timestamp")),
        service=_text(resources.get("service.name")) or None,
        severity=_text(data.get("severity_text")) or _severity_of(data.get("severity_number")),
        body=body,
        trace_id=_text(data.get("trace_id")) or None,
    )


def _body(value: Any) -> str:
    """A row's body as text: a JSON body's message (`wire.body_message`) then the compact JSON of its other
    fields, as the model needs the structured fields (an error, an order id) the message leaves out; the
    JSON alone when it holds no message. Cut to length, message first, where every body is
    (`tools.one_line`)."""
    message = body_message(value)
    if message is None:
        return _text(value)
    # a `message` that is not text is not the message: it stays among the fields
    shown = "message" if isinstance(value.get("message"), str) else None
    rest = {key: field for key, field in value.items() if key != shown}
    fields = json.dumps(rest, separators=(",", ":"), ensure_ascii=False, default=str) if rest else ""
    return " ".join(part for part in (message, fields) if part)


def _severity_of(number: Any) -> str | None:
    if not isinstance(number, int) or number <= 0:
        return None
    return ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")[min((number - 1) // 4, 5)]


def _moment(value: Any) -> datetime | None:
    """Log rows carry integer nanoseconds, trace rows RFC 3339 text."""
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            return ns_to_datetime(check_unix_ns(value, "timestamp"))
        if isinstance(value, str) and value:
            return ns_to_datetime(parse_rfc3339_ns(value))
    except ValueError:
        return None
    return None


def ns_of(moment: datetime | None) -> int:
    """A record's time in Unix nanoseconds; a record without one sorts first."""
    return datetime_to_ns(moment or datetime.min.replace(tzinfo=UTC))


def _text(value: Any) -> str:
    return "" if value is None else str(value)
