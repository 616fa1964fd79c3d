"""What the pydantic models of OTLP/JSON (`otlp_json.py`) accept without coercion, checked on the plain
structures orjson makes of a line: the lean reading (`otlp_lean.py`) takes a line only when every object in
it passes, and leaves any other line to the models, which accept or refuse it and say why.

    line = checked_document(orjson.loads(raw))    # raises NotLean: read the line with the models
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rounds_bot.sources.otlp_json import _STATUS_CODE_NAMES, _double, _id, _integer


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


# The snake_case spellings the models accept too (populate_by_name): a line that uses one in an object of
# a model is read by them (an object of no model, such as a string's content, is not asked).
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


def _no_snake(obj: Plain) -> Plain:
    """The object of a model, checked not to spell a field in snake_case (keys as orjson decoded them, so a
    key spelled with an escape is seen as what it is)."""
    if not obj.keys().isdisjoint(_SNAKE):
        raise NotLean
    return obj


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


def lean_int(value: object) -> int:
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


def checked_document(document: object) -> LeanLine:
    line = _no_snake(_object(document))
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
        resource_scopes = _no_snake(_object(item))
        resource = _object(resource_scopes.get("resource", {}))
        _field(resource, "attributes", _key_values)
        for scope_item in _list(resource_scopes.get(scopes_key, [])):
            scoped = _no_snake(_object(scope_item))
            scope = _object(scoped.get("scope", {}))
            _field(scope, "name", _str)
            _field(scope, "version", _str)
            records = _list(scoped.get(records_key, []))
            for record in records:
                check(_no_snake(_object(record)))
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
    _no_snake(any_value)
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
    ("intValue", lean_int),
    ("doubleValue", _double_value),
    ("arrayValue", _array),
    ("kvlistValue", _kvlist),
    ("bytesValue", _str),
)


def lean_trace_id(value: object) -> str:
    try:
        return _id(value, 16)
    except ValueError:
        raise NotLean from None


def lean_span_id(value: object) -> str:
    try:
        return _id(value, 8)
    except ValueError:
        raise NotLean from None


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
            lean_int(value)
    value = get("attributes", _MISSING)
    if value is not _MISSING:
        _key_values(value)
    for item in _list(get("events", [])):
        event = _no_snake(_object(item))
        value = event.get("timeUnixNano", _MISSING)
        if value is not _MISSING and not _usual_int(value):
            lean_int(value)
        value = event.get("name", _MISSING)
        if value is not _MISSING and type(value) is not str:
            raise NotLean
        value = event.get("attributes", _MISSING)
        if value is not _MISSING:
            _key_values(value)
    status = _object(get("status", {}))
    _field(status, "code", lean_status_code)
    _field(status, "message", _str)


def _usual_int(value: object) -> bool:
    """An integer, or one in decimal digits (how OTLP/JSON writes 64-bit integers): what `lean_int` takes
    without asking `_integer`."""
    return type(value) is int or (type(value) is str and value.isascii() and value.isdigit())


def _ids(
    get: Callable[[str, object], object], span_ids: tuple[str, ...] = ("spanId", "parentSpanId")
) -> None:
    """A record's trace id and span ids (a span's own and its parent's), as `lean_trace_id` and `lean_span_id`
    check them."""
    value = get("traceId", _MISSING)
    if value is not _MISSING and not (type(value) is str and len(value) == 32 and _hex(value)):
        lean_trace_id(value)
    for name in span_ids:
        value = get(name, _MISSING)
        if value is not _MISSING and not (type(value) is str and len(value) == 16 and _hex(value)):
            lean_span_id(value)


def _hex(value: str) -> bool:
    """Hex digits only (a twice quicker test than a regex's): `fromhex` refuses any other character but
    whitespace between two digits, and whitespace leaves fewer bytes than half the characters."""
    try:
        return len(bytes.fromhex(value)) * 2 == len(value)
    except ValueError:
        return False


def lean_status_code(value: object) -> int:
    if isinstance(value, str) and value in _STATUS_CODE_NAMES:
        return _STATUS_CODE_NAMES[value]
    return lean_int(value)


def _log_record(record: Plain) -> None:
    get = record.get
    for name in ("timeUnixNano", "observedTimeUnixNano", "severityNumber"):
        value = get(name, _MISSING)
        if value is not _MISSING and not _usual_int(value):
            lean_int(value)
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
