"""OpenTelemetry's OTLP/JSON encoding, as pydantic models, and the decoding of its AnyValue.

OTLP/JSON is the protobuf JSON mapping with a few rules of its own, all handled here:
- field names in lowerCamelCase (`timeUnixNano`, `resourceSpans`);
- trace and span ids as hex strings, not base64 (base64 ids, from protobuf's generic JSON
  printer, are accepted too and turned into hex, so both spellings give the same event ids);
- enums as integers (`"code": 2`);
- 64-bit integers (`timeUnixNano`, `intValue`) as decimal strings or as JSON numbers;
- attribute values as AnyValue objects: `{"stringValue": ..}`, `{"intValue": ..}`, arrays, kvlists;
- `null` for any field, which the mapping reads as the field's default.

Only the fields rounds reads are modelled; unknown fields are ignored, so a newer collector does
not break reading. A line that does not fit these models raises `SourceFormatError`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from rounds_bot.errors import SourceFormatError
from rounds_bot.models import AttributeValue

_DECIMAL_INTEGER = re.compile(r"-?\d+")
_HEX = re.compile(r"[0-9a-fA-F]*")

#: Status.code as the protobuf JSON mapping may also spell it (OTLP/JSON itself writes integers).
_STATUS_CODE_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
STATUS_CODE_ERROR = 2


def is_exception_event(name: str) -> bool:
    """A span event that records an exception: `exception`, as the semantic conventions name it, or one
    named `<prefix>.exception`, which the SigNoz collector indexes as an exception too (since v0.144.3); the
    SigNoz source reads both, so the same spans give the same errors from either source."""
    return name == "exception" or name.endswith(".exception")


#: LogRecord.severityNumber as the mapping may spell it (`logs.proto`'s SeverityNumber: each level's four
#: numbers, `SEVERITY_NUMBER_ERROR` = 17 to `SEVERITY_NUMBER_ERROR4` = 20)
SEVERITY_NUMBER_NAMES = {
    "SEVERITY_NUMBER_UNSPECIFIED": 0,
    **{
        f"SEVERITY_NUMBER_{level}{step if step > 1 else ''}": first + step - 1
        for first, level in (
            (1, "TRACE"),
            (5, "DEBUG"),
            (9, "INFO"),
            (13, "WARN"),
            (17, "ERROR"),
            (21, "FATAL"),
        )
        for step in range(1, 5)
    },
}
#: a JSON number, as the mapping allows a double's value written in a string (`"1.5"`, `"-2e3"`)
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")

#: Top-level keys of the other signals the collector's file exporter may write to the same file.
OTHER_SIGNAL_KEYS = frozenset({"resourceMetrics", "resourceProfiles"})


def _kind(value: object) -> str:
    """What a value is, never the value itself: a skip reason reaches stdout and the job summary, and a
    field that should hold an id or a number may hold a secret."""
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {int: "an integer", float: "a number", list: "an array", dict: "an object"}.get(
        type(value), "a value"
    )


def _integer(value: object) -> int:
    """A 64-bit integer as OTLP/JSON allows it: a JSON number or a decimal string."""
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _DECIMAL_INTEGER.fullmatch(value.strip()):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"expected an integer (a JSON number or a decimal string), got {_kind(value)}")


def _double(value: object) -> float:
    """A double; the protobuf JSON mapping spells the special values as strings, and accepts any value
    written as a JSON number in a string."""
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if isinstance(value, str) and _JSON_NUMBER.fullmatch(value):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {_kind(value)}")
    return float(value)


def _status_code(value: object) -> int:
    if isinstance(value, str) and value in _STATUS_CODE_NAMES:
        return _STATUS_CODE_NAMES[value]
    return _integer(value)


def severity_number(value: object) -> int:
    """A log record's severity number: an integer, or its name in OTLP's enum (`SEVERITY_NUMBER_ERROR`)."""
    if isinstance(value, str) and value in SEVERITY_NUMBER_NAMES:
        return SEVERITY_NUMBER_NAMES[value]
    return _integer(value)


def _id(value: object, byte_length: int) -> str:
    """A trace or span id as lowercase hex; "" when absent or all zeros (an invalid id)."""
    if not isinstance(value, str):
        raise ValueError(f"expected an id string, got {_kind(value)}")
    hex_length = byte_length * 2
    if len(value) == hex_length and _HEX.fullmatch(value):
        text = value.lower()
    elif value == "":
        return ""
    else:
        text = _hex_from_base64(value, byte_length)
    return "" if text.strip("0") == "" else text


def _hex_from_base64(value: str, byte_length: int) -> str:
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != byte_length:
        raise ValueError(
            f"expected {byte_length * 2} hex characters (OTLP/JSON writes ids in hex), got {_kind(value)}"
        )
    return raw.hex()


def int64(value: object) -> int:
    """A 64-bit integer field as the models read it (`Int64`)."""
    return _integer(value)


def trace_id(value: object) -> str:
    """A trace id as the models read it (`TraceId`)."""
    return _id(value, 16)


def span_id(value: object) -> str:
    """A span id as the models read it (`SpanId`)."""
    return _id(value, 8)


Int64 = Annotated[int, BeforeValidator(int64)]
Double = Annotated[float, BeforeValidator(_double)]
StatusCode = Annotated[int, BeforeValidator(_status_code)]
SeverityNumber = Annotated[int, BeforeValidator(severity_number)]
TraceId = Annotated[str, BeforeValidator(trace_id)]
SpanId = Annotated[str, BeforeValidator(span_id)]


class OtlpModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_the_default(cls, data: Any) -> Any:
        """A field written `null` is left out: the protobuf JSON mapping reads null as the field's default
        value, and a writer may spell an unset field so."""
        if isinstance(data, dict) and None in data.values():
            return {key: value for key, value in data.items() if value is not None}
        return data


class AnyValue(OtlpModel):
    """One of the value kinds; an object with none of them set is an empty (null) value."""

    string_value: str | None = None
    bool_value: bool | None = None
    int_value: Int64 | None = None
    double_value: Double | None = None
    array_value: ArrayValue | None = None
    kvlist_value: KeyValueList | None = None
    bytes_value: str | None = None


class ArrayValue(OtlpModel):
    values: list[AnyValue] = []


class KeyValue(OtlpModel):
    key: str
    value: AnyValue = Field(default_factory=lambda: AnyValue())


class KeyValueList(OtlpModel):
    values: list[KeyValue] = []


AnyValue.model_rebuild()


class Resource(OtlpModel):
    attributes: list[KeyValue] = []


class InstrumentationScope(OtlpModel):
    name: str = ""
    version: str = ""


class Status(OtlpModel):
    code: StatusCode = 0
    message: str = ""


class SpanEvent(OtlpModel):
    time_unix_nano: Int64 = 0
    name: str = ""
    attributes: list[KeyValue] = []


class Span(OtlpModel):
    trace_id: TraceId = ""
    span_id: SpanId = ""
    parent_span_id: SpanId = ""
    name: str = ""
    #: SpanKind: an integer in OTLP/JSON (1 internal, 2 server, 3 client, 4 producer, 5 consumer)
    kind: int | str = 0
    start_time_unix_nano: Int64 = 0
    end_time_unix_nano: Int64 = 0
    attributes: list[KeyValue] = []
    events: list[SpanEvent] = []
    status: Status = Status()


class ScopeSpans(OtlpModel):
    scope: InstrumentationScope = InstrumentationScope()
    spans: list[Span] = []


class ResourceSpans(OtlpModel):
    resource: Resource = Resource()
    scope_spans: list[ScopeSpans] = []


class LogRecord(OtlpModel):
    time_unix_nano: Int64 = 0
    observed_time_unix_nano: Int64 = 0
    severity_number: SeverityNumber = 0
    severity_text: str = ""
    body: AnyValue | None = None
    attributes: list[KeyValue] = []
    trace_id: TraceId = ""
    span_id: SpanId = ""
    event_name: str = ""


class ScopeLogs(OtlpModel):
    scope: InstrumentationScope = InstrumentationScope()
    log_records: list[LogRecord] = []


class ResourceLogs(OtlpModel):
    resource: Resource = Resource()
    scope_logs: list[ScopeLogs] = []


class ExportLine(OtlpModel):
    """One line of the file exporter's output: an ExportTraceServiceRequest or an
    ExportLogsServiceRequest (or a request of another signal, which rounds does not read)."""

    resource_spans: list[ResourceSpans] | None = None
    resource_logs: list[ResourceLogs] | None = None


class CutShort(SourceFormatError):
    """The line is the beginning of a JSON text, which ends too early: more bytes could make it whole."""


def parse_export_line(text: str | bytes) -> ExportLine:
    """One line of OTLP/JSON; raises SourceFormatError saying what is wrong and where in the line (CutShort
    when the JSON text stops before its end)."""
    try:
        line = ExportLine.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        cut = first["type"] == "json_invalid" and "EOF while parsing" in first["msg"]
        raise (CutShort if cut else SourceFormatError)(describe(exc)) from None
    if line.resource_spans is None and line.resource_logs is None and not _is_other_signal(text):
        raise SourceFormatError("neither resourceSpans nor resourceLogs: not an OTLP/JSON export request")
    return line


def _is_other_signal(text: str | bytes) -> bool:
    document = json.loads(text)
    return isinstance(document, dict) and not OTHER_SIGNAL_KEYS.isdisjoint(document)


def describe(error: ValidationError, at: str = "") -> str:
    """What is wrong, where in the line: `at` is the path to the object validated, when it is not the line."""
    first = error.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        return f"invalid JSON: {first['msg'].removeprefix('Invalid JSON: ')}"
    message = first["msg"].removeprefix("Value error, ")
    if not first["loc"] and not at:
        return f"not an OTLP/JSON export request: {message[0].lower()}{message[1:]}"
    location = ".".join(str(part) for part in (*([at] if at else []), *first["loc"]))
    more = error.error_count() - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"{location}: {message}{suffix}"


# --- AnyValue decoding ------------------------------------------------------------------------


def decode_any_value(value: AnyValue) -> Any:
    """The Python value of an AnyValue: scalars as they are, arrays as lists, kvlists as dicts,
    bytes as their base64 text, an empty value as None."""
    if value.string_value is not None:
        return value.string_value
    if value.bool_value is not None:
        return value.bool_value
    if value.int_value is not None:
        return value.int_value
    if value.double_value is not None:
        return value.double_value
    if value.array_value is not None:
        return [decode_any_value(item) for item in value.array_value.values]
    if value.kvlist_value is not None:
        return {pair.key: decode_any_value(pair.value) for pair in value.kvlist_value.values}
    if value.bytes_value is not None:
        return value.bytes_value
    return None


def flatten_attributes(pairs: list[KeyValue]) -> dict[str, AttributeValue]:
    """Attributes as flat str/int/float/bool values.

    A kvlist becomes dotted keys (`http.request.header.x` under `http.request.header`), an array
    becomes its JSON text (its order and element types matter and a flat value cannot hold them),
    and an empty value is left out. A later duplicate key wins, as in the SDKs.
    """
    flat: dict[str, AttributeValue] = {}
    for pair in pairs:
        flatten_into(flat, pair.key, decode_any_value(pair.value))
    return flat


def flatten_into(flat: dict[str, AttributeValue], key: str, value: Any) -> None:
    """`value` (decoded JSON) into `flat` under `key`, as `flatten_attributes` flattens an attribute."""
    if value is None:
        return
    if isinstance(value, dict):
        for sub_key, sub_value in value.items():
            flatten_into(flat, f"{key}.{sub_key}", sub_value)
    elif isinstance(value, list):
        flat[key] = to_text(value)
    else:
        flat[key] = value


def to_text(value: Any) -> str:
    """A decoded value as one line of text: strings as they are, anything else as compact JSON, a map's keys
    in the record's own order. A log record's id hashes its body and attributes so spelled (`otlp_build.
    log_event_id`): another spelling would give every record an earlier release counted a new id."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=True)


def message_text(value: Any) -> str:
    """`to_text`, a map's keys sorted, as the collector writes a map body (go.opentelemetry.io/collector/pdata
    pcommon Value.AsString marshals it as encoding/json does, keys sorted: signoz-otel-collector exporter/
    clickhouselogsexporter/exporter.go getStringifiedBody, v0.144.7): the body as its message reads it, the
    same for one record whatever order its logger wrote. An empty AnyValue (None) is no body: its message is
    "" (OTLP common.proto: a value with no field set is empty), where its id reads "null" (`to_text`)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=True, sort_keys=True
    )
