"""What the pydantic models of OTLP/JSON (`otlp_json.py`) accept without coercion, checked on the plain
structures orjson makes of a line: the lean reading (`otlp_lean.py`) takes a line only when every object in
it passes, and leaves any other line to the models, which accept or refuse it and say why.

    line = checked_document(orjson.loads(raw))    # raises NotLean: read the line with the models

What the reading takes of each record that is an error (its `SpanFacts` or `LogFacts`, the values the models
would hold) is read in the same pass as the record is checked, each value as soon as it passed: a record is
walked once, not once to check it and again to read it. Records that are not errors are only checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from rounds_bot.models import AttributeValue
from rounds_bot.sources.otlp_build import SEVERITY_BY_TEXT, SEVERITY_ERROR, LogFacts, SpanFacts
from rounds_bot.sources.otlp_json import (
    STATUS_CODE_ERROR,
    OtlpModel,
    _double,
    flatten_into,
    is_exception_event,
    message_text,
    to_text,
)
from rounds_bot.sources.otlp_lean_scalars import (
    NotLean,
    lean_bool,
    lean_double,
    lean_int,
    lean_severity_number,
    lean_span_id,
    lean_status_code,
    lean_trace_id,
    read_id,
)

Plain = dict[str, Any]
Read = TypeVar("Read")


class LeanSpan(NamedTuple):
    """What the lean reading takes of a span that is an error, read as it was checked."""

    facts: SpanFacts
    #: its `exception` events, in order: index among the span's events, time in nanoseconds (0: none given),
    #: and the event's own attributes, flat
    exceptions: list[tuple[int, int, dict[str, AttributeValue]]]


@dataclass(frozen=True)
class LeanScope(Generic[Read]):
    """One scope of one resource, with its records as plain structures and, for each, what was read of it
    when it is an error (None for the others; `read` is empty when the records were not checked)."""

    resource: Plain
    scope: Plain
    records: list[Plain]
    read: list[Read | None] = field(default_factory=list)


@dataclass(frozen=True)
class LeanLine:
    spans: list[LeanScope[LeanSpan]]
    logs: list[LeanScope[LogFacts]]


def _snake_spellings(model: type[OtlpModel]) -> frozenset[str]:
    """The field names of the model and of every model under it that differ from their camelCase alias."""
    own = {name for name, field in model.model_fields.items() if field.alias and field.alias != name}
    return frozenset(own).union(*(_snake_spellings(sub) for sub in model.__subclasses__()))


# The snake_case spellings the models accept too (populate_by_name): a line that uses one in an object of
# a model is read by them (an object of no model, such as a string's content, is not asked).
_SNAKE = _snake_spellings(OtlpModel)


def _no_snake(obj: Plain) -> Plain:
    """The object of a model, checked not to spell a field in snake_case (keys as orjson decoded them, so a
    key spelled with an escape is seen as what it is)."""
    if not _SNAKE.isdisjoint(obj):  # the object's keys, each looked up in the set: no view is made
        raise NotLean
    return obj


def _model_object(value: object) -> Plain:
    """`_no_snake(_object(value))` in one call: it runs for every record and span event of a line."""
    if not isinstance(value, dict) or not _SNAKE.isdisjoint(value):
        raise NotLean
    return value


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


_MISSING = object()


def _field(obj: Plain, name: str, check: Callable[[object], Any]) -> None:
    value = obj.get(name, _MISSING)
    if value is not _MISSING:
        check(value)


def checked_document(document: object) -> LeanLine:
    line = _model_object(document)
    spans = line.get("resourceSpans")
    logs = line.get("resourceLogs")
    if spans is None and logs is None:
        raise NotLean  # another signal, or not an export request: the models say which
    return LeanLine(
        spans=[] if spans is None else _scopes(_list(spans), "scopeSpans", "spans", _span),
        logs=[] if logs is None else _scopes(_list(logs), "scopeLogs", "logRecords", _log_record),
    )


def _scopes(
    resources: list[Any], scopes_key: str, records_key: str, check: Callable[[Plain], Read | None]
) -> list[LeanScope[Read]]:
    found: list[LeanScope[Read]] = []
    for item in resources:
        resource_scopes = _model_object(item)
        resource = _object(resource_scopes.get("resource", {}))
        _field(resource, "attributes", _key_values)
        for scope_item in _list(resource_scopes.get(scopes_key, [])):
            scoped = _model_object(scope_item)
            scope = _object(scoped.get("scope", {}))
            _field(scope, "name", _str)
            _field(scope, "version", _str)
            records = _list(scoped.get(records_key, []))
            # each record checked to be a model's object in place (`_model_object`): one call fewer a record
            read = [
                check(record) if type(record) is dict and _SNAKE.isdisjoint(record) else _refused()
                for record in records
            ]
            found.append(LeanScope(resource, scope, records, read))
    return found


def _refused() -> Any:
    """`_model_object`'s refusal, as an expression (a comprehension cannot hold a `raise`)."""
    raise NotLean


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


def flat_key_values(value: object) -> dict[str, AttributeValue]:
    """`_key_values`'s check and the reading `otlp_json.flatten_attributes` makes of the same KeyValues, in
    one pass."""
    flat: dict[str, AttributeValue] = {}
    for pair in _list(value):
        if type(pair) is not dict or type(key := pair.get("key")) is not str:
            raise NotLean
        item = pair.get("value", _MISSING)
        if item is _MISSING:
            continue  # no value: left out, as `flatten_into` leaves out an empty one
        if type(item) is dict and len(item) == 1:
            string = item.get("stringValue")
            if type(string) is str:
                flat[key] = string  # the usual attribute: one string
                continue
        _any_value(item)
        string = item.get("stringValue")
        if string is not None:
            flat[key] = string  # what `decode_plain` gives first, taken as it is
        else:
            flatten_into(flat, key, decode_plain(item))
    return flat


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


def body_text(body: Plain) -> str:
    """A checked log body as the models' reading takes it for its id: its string, or its value as one line of
    text (`otlp_json.to_text`)."""
    string = body.get("stringValue")
    return string if string is not None else to_text(decode_plain(body))


def message_of(body: Plain) -> str:
    """A checked log body as its message reads it: its string, or its value as `otlp_json.message_text`
    spells it (a map's keys sorted)."""
    string = body.get("stringValue")
    return string if string is not None else message_text(decode_plain(body))


def _any_value(value: object) -> None:
    any_value = _object(value)
    if len(any_value) == 1 and type(any_value.get("stringValue")) is str:
        return  # the usual attribute: one string
    _no_snake(any_value)
    for name, check in _ANY_FIELDS:
        item = any_value.get(name)
        if item is not None:
            check(item)


def _array(value: object) -> None:
    for item in _list(_object(value).get("values", [])):
        _any_value(item)


def _kvlist(value: object) -> None:
    _key_values(_object(value).get("values", []))


_ANY_FIELDS: tuple[tuple[str, Callable[[object], Any]], ...] = (
    ("stringValue", _str),
    ("boolValue", lean_bool),
    ("intValue", lean_int),
    ("doubleValue", lean_double),
    ("arrayValue", _array),
    ("kvlistValue", _kvlist),
    ("bytesValue", _str),
)


def _span(span: Plain) -> LeanSpan | None:
    """The span checked (`_field` written out for each field, the usual spellings checked in place: this runs
    for every span of every line); what the reading takes of it read as it passes, when it is an error."""
    get = span.get
    trace_id = read_id(get("traceId", ""), 32, lean_trace_id)
    span_id = read_id(get("spanId", ""), 16, lean_span_id)
    parent = get("parentSpanId", "")
    parent_span_id = "" if parent == "" else read_id(parent, 16, lean_span_id)  # a root span has none
    name = get("name", "")
    if type(name) is not str:
        raise NotLean
    kind = get("kind", 0)
    if type(kind) not in (int, str):
        raise NotLean  # the model's `int | str` converts a float or a boolean, and refuses the rest
    # a time read as `lean_int` reads it, its usual spelling (decimal digits) without the call
    start, end = get("startTimeUnixNano", 0), get("endTimeUnixNano", 0)
    start = int(start) if type(start) is str and start.isascii() and start.isdigit() else lean_int(start)
    end = int(end) if type(end) is str and end.isascii() and end.isdigit() else lean_int(end)
    exceptions: list[tuple[int, int, dict[str, AttributeValue]]] = []
    for index, item in enumerate(_list(get("events", []))):
        event = _model_object(item)
        at = event.get("timeUnixNano", 0)
        at = int(at) if type(at) is str and at.isascii() and at.isdigit() else lean_int(at)
        event_name = event.get("name", "")
        if type(event_name) is not str:
            raise NotLean
        if is_exception_event(event_name):
            exceptions.append((index, at, flat_key_values(event.get("attributes", []))))
            continue
        value = event.get("attributes", _MISSING)
        if value is not _MISSING:
            _key_values(value)
    status = _object(get("status", {}))
    code = status.get("code", _MISSING)
    # an integer code, the usual spelling, compared as it is (`lean_status_code` reads any other)
    if code is not _MISSING and type(code) is not int:
        code = lean_status_code(code)
    failed = code == STATUS_CODE_ERROR
    message = status.get("message", "")
    if type(message) is not str:
        raise NotLean
    if not exceptions and not failed:
        value = get("attributes", _MISSING)
        if value is not _MISSING:
            _key_values(value)
        return None  # not an error: checked, not read
    return LeanSpan(
        SpanFacts(  # by position, in the fields' order: a call by keyword costs twice
            trace_id,
            span_id,
            parent_span_id,
            name,
            kind,
            start,
            end,
            message,
            flat_key_values(get("attributes", [])),
        ),
        exceptions,
    )


def _log_record(record: Plain) -> LogFacts | None:
    """The log record checked; what the reading takes of it read as it passes, when it is an error (one below
    ERROR is read only for the context of the errors after it: `otlp_lean.log_neighbour`)."""
    get = record.get
    at = get("timeUnixNano", 0)  # as `_span` reads a time
    time_unix_nano = int(at) if type(at) is str and at.isascii() and at.isdigit() else lean_int(at)
    observed_time_unix_nano = lean_int(get("observedTimeUnixNano", 0))
    severity_number = lean_severity_number(get("severityNumber", 0))
    severity_text = get("severityText", "")
    event_name = get("eventName", "")
    if type(severity_text) is not str or type(event_name) is not str:
        raise NotLean
    body = get("body")
    if body is not None:
        _any_value(body)
    trace_id = read_id(get("traceId", ""), 32, lean_trace_id)
    span_id = read_id(get("spanId", ""), 16, lean_span_id)
    error = severity_number or (SEVERITY_ERROR if severity_text.strip().upper() in SEVERITY_BY_TEXT else 0)
    if error < SEVERITY_ERROR:
        value = get("attributes", _MISSING)
        if value is not _MISSING:
            _key_values(value)
        return None
    return LogFacts(  # by position, as `_span` makes its tuple
        trace_id,
        span_id,
        time_unix_nano,
        observed_time_unix_nano,
        severity_number,
        severity_text,
        event_name,
        "" if body is None else body_text(body),
        flat_key_values(get("attributes", [])),
        None if body is None or body.get("stringValue") is not None else message_of(body),
    )
