"""OTLP/JSON lines read lean: orjson into plain structures, the pydantic models (`otlp_json.py`) only for
the records that are errors and were not counted before.

    records = lean_records(raw_line)    # None: the line is not plainly well-formed, read it with the models

A line is read lean only when every object in it has exactly the JSON types the models accept without
coercion (strings where a string is due, integers or decimal strings for 64-bit integers, ...). Anything
else (a value of another type, a field spelled in snake_case, JSON orjson refuses) returns None, and the
caller reads the line with the models, which accept or refuse it and say why exactly as before. So the
lean reading never accepts a line the models refuse, and gives the same events for every line it accepts:
the error records it returns are validated by the same models, one record at a time.

What a record is identified by (`span_identity`, `log_identity`) and when it happened are computed from the
plain structures, so a record already counted costs a JSON parse and a hash, never a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from rounds_bot.models import AttributeValue
from rounds_bot.sources.otlp_json import (
    _STATUS_CODE_NAMES,
    STATUS_CODE_ERROR,
    _double,
    _flatten_into,
    _id,
    _integer,
    to_text,
)

_SEVERITY_WORDS_ERROR = frozenset(
    {"ERROR", "ERR", "SEVERE", "CRITICAL", "CRIT", "ALERT", "EMERGENCY", "FATAL", "PANIC"}
)


class NotLean(Exception):
    """The line holds something the models would coerce or refuse: read it with them."""


Plain = dict[str, Any]


@dataclass(frozen=True)
class LeanScope:
    """One scope of one resource, with its records as plain structures."""

    resource: Plain
    scope: Plain
    records: list[Plain]


@dataclass(frozen=True)
class LeanLine:
    spans: list[LeanScope]
    logs: list[LeanScope]


def lean_line(raw: bytes | str) -> LeanLine | None:
    """The line's scopes and records, checked; None when the line must be read with the models."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _SNAKE_HINT.search(data) and _SNAKE_KEY.search(data):
        return None
    try:
        document = orjson.loads(data)
        if b"\\u" in data and _SNAKE_KEY.search(orjson.dumps(document)):
            return None  # a key spelled with an escape, seen as orjson writes it back
        return _line(document)
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


# --- what the models accept, checked on plain structures -------------------------------------------

# The snake_case spellings the models accept too (populate_by_name): a line that uses one is read by them.
_SNAKE = frozenset(
    {
        "resource_spans",
        "resource_logs",
        "scope_spans",
        "scope_logs",
        "log_records",
        "trace_id",
        "span_id",
        "parent_span_id",
        "start_time_unix_nano",
        "end_time_unix_nano",
        "time_unix_nano",
        "observed_time_unix_nano",
        "severity_number",
        "severity_text",
        "event_name",
        "string_value",
        "bool_value",
        "int_value",
        "double_value",
        "array_value",
        "kvlist_value",
        "bytes_value",
    }
)


# Found in the raw line, once: a key in quotes (a string value spelled so sends the line to the models too,
# which read it the same).
_SNAKE_KEY = re.compile(b'"(?:' + b"|".join(name.encode() for name in sorted(_SNAKE)) + b')"')


# Every one of those names ends so: a line without any of these endings holds none (a quicker scan: it looks
# only at underscores, which are rarer than quotes).
_SNAKE_HINT = re.compile(
    b"_(?:" + b"|".join(sorted({name.rsplit("_", 1)[1].encode() for name in _SNAKE})) + b')"'
)


def _object(value: object) -> Plain:
    if not isinstance(value, dict):
        raise NotLean
    return value


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise NotLean
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise NotLean
    return value


def _int(value: object) -> int:
    if type(value) is int:
        return value
    if type(value) is str and value.isascii() and value.isdigit():
        return int(value)  # the usual spelling of a time: what `_integer` makes of it, without its regex
    try:
        return _integer(value)
    except ValueError:
        raise NotLean from None


_MISSING = object()


def _field(obj: Plain, name: str, check: Callable[[object], Any]) -> None:
    value = obj.get(name, _MISSING)
    if value is not _MISSING:
        check(value)


def _line(document: object) -> LeanLine:
    line = _object(document)
    spans = line.get("resourceSpans")
    logs = line.get("resourceLogs")
    if spans is None and logs is None:
        raise NotLean  # another signal, or not an export request: the models say which
    return LeanLine(
        spans=[] if spans is None else _scopes(_list(spans), "scopeSpans", "spans", _span),
        logs=[] if logs is None else _scopes(_list(logs), "scopeLogs", "logRecords", _log_record),
    )


def _scopes(
    resources: list[Any], scopes_key: str, records_key: str, check: Callable[[Plain], None]
) -> list[LeanScope]:
    found: list[LeanScope] = []
    for item in resources:
        resource_scopes = _object(item)
        resource = _object(resource_scopes.get("resource", {}))
        _field(resource, "attributes", _key_values)
        for scope_item in _list(resource_scopes.get(scopes_key, [])):
            scoped = _object(scope_item)
            scope = _object(scoped.get("scope", {}))
            _field(scope, "name", _str)
            _field(scope, "version", _str)
            records = _list(scoped.get(records_key, []))
            for record in records:
                check(_object(record))
            found.append(LeanScope(resource, scope, records))
    return found


def _key_values(value: object) -> None:
    for pair in _list(value):
        if type(pair) is not dict or type(pair.get("key")) is not str:
            raise NotLean  # orjson makes exactly dicts and strs: `_object` and `_str` said the same
        item = pair.get("value", _MISSING)
        if item is _MISSING:
            continue
        if type(item) is dict and len(item) == 1 and type(item.get("stringValue")) is str:
            continue  # the usual attribute: one string (`_any_value`'s first case, without the call)
        _any_value(item)


def _any_value(value: object) -> None:
    any_value = _object(value)
    if len(any_value) == 1 and type(any_value.get("stringValue")) is str:
        return  # the usual attribute: one string
    for name, check in _ANY_FIELDS:
        item = any_value.get(name)
        if item is not None:
            check(item)


def _bool(value: object) -> None:
    if not isinstance(value, bool):
        raise NotLean


def _double_value(value: object) -> None:
    try:
        _double(value)
    except ValueError:
        raise NotLean from None


def _array(value: object) -> None:
    for item in _list(_object(value).get("values", [])):
        _any_value(item)


def _kvlist(value: object) -> None:
    _key_values(_object(value).get("values", []))


_ANY_FIELDS: tuple[tuple[str, Callable[[object], Any]], ...] = (
    ("stringValue", _str),
    ("boolValue", _bool),
    ("intValue", _int),
    ("doubleValue", _double_value),
    ("arrayValue", _array),
    ("kvlistValue", _kvlist),
    ("bytesValue", _str),
)


def _trace_id(value: object) -> str:
    try:
        return _id(value, 16)
    except ValueError:
        raise NotLean from None


def _span_id(value: object) -> str:
    try:
        return _id(value, 8)
    except ValueError:
        raise NotLean from None


_HEX_DIGITS = re.compile(r"[0-9a-fA-F]*").fullmatch


def _span(span: Plain) -> None:
    # `_field` written out for each field (and the usual spellings checked in place): this runs for every
    # span of every line, most of them counted before
    get = span.get
    _ids(get)
    value = get("name", _MISSING)
    if value is not _MISSING and type(value) is not str:
        raise NotLean
    value = get("kind", _MISSING)
    if value is not _MISSING and type(value) not in (int, str):
        raise NotLean  # the model's `int | str` converts a float or a boolean, and refuses the rest
    for name in ("startTimeUnixNano", "endTimeUnixNano"):
        value = get(name, _MISSING)
        if value is not _MISSING and not _usual_int(value):
            _int(value)
    value = get("attributes", _MISSING)
    if value is not _MISSING:
        _key_values(value)
    for item in _list(get("events", [])):
        event = _object(item)
        value = event.get("timeUnixNano", _MISSING)
        if value is not _MISSING and not _usual_int(value):
            _int(value)
        value = event.get("name", _MISSING)
        if value is not _MISSING and type(value) is not str:
            raise NotLean
        value = event.get("attributes", _MISSING)
        if value is not _MISSING:
            _key_values(value)
    status = _object(get("status", {}))
    _field(status, "code", _status_code)
    _field(status, "message", _str)


def _usual_int(value: object) -> bool:
    """An integer, or one in decimal digits (how OTLP/JSON writes 64-bit integers): what `_int` takes without
    asking `_integer`."""
    return type(value) is int or (type(value) is str and value.isascii() and value.isdigit())


def _ids(
    get: Callable[[str, object], object], span_ids: tuple[str, ...] = ("spanId", "parentSpanId")
) -> None:
    """A record's trace id and span ids (a span's own and its parent's), as `_trace_id` and `_span_id`
    check them."""
    value = get("traceId", _MISSING)
    if value is not _MISSING and not (type(value) is str and len(value) == 32 and _HEX_DIGITS(value)):
        _trace_id(value)
    for name in span_ids:
        value = get(name, _MISSING)
        if value is not _MISSING and not (type(value) is str and len(value) == 16 and _HEX_DIGITS(value)):
            _span_id(value)


def _status_code(value: object) -> int:
    if isinstance(value, str) and value in _STATUS_CODE_NAMES:
        return _STATUS_CODE_NAMES[value]
    return _int(value)


def _log_record(record: Plain) -> None:
    get = record.get
    for name in ("timeUnixNano", "observedTimeUnixNano", "severityNumber"):
        value = get(name, _MISSING)
        if value is not _MISSING and type(value) is not int:
            _int(value)
    for name in ("severityText", "eventName"):
        value = get(name, _MISSING)
        if value is not _MISSING and type(value) is not str:
            raise NotLean
    body = get("body")
    if body is not None:
        _any_value(body)
    value = get("attributes", _MISSING)
    if value is not _MISSING:
        _key_values(value)
    _ids(get, ("spanId",))


# --- errors, identities and times on plain structures --------------------------------------------


def exception_indexes(span: Plain) -> list[int]:
    """Indexes of the span's `exception` events."""
    return [
        index for index, event in enumerate(span.get("events", ())) if event.get("name", "") == "exception"
    ]


def span_is_error(span: Plain) -> bool:
    status = span.get("status", {})
    return "code" in status and _status_code(status["code"]) == STATUS_CODE_ERROR


def log_severity(record: Plain) -> int:
    number = _int(record.get("severityNumber", 0))
    if number:
        return number
    text = record.get("severityText", "").strip().upper()
    return 17 if text in _SEVERITY_WORDS_ERROR else 0  # only "an error or not" is asked of it


def span_ids(span: Plain) -> tuple[str, str]:
    """A checked span's trace and span ids, as `_trace_id` and `_span_id` give them."""
    return checked_trace_id(span.get("traceId", "")), checked_span_id(span.get("spanId", ""))


def checked_trace_id(value: str) -> str:
    """The trace id of a checked record, as `otlp_json.trace_id` reads it."""
    return _checked_id(value, 32, _trace_id)


def checked_span_id(value: str) -> str:
    """A span id of a checked record (its own, or its parent's), as `otlp_json.span_id` reads it."""
    return _checked_id(value, 16, _span_id)


def checked_int(value: object) -> int:
    """An integer of a checked record (a time, a severity), as `otlp_json.int64` reads it."""
    return _int(value)


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
        moment = _int(span["events"][event_index].get("timeUnixNano", 0))
        if moment:
            return moment
    return _int(span.get("endTimeUnixNano", 0)) or _int(span.get("startTimeUnixNano", 0))


def log_moment(record: Plain) -> int:
    return _int(record.get("timeUnixNano", 0)) or _int(record.get("observedTimeUnixNano", 0))


def decode_plain(value: Plain) -> Any:
    """`otlp_json.decode_any_value` on a checked plain AnyValue."""
    for name in ("stringValue", "boolValue"):
        if value.get(name) is not None:
            return value[name]
    if value.get("intValue") is not None:
        return _int(value["intValue"])
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
        _flatten_into(flat, pair["key"], decode_plain(pair.get("value", {})))
    return flat


def log_neighbour(record: Plain, severity: int) -> tuple[str, int, str, int, str]:
    """A record below ERROR as `Neighbours.note` keeps it (trace id, time, severity text and number, body),
    as `otlp_events.neighbour_of` reads it from the models; `severity` is its `log_severity`. Most records are
    read only for this: a string body, the usual kind, is taken as it is, and a trace's id is decoded once."""
    body = record.get("body")
    if body is None:
        text = ""
    elif isinstance(string := body.get("stringValue"), str):
        text = string
    else:
        text = to_text(decode_plain(body))
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
    """`_trace_id` of a checked id (a line read lean holds only valid ones), remembered: a trace's records
    come together."""
    return _trace_id(value)


def span_moment_start(span: Plain) -> int:
    return _int(span.get("startTimeUnixNano", 0))
