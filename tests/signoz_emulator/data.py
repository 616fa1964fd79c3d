"""OTLP/JSON turned into rows of SigNoz's ClickHouse tables, the way SigNoz's exporter writes them.

- `signoz_traces.distributed_signoz_error_index_v2`: one row per span event named `exception`
  (or `*.exception`), whatever the span's status; `groupID = md5(service + type + message)`.
- `signoz_traces.distributed_signoz_index_v3`: one row per span; `has_error` iff status Error.
- `signoz_logs.distributed_logs_v2`: one row per log record; `timestamp` in nanoseconds.

A `Dataset` is the rows to load (and synthetic exception load, generated inside ClickHouse with
`numbers()`); `Dataset.load(engine)` writes them into the engine's tables.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rounds_bot.errors import SourceFormatError
from rounds_bot.sources.otlp_json import (
    InstrumentationScope,
    KeyValue,
    LogRecord,
    Resource,
    ResourceLogs,
    ResourceSpans,
    Span,
    SpanEvent,
    decode_any_value,
    parse_export_line,
)
from rounds_bot.sources.signoz.times import NS_PER_S

from .engine import Engine
from .span_columns import response_status_code
from .synthetic import SyntheticExceptions

ERROR_INDEX = "signoz_traces.distributed_signoz_error_index_v2"
SPANS = "signoz_traces.distributed_signoz_index_v3"
LOGS = "signoz_logs.distributed_logs_v2"
NIL_SERVICE = "<nil-service-name>"
STATUS_STRINGS = {0: "Unset", 1: "Ok", 2: "Error"}
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class DataError(ValueError):
    """A fixture line is not OTLP/JSON the emulator can load; names the file and line."""


def md5_hex(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def signoz_group_id(service: str, exception_type: str, message: str) -> str:
    """SigNoz's exporter: md5 of service + type + message, joined with no separator."""
    return md5_hex(service + exception_type + message)


def datetime64(ns: int) -> str:
    """A DateTime64(9) value as ClickHouse reads it in text formats (UTC)."""
    seconds, fraction = divmod(ns, NS_PER_S)
    base = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{base}.{fraction:09d}"


@dataclass
class Dataset:
    """Rows per table, and synthetic exception load; nothing is in ClickHouse until `load`."""

    exceptions: list[dict[str, Any]] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    synthetic: list[SyntheticExceptions] = field(default_factory=list)
    #: the collector that wrote the rows: from v0.144.3 it indexes events named `*.exception` as well as
    #: `exception` (signoz-otel-collector pkg/schema/traces/event.go IsExceptionEvent, commit f1b43378)
    collector_indexes_suffixed_exceptions: bool = True
    #: the collector leaves a span's NaN or infinite number attribute out (signoz-otel-collector
    #: exporter/clickhousetracesexporter/clickhouse_exporter_v3.go attributesData.add, utils.IsValidFloat,
    #: since v0.111.14, commit cd566027); before, it stored it as it was. The logs exporter stores it as it is
    #: (exporter/clickhouselogsexporter/exporter.go attributesToMap).
    collector_skips_non_finite_span_numbers: bool = True
    #: the collector's `body_json_enabled`: a map body goes to `body_v2` and `body` stays empty
    #: (signoz-otel-collector exporter/clickhouselogsexporter/exporter.go processBody)
    body_json_enabled: bool = False

    def load(self, engine: Engine) -> None:
        """Empty the engine's tables and write this dataset into them."""
        engine.truncate()
        engine.insert(ERROR_INDEX, (_columns(row) for row in self.exceptions))
        engine.insert(SPANS, (_columns(row) for row in self.spans))
        engine.insert(LOGS, self.logs)
        for load in self.synthetic:
            engine.execute(load.insert_sql(ERROR_INDEX))

    def arrive(self, engine: Engine) -> None:
        """Write this dataset's rows beside what the engine holds: rows that reach SigNoz late, after a
        round read their time (a long span is written when it ends, stored at its start; a pipeline
        delivers late), as SigNoz's collector inserts them, at any time, with their own timestamps."""
        engine.insert(ERROR_INDEX, (_columns(row) for row in self.exceptions))
        engine.insert(SPANS, (_columns(row) for row in self.spans))
        engine.insert(LOGS, self.logs)

    def retried(self) -> Dataset:
        """These rows as the collector writes them again when it retries their batch whole (exporterhelper's
        retry, signoz-otel-collector exporter/clickhousetracesexporter/factory.go WithRetry; the logs exporter
        likewise): equal but for the ids made as they are written, an exception row's errorID
        (clickhouse_exporter_v3.go populateEventsV3, `uuid.New()`) and a log's id (exporter/
        clickhouselogsexporter/exporter.go, `ksuid.NewRandomWithTime`). Write them with `arrive`."""
        again = Dataset()
        again.exceptions = [{**row, "errorID": uuid.uuid4().hex} for row in self.exceptions]
        again.spans = [dict(row) for row in self.spans]
        again.logs = [{**row, "id": ksuid_like(row["timestamp"], uuid.uuid4().hex)} for row in self.logs]
        return again

    def exception_rows(self) -> int:
        return len(self.exceptions) + sum(load.events for load in self.synthetic)

    def newest_ns(self) -> int | None:
        candidates = [row["_ns"] for row in self.exceptions + self.spans] + [
            row["timestamp"] for row in self.logs
        ]
        candidates += [load.end_ns for load in self.synthetic]
        return max(candidates) if candidates else None


def _columns(row: dict[str, Any]) -> dict[str, Any]:
    """The row without the emulator's own bookkeeping (`_ns`)."""
    return {key: value for key, value in row.items() if not key.startswith("_")}


# -- OTLP/JSON loading --------------------------------------------------------------------------
# The OTLP/JSON parsing itself is the project's own (rounds_bot.sources.otlp_json); what follows
# turns it into rows the way SigNoz's ClickHouse exporter writes them.


def attributes_of(pairs: list[KeyValue]) -> dict[str, Any]:
    values = {pair.key: decode_any_value(pair.value) for pair in pairs}
    return {key: value for key, value in values.items() if value is not None}


def as_string(value: Any) -> str:
    """pcommon.Value.AsString(): what SigNoz stores for event and resource attributes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def split_typed(attributes: dict[str, Any]) -> tuple[dict[str, str], dict[str, float], dict[str, bool]]:
    """SigNoz's three attribute maps: strings (and anything else), numbers, booleans."""
    strings: dict[str, str] = {}
    numbers: dict[str, float] = {}
    bools: dict[str, bool] = {}
    for key, value in attributes.items():
        if isinstance(value, bool):
            bools[key] = value
        elif isinstance(value, int | float):
            numbers[key] = float(value)
        else:
            strings[key] = as_string(value)
    return strings, numbers, bools


def ksuid_like(timestamp_ns: int, seed: str) -> str:
    """A 27-character, time-sortable id in the spirit of SigNoz's KSUID log ids."""
    number = (timestamp_ns // NS_PER_S) << 128 | int(md5_hex(seed), 16)
    digits = []
    while number:
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(reversed(digits)).rjust(27, "0")[-27:]


def load_otlp_lines(lines: Iterable[str], dataset: Dataset, *, where: str, shift_ns: int = 0) -> None:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            request = parse_export_line(line)
        except SourceFormatError as error:
            raise DataError(f"{where}:{number}: {error}") from error
        for resource_spans in request.resource_spans or []:
            _load_spans(resource_spans, dataset, shift_ns)
        for resource_logs in request.resource_logs or []:
            _load_logs(resource_logs, dataset, shift_ns)


def load_otlp_file(path: Path, dataset: Dataset, *, shift_ns: int = 0) -> None:
    with path.open(encoding="utf-8") as handle:
        load_otlp_lines(handle, dataset, where=str(path), shift_ns=shift_ns)


def newest_in_lines(lines: Iterable[str]) -> int | None:
    """The newest timestamp in OTLP/JSON lines, to shift a fixture so it ends near now."""
    dataset = Dataset()
    load_otlp_lines(lines, dataset, where="<scan>")
    return dataset.newest_ns()


def _resource_strings(resource: Resource) -> dict[str, str]:
    return {key: as_string(value) for key, value in attributes_of(resource.attributes).items()}


def _load_spans(block: ResourceSpans, dataset: Dataset, shift_ns: int) -> None:
    resource = _resource_strings(block.resource)
    for scope_spans in block.scope_spans:
        for span in scope_spans.spans:
            _load_span(span, resource, dataset, shift_ns)


def _bucket(ns: int) -> int:
    return (ns // NS_PER_S // 1800) * 1800


# The collector stores a span's kind twice: `kind` as the OTLP enum value and `kind_string` as pdata's
# SpanKind.String() (signoz-otel-collector exporter/clickhousetracesexporter; pdata ptrace
# SpanKind.String: "Unspecified", "Internal", "Server", "Client", "Producer", "Consumer").
SPAN_KIND_STRINGS = ("Unspecified", "Internal", "Server", "Client", "Producer", "Consumer")


def _span_kind(kind: int | str) -> int:
    """The OTLP enum value of a span kind that OTLP/JSON writes as a number or as its enum name."""
    if isinstance(kind, int):
        return kind if 0 <= kind < len(SPAN_KIND_STRINGS) else 0
    name = kind.removeprefix("SPAN_KIND_").capitalize()
    return SPAN_KIND_STRINGS.index(name) if name in SPAN_KIND_STRINGS else 0


def _load_span(span: Span, resource: dict[str, str], dataset: Dataset, shift_ns: int) -> None:
    start = span.start_time_unix_nano + shift_ns
    end = (span.end_time_unix_nano or span.start_time_unix_nano) + shift_ns
    attributes = attributes_of(span.attributes)
    strings, numbers, bools = split_typed(attributes)
    if dataset.collector_skips_non_finite_span_numbers:
        numbers = {key: number for key, number in numbers.items() if math.isfinite(number)}
    events = [
        _load_event(span, index, event, resource, dataset, shift_ns)
        for index, event in enumerate(span.events)
    ]
    status_code = span.status.code
    response_code = response_status_code(attributes)
    # stored at its start, its 30-minute bucket the start's (signoz-otel-collector exporter/
    # clickhousetracesexporter/clickhouse_exporter_v3.go: StartTimeUnixNano, tsBucket of StartTimestamp),
    # though the collector receives it when it ends: a long span's row is written long after its `timestamp`
    # (`Dataset.arrive`)
    dataset.spans.append(
        {
            "_ns": start,
            "ts_bucket_start": _bucket(start),
            "resource_fingerprint": md5_hex(json.dumps(resource, sort_keys=True)),
            "timestamp": datetime64(start),
            "trace_id": span.trace_id,
            "span_id": span.span_id,
            "parent_span_id": span.parent_span_id,
            "name": span.name,
            "kind": _span_kind(span.kind),
            "kind_string": SPAN_KIND_STRINGS[_span_kind(span.kind)],
            "duration_nano": max(0, end - start),
            "status_code": status_code,
            "status_message": span.status.message,
            "status_code_string": STATUS_STRINGS.get(status_code, "Unset"),
            "attributes_string": strings,
            "attributes_number": numbers,
            "attributes_bool": bools,
            "resources_string": resource,
            "resource": resource,
            "events": events,
            "links": "[]",
            "response_status_code": response_code,
            "http_url": strings.get("url.full", strings.get("http.url", "")),
            "http_method": strings.get("http.request.method", strings.get("http.method", "")),
            "http_host": strings.get("server.address", strings.get("http.host", "")),
            "db_name": strings.get("db.name", ""),
            "db_operation": strings.get("db.operation", ""),
            "has_error": status_code == 2,
            "is_remote": "unknown",
        }
    )


def _load_event(
    span: Span, index: int, event: SpanEvent, resource: dict[str, str], dataset: Dataset, shift_ns: int
) -> str:
    """The event as SigNoz's `events` column holds it; an exception also becomes an index row."""
    event_time = event.time_unix_nano + shift_ns
    attributes = {key: as_string(v) for key, v in attributes_of(event.attributes).items()}
    encoded: dict[str, Any] = {"name": event.name, "timeUnixNano": event_time}
    if attributes:
        encoded["attributeMap"] = attributes
    suffixed = dataset.collector_indexes_suffixed_exceptions and event.name.endswith(".exception")
    if event.name == "exception" or suffixed:
        # the span's own copy of the event says it has an error row (populateEventsV3 sets IsError on exactly
        # the events it indexes, clickhouse_exporter_v3.go); the two rows are written by parallel inserts
        # (writer.go WriteBatchOfSpansV3), so a test may write one before the other (`Dataset.arrive`)
        encoded["isError"] = True
        service = resource.get("service.name", NIL_SERVICE)
        exception_type = attributes.get("exception.type", "")
        message = attributes.get("exception.message", "")
        dataset.exceptions.append(
            {
                "_ns": event_time,
                "timestamp": datetime64(event_time),
                "errorID": md5_hex(f"{span.trace_id}{span.span_id}{index}{event_time}"),
                "groupID": signoz_group_id(service, exception_type, message),
                "traceID": span.trace_id,
                "spanID": span.span_id,
                "serviceName": service,
                "exceptionType": exception_type,
                "exceptionMessage": message,
                "exceptionStacktrace": attributes.get("exception.stacktrace", ""),
                "exceptionEscaped": attributes.get("exception.escaped", "").lower() == "true",
                "resourceTagsMap": resource,
            }
        )
    return json.dumps(encoded, separators=(",", ":"))


def _load_logs(block: ResourceLogs, dataset: Dataset, shift_ns: int) -> None:
    resource = _resource_strings(block.resource)
    for scope_logs in block.scope_logs:
        for record in scope_logs.log_records:
            _load_log(record, resource, scope_logs.scope, dataset, shift_ns)


def _load_log(
    record: LogRecord, resource: dict[str, str], scope: InstrumentationScope, dataset: Dataset, shift_ns: int
) -> None:
    # SigNoz: a record without a time takes its observed time
    timestamp = (record.time_unix_nano or record.observed_time_unix_nano) + shift_ns
    observed = (record.observed_time_unix_nano + shift_ns) if record.observed_time_unix_nano else timestamp
    strings, numbers, bools = split_typed(attributes_of(record.attributes))
    body = decode_any_value(record.body) if record.body is not None else ""
    body_text = body if isinstance(body, str) else as_string(body if body is not None else "")
    json_body = dataset.body_json_enabled and isinstance(body, dict)
    dataset.logs.append(
        {
            **({"body_v2": body} if json_body else {}),
            "ts_bucket_start": _bucket(timestamp),
            "resource_fingerprint": md5_hex(json.dumps(resource, sort_keys=True)),
            "timestamp": timestamp,
            "observed_timestamp": observed,
            "id": ksuid_like(timestamp, f"{timestamp}{len(dataset.logs)}{body_text}"),
            "trace_id": record.trace_id,
            "span_id": record.span_id,
            "trace_flags": 0,
            "severity_text": record.severity_text,
            "severity_number": record.severity_number,
            "scope_name": scope.name,
            "scope_version": scope.version,
            "body": "" if json_body else body_text,
            "attributes_string": strings,
            "attributes_number": numbers,
            "attributes_bool": bools,
            "resources_string": resource,
            "resource": resource,
            "scope_string": {},
        }
    )
