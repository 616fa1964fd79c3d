"""OTLP/JSON lines read lean: orjson into plain structures, an event built only for the records that are
errors and were not counted before.

    line = lean_line(raw_line)    # None: the line is not plainly well-formed, read it with the models

A line is read lean only when every object in it has exactly the JSON types the models accept without
coercion (strings where a string is due, integers or decimal strings for 64-bit integers, ...; checked by
`otlp_lean_check.py`). Anything else (a value of another type, a field spelled in snake_case, JSON orjson
refuses) returns None, and the caller reads the line with the models, which accept or refuse it and say why
exactly as before. So the lean reading never accepts a line the models refuse, and gives the same events for
every line it accepts: the facts of a record read here (`span_facts`, `log_facts`, `origin_of`) are the ones
the models' reading takes (`otlp_events.py`), and both build the event alike (`otlp_build.py`).

What a record is identified by and when it happened are computed from the plain structures, so a record
already counted costs a JSON parse and a hash, never an event.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson

from rounds_bot.models import AttributeValue
from rounds_bot.sources.otlp_build import SEVERITY_BY_TEXT, SEVERITY_ERROR, LogFacts, Origin, SpanFacts
from rounds_bot.sources.otlp_json import STATUS_CODE_ERROR, _double, _flatten_into, to_text
from rounds_bot.sources.otlp_lean_check import (
    LeanLine,
    LeanScope,
    NotLean,
    Plain,
    checked_document,
    lean_int,
    lean_span_id,
    lean_status_code,
    lean_trace_id,
)

__all__ = [  # with the types of what `lean_line` gives
    "LeanLine",
    "LeanScope",
    "checked_logs",
    "checked_span_id",
    "checked_trace_id",
    "decode_plain",
    "flatten_plain",
    "lean_line",
    "log_facts",
    "log_moment",
    "log_neighbour",
    "log_severity",
    "origin_of",
    "span_facts",
    "span_ids",
    "span_is_error",
    "span_moment",
]


def lean_line(raw: bytes | str) -> LeanLine | None:
    """The line's scopes and records, checked; None when the line must be read with the models."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:
        return checked_document(orjson.loads(data))
    except (orjson.JSONDecodeError, NotLean, ValueError, TypeError, KeyError):
        return None


def checked_logs(raw: bytes) -> list[LeanScope]:
    """The log scopes of a line `lean_line` accepted before (the same bytes), without checking it again."""
    document = orjson.loads(raw)
    return [
        LeanScope(resource_logs.get("resource", {}), scoped.get("scope", {}), scoped.get("logRecords", []))
        for resource_logs in document.get("resourceLogs", ())
        for scoped in resource_logs.get("scopeLogs", ())
    ]


# --- errors, identities and times on plain structures --------------------------------------------


def span_is_error(span: Plain) -> bool:
    status = span.get("status", {})
    return "code" in status and lean_status_code(status["code"]) == STATUS_CODE_ERROR


def log_severity(record: Plain) -> int:
    number = lean_int(record.get("severityNumber", 0))
    if number:
        return number
    text = record.get("severityText", "").strip().upper()
    return SEVERITY_ERROR if text in SEVERITY_BY_TEXT else 0  # only "an error or not" is asked of it


def span_ids(span: Plain) -> tuple[str, str]:
    """A checked span's trace and span ids, as `lean_trace_id` and `lean_span_id` give them."""
    return checked_trace_id(span.get("traceId", "")), checked_span_id(span.get("spanId", ""))


def checked_trace_id(value: str) -> str:
    """The trace id of a checked record, as `otlp_json.trace_id` reads it."""
    return _checked_id(value, 32, lean_trace_id)


def checked_span_id(value: str) -> str:
    """A span id of a checked record (its own, or its parent's), as `otlp_json.span_id` reads it."""
    return _checked_id(value, 16, lean_span_id)


def _checked_id(value: str, hex_length: int, slow: Callable[[object], str]) -> str:
    # an id `_ids` accepted that has the length of the hex spelling is hex (base64 of the same bytes is
    # shorter): lowercased, all zeros meaning no id, as `otlp_json._id` takes it, without its regex
    if len(value) != hex_length:
        return slow(value)
    text = value.lower()
    return text if text.strip("0") else ""


def span_moment(span: Plain, event_index: int | None) -> int:
    """The nanoseconds the error's event (or the span) happened at, as the models' reading takes them."""
    if event_index is not None:
        moment = lean_int(span["events"][event_index].get("timeUnixNano", 0))
        if moment:
            return moment
    return lean_int(span.get("endTimeUnixNano", 0)) or lean_int(span.get("startTimeUnixNano", 0))


def log_moment(record: Plain) -> int:
    return lean_int(record.get("timeUnixNano", 0)) or lean_int(record.get("observedTimeUnixNano", 0))


def decode_plain(value: Plain) -> Any:
    """`otlp_json.decode_any_value` on a checked plain AnyValue."""
    for name in ("stringValue", "boolValue"):
        if value.get(name) is not None:
            return value[name]
    if value.get("intValue") is not None:
        return lean_int(value["intValue"])
    if value.get("doubleValue") is not None:
        return _double(value["doubleValue"])
    if value.get("arrayValue") is not None:
        return [decode_plain(item) for item in value["arrayValue"].get("values", [])]
    if value.get("kvlistValue") is not None:
        return {
            pair["key"]: decode_plain(pair.get("value", {}))
            for pair in value["kvlistValue"].get("values", [])
        }
    if value.get("bytesValue") is not None:
        return value["bytesValue"]
    return None


def flatten_plain(pairs: list[Plain]) -> dict[str, AttributeValue]:
    """`otlp_json.flatten_attributes` on checked plain KeyValues."""
    flat: dict[str, AttributeValue] = {}
    for pair in pairs:
        value = pair.get("value")
        if value is None:
            continue  # no value: left out, as `_flatten_into` leaves out an empty one
        string = value.get("stringValue")
        if string is not None:
            flat[pair["key"]] = string  # the usual attribute: what `decode_plain` gives first, taken as it is
        else:
            _flatten_into(flat, pair["key"], decode_plain(value))
    return flat


def origin_of(resource: Plain, scope: Plain) -> Origin:
    """`otlp_events.origin_of`, from a checked resource and scope."""
    return Origin.of(flatten_plain(resource.get("attributes", [])), scope.get("name", ""))


def span_facts(span: Plain, trace_id: str, span_id: str) -> SpanFacts:
    """`otlp_events.span_facts` of a checked span, whose ids (`span_ids`) were read already: `otlp_lean_check`
    checked that each value is what the model would hold (or converts as the model does)."""
    status = span.get("status", {})
    return SpanFacts(  # by position, in the fields' order (named beside each): a call by keyword costs twice
        trace_id,
        span_id,
        checked_span_id(span.get("parentSpanId", "")),  # parent_span_id
        span.get("name", ""),  # name
        span.get("kind", 0),  # kind
        lean_int(span.get("startTimeUnixNano", 0)),  # start_time_unix_nano
        lean_int(span.get("endTimeUnixNano", 0)),  # end_time_unix_nano
        status.get("message", ""),  # status_message
        flatten_plain(span.get("attributes", [])),  # attributes
    )


def log_facts(record: Plain) -> LogFacts:
    """`otlp_events.log_facts` of a checked log record (checked as `span_facts` says)."""
    body = record.get("body")
    return LogFacts(  # by position, as `span_facts` makes its tuple
        checked_trace_id(record.get("traceId", "")),  # trace_id
        checked_span_id(record.get("spanId", "")),  # span_id
        lean_int(record.get("timeUnixNano", 0)),  # time_unix_nano
        lean_int(record.get("observedTimeUnixNano", 0)),  # observed_time_unix_nano
        lean_int(record.get("severityNumber", 0)),  # severity_number
        record.get("severityText", ""),  # severity_text
        record.get("eventName", ""),  # event_name
        "" if body is None else _body_text(body),  # body
        flatten_plain(record.get("attributes", [])),  # attributes
    )


def _body_text(body: Plain) -> str:
    string = body.get("stringValue")
    return string if string is not None else to_text(decode_plain(body))


def log_neighbour(record: Plain, severity: int) -> tuple[str, int, str, int, str]:
    """A record below ERROR as `Neighbours.note` keeps it (trace id, time, severity text and number, body),
    as `otlp_events.neighbour_of` reads it from the models; `severity` is its `log_severity`. Most records are
    read only for this: a string body, the usual kind, is taken as it is, and a trace's id is decoded once."""
    body = record.get("body")
    text = "" if body is None else _body_text(body)
    trace = record.get("traceId", "")
    return (
        _cached_trace_id(trace) if trace else "",
        log_moment(record),
        record.get("severityText", ""),
        severity,
        text,
    )


@lru_cache(maxsize=4_096)
def _cached_trace_id(value: str) -> str:
    """`lean_trace_id` of a checked id (a line read lean holds only valid ones), remembered: a trace's records
    come together."""
    return lean_trace_id(value)
