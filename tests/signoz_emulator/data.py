"""The emulator's ClickHouse tables, filled from OTLP/JSON the way SigNoz's exporter fills them.

- `signoz_traces.distributed_signoz_error_index_v2`: one row per span event named `exception`
  (or `*.exception`), whatever the span's status; `groupID = md5(service + type + message)`.
- `signoz_traces.distributed_signoz_index_v3`: one row per span; `has_error` iff status Error.
- `signoz_logs.distributed_logs_v2`: one row per log record; `timestamp` in nanoseconds.

The error index can also hold synthetic groups stored as arithmetic series (a count, a first
time and a step), so a million occurrences cost a few kilobytes and are still read row by row.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

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

from .sql import Instant, constant_bounds, constant_in_list

ERROR_INDEX = "signoz_traces.distributed_signoz_error_index_v2"
SPANS = "signoz_traces.distributed_signoz_index_v3"
LOGS = "signoz_logs.distributed_logs_v2"
NIL_SERVICE = "<nil-service-name>"

STATUS_STRINGS = {0: "Unset", 1: "Ok", 2: "Error"}
SPAN_ALIASES = (
    ("traceID", "trace_id"),
    ("spanID", "span_id"),
    ("hasError", "has_error"),
    ("durationNano", "duration_nano"),
    ("statusCode", "status_code"),
    ("statusMessage", "status_message"),
    ("serviceName", "resource_string_service$$name"),
)
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class DataError(ValueError):
    """A fixture line is not OTLP/JSON the emulator can load; names the file and line."""


def md5_hex(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def signoz_group_id(service: str, exception_type: str, message: str) -> str:
    """SigNoz's exporter: md5 of service + type + message, joined with no separator."""
    return md5_hex(service + exception_type + message)


# -- the error index ----------------------------------------------------------------------------


class Occurrences(Protocol):
    group_id: str
    service: str
    exception_type: str
    message: str

    def stats_between(self, low: int, high: int) -> tuple[int, int, int]:
        """(count, first, last) of occurrences with low <= t <= high; count 0 if none."""

    def newest_first(self, low: int, high: int) -> Iterator[dict[str, Any]]:
        """Rows with low <= t <= high, newest first (ties: errorID descending)."""

    def bounds(self) -> tuple[int, int]:
        """(first, last) timestamp over all time."""


@dataclass
class ExplicitOccurrences:
    """Occurrences read from fixtures, kept as rows sorted by (timestamp, errorID)."""

    group_id: str
    service: str
    exception_type: str
    message: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    _keys: list[tuple[int, str]] = field(default_factory=list)
    _times: list[int] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        key = (int(row["timestamp"]), row["errorID"])
        index = bisect.bisect_right(self._keys, key)
        self._keys.insert(index, key)
        self.rows.insert(index, row)
        self._times.insert(index, key[0])

    def stats_between(self, low: int, high: int) -> tuple[int, int, int]:
        start = bisect.bisect_left(self._times, low)
        stop = bisect.bisect_right(self._times, high)
        if start >= stop:
            return 0, 0, 0
        return stop - start, self._times[start], self._times[stop - 1]

    def newest_first(self, low: int, high: int) -> Iterator[dict[str, Any]]:
        start = bisect.bisect_left(self._times, low)
        stop = bisect.bisect_right(self._times, high)
        for index in range(stop - 1, start - 1, -1):
            yield self.rows[index]

    def bounds(self) -> tuple[int, int]:
        return self._times[0], self._times[-1]


@dataclass
class SyntheticOccurrences:
    """`count` occurrences at first, first + step, ...: a million rows in a few bytes."""

    group_id: str
    service: str
    exception_type: str
    message: str
    stacktrace: str
    count: int
    first: int
    step: int
    resource: dict[str, str]

    def _index_range(self, low: int, high: int) -> tuple[int, int]:
        lowest = max(0, -(-(low - self.first) // self.step))
        highest = min(self.count - 1, (high - self.first) // self.step)
        return lowest, highest

    def stats_between(self, low: int, high: int) -> tuple[int, int, int]:
        lowest, highest = self._index_range(low, high)
        if lowest > highest:
            return 0, 0, 0
        return highest - lowest + 1, self._time(lowest), self._time(highest)

    def newest_first(self, low: int, high: int) -> Iterator[dict[str, Any]]:
        lowest, highest = self._index_range(low, high)
        for index in range(highest, lowest - 1, -1):
            yield self.row(index)

    def bounds(self) -> tuple[int, int]:
        return self._time(0), self._time(self.count - 1)

    def _time(self, index: int) -> int:
        return self.first + index * self.step

    def row(self, index: int) -> dict[str, Any]:
        seed = md5_hex(f"{self.group_id}:{index}")
        return {
            "timestamp": Instant(self._time(index)),
            "errorID": seed,
            "groupID": self.group_id,
            "traceID": md5_hex(seed),
            "spanID": seed[:16],
            "serviceName": self.service,
            "exceptionType": self.exception_type,
            "exceptionMessage": self.message,
            "exceptionStacktrace": self.stacktrace,
            "exceptionEscaped": False,
            "resourceTagsMap": self.resource,
        }


class ErrorIndex:
    """`distributed_signoz_error_index_v2`, kept per group so aggregation is cheap."""

    def __init__(self) -> None:
        self.groups: dict[str, ExplicitOccurrences | SyntheticOccurrences] = {}

    def add_row(self, row: dict[str, Any]) -> None:
        group = self.groups.get(row["groupID"])
        if group is None:
            group = ExplicitOccurrences(
                row["groupID"], row["serviceName"], row["exceptionType"], row["exceptionMessage"]
            )
            self.groups[row["groupID"]] = group
        if not isinstance(group, ExplicitOccurrences):
            raise DataError(f"group {row['groupID']} is already synthetic")
        group.add(row)

    def add_synthetic(self, group: SyntheticOccurrences) -> None:
        self.groups[group.group_id] = group

    def total_rows(self) -> int:
        return sum(
            len(g.rows) if isinstance(g, ExplicitOccurrences) else g.count for g in self.groups.values()
        )

    def bounds(self) -> tuple[int, int] | None:
        if not self.groups:
            return None
        pairs = [group.bounds() for group in self.groups.values()]
        return min(p[0] for p in pairs), max(p[1] for p in pairs)

    # the SQL engine's table interface
    def _selected(self, where: Any) -> tuple[list[Any], int, int]:
        wanted = constant_in_list(where, "groupID")
        low, high = constant_bounds(where, "timestamp")
        groups = (
            list(self.groups.values())
            if wanted is None
            else [self.groups[g] for g in wanted if g in self.groups]
        )
        return groups, low if low is not None else 0, high if high is not None else 2**63

    def rows(self, where: Any) -> Iterable[dict[str, Any]]:
        groups, low, high = self._selected(where)
        for group in groups:
            yield from group.newest_first(low, high)

    def partitions_newest_first(self, where: Any, column: str) -> Iterable[Iterator[dict[str, Any]]] | None:
        if column != "groupID":
            return None
        groups, low, high = self._selected(where)
        return (group.newest_first(low, high) for group in groups)


@dataclass
class RowTable:
    """A plain list of rows (spans or logs)."""

    rows_list: list[dict[str, Any]] = field(default_factory=list)

    def rows(self, where: Any) -> Iterable[dict[str, Any]]:
        return self.rows_list

    def partitions_newest_first(self, where: Any, column: str) -> None:
        return None


@dataclass
class Dataset:
    error_index: ErrorIndex = field(default_factory=ErrorIndex)
    spans: RowTable = field(default_factory=RowTable)
    logs: RowTable = field(default_factory=RowTable)

    def tables(self) -> dict[str, Any]:
        return {ERROR_INDEX: self.error_index, SPANS: self.spans, LOGS: self.logs}

    def newest_ns(self) -> int | None:
        candidates = [int(row["timestamp"]) for row in self.spans.rows_list]
        candidates += [int(row["timestamp"]) for row in self.logs.rows_list]
        bounds = self.error_index.bounds()
        if bounds is not None:
            candidates.append(bounds[1])
        return max(candidates) if candidates else None


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


def split_typed(
    attributes: dict[str, Any],
) -> tuple[dict[str, str], dict[str, float], dict[str, bool]]:
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
    number = (timestamp_ns // 1_000_000_000) << 128 | int(md5_hex(seed), 16)
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
    service = resource.get("service.name", NIL_SERVICE)
    for scope_spans in block.scope_spans:
        for span in scope_spans.spans:
            _load_span(span, resource, service, dataset, shift_ns)


def _load_span(span: Span, resource: dict[str, str], service: str, dataset: Dataset, shift_ns: int) -> None:
    start = span.start_time_unix_nano + shift_ns
    end = (span.end_time_unix_nano or span.start_time_unix_nano) + shift_ns
    strings, numbers, bools = split_typed(attributes_of(span.attributes))
    events = [
        _load_event(span, index, event, resource, service, dataset, shift_ns)
        for index, event in enumerate(span.events)
    ]
    status_code = span.status.code
    response_code = next(
        (
            strings.get(key) or str(int(numbers[key]))
            for key in ("http.response.status_code", "http.status_code", "rpc.grpc.status_code")
            if key in strings or key in numbers
        ),
        "",
    )
    row: dict[str, Any] = {
        "ts_bucket_start": (start // 1_000_000_000 // 1800) * 1800,
        "resource_fingerprint": md5_hex(json.dumps(resource, sort_keys=True)),
        "timestamp": Instant(start),
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "trace_state": "",
        "parent_span_id": span.parent_span_id,
        "flags": 0,
        "name": span.name,
        # otlp_json does not read the span kind: every emulated span is Unspecified
        "kind": 0,
        "kind_string": "Unspecified",
        "duration_nano": max(0, end - start),
        "status_code": status_code,
        "status_message": span.status.message,
        "status_code_string": STATUS_STRINGS.get(status_code, "Unset"),
        "attributes_string": strings,
        "attributes_number": numbers,
        "attributes_bool": bools,
        "resources_string": resource,
        "events": events,
        "links": "[]",
        "response_status_code": response_code,
        "http_url": strings.get("url.full", strings.get("http.url", "")),
        "http_method": strings.get("http.request.method", strings.get("http.method", "")),
        "http_host": strings.get("server.address", strings.get("http.host", "")),
        "external_http_url": "",
        "external_http_method": "",
        "db_name": strings.get("db.name", ""),
        "db_operation": strings.get("db.operation", ""),
        "has_error": status_code == 2,
        "is_remote": "unknown",
        "resource_string_service$$name": resource.get("service.name", ""),
    }
    for alias, column in SPAN_ALIASES:
        row[alias] = row[column]
    dataset.spans.rows_list.append(row)


def _load_event(
    span: Span,
    index: int,
    event: SpanEvent,
    resource: dict[str, str],
    service: str,
    dataset: Dataset,
    shift_ns: int,
) -> str:
    """The event as SigNoz's `events` column holds it; an exception also becomes an index row."""
    event_time = event.time_unix_nano + shift_ns
    attributes = {key: as_string(v) for key, v in attributes_of(event.attributes).items()}
    is_exception = event.name == "exception" or event.name.endswith(".exception")
    encoded: dict[str, Any] = {"name": event.name, "timeUnixNano": event_time}
    if attributes:
        encoded["attributeMap"] = attributes
    if is_exception:
        encoded["isError"] = True
        exception_type = attributes.get("exception.type", "")
        message = attributes.get("exception.message", "")
        dataset.error_index.add_row(
            {
                "timestamp": Instant(event_time),
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
    record: LogRecord,
    resource: dict[str, str],
    scope: InstrumentationScope,
    dataset: Dataset,
    shift_ns: int,
) -> None:
    # SigNoz: a record without a time takes its observed time; without either, now
    timestamp = (record.time_unix_nano or record.observed_time_unix_nano) + shift_ns
    observed = (record.observed_time_unix_nano + shift_ns) if record.observed_time_unix_nano else timestamp
    strings, numbers, bools = split_typed(attributes_of(record.attributes))
    body = decode_any_value(record.body) if record.body is not None else ""
    body_text = body if isinstance(body, str) else as_string(body if body is not None else "")
    dataset.logs.rows_list.append(
        {
            "ts_bucket_start": (timestamp // 1_000_000_000 // 1800) * 1800,
            "resource_fingerprint": md5_hex(json.dumps(resource, sort_keys=True)),
            "timestamp": timestamp,
            "observed_timestamp": observed,
            "id": ksuid_like(timestamp, f"{timestamp}{len(dataset.logs.rows_list)}{body_text}"),
            "trace_id": record.trace_id,
            "span_id": record.span_id,
            "trace_flags": 0,
            "severity_text": record.severity_text,
            "severity_number": record.severity_number,
            "scope_name": scope.name,
            "scope_version": scope.version,
            "body": body_text,
            "attributes_string": strings,
            "attributes_number": numbers,
            "attributes_bool": bools,
            "resources_string": resource,
            "scope_string": {},
        }
    )


# -- synthetic load -----------------------------------------------------------------------------

_TYPES = (
    "ValueError",
    "KeyError",
    "java.lang.NullPointerException",
    "TimeoutError",
    "sqlalchemy.exc.OperationalError",
    "TypeError",
)


def synthetic_stacktrace(group: int, depth: int = 18) -> str:
    frames = "".join(
        f'  File "/app/service_{group % 41}/module_{(group + level) % 97}.py", line '
        f"{10 + (group * 7 + level * 13) % 400}, in handler_{(group + level) % 53}\n"
        f"    result = step_{level}(payload, options)\n"
        for level in range(depth)
    )
    exception_type = _TYPES[group % len(_TYPES)]
    return f"Traceback (most recent call last):\n{frames}{exception_type}: failure {group}\n"


def add_synthetic_exceptions(
    dataset: Dataset, *, events: int, groups: int, start_ns: int, end_ns: int
) -> None:
    """`events` exception rows in `groups` groups, spread evenly over [start, end)."""
    if groups <= 0 or events < groups:
        raise DataError("synthetic data needs at least one event per group")
    span = max(1, end_ns - start_ns)
    for group in range(groups):
        count = events // groups + (1 if group < events % groups else 0)
        step = max(1, span // count)
        first = start_ns + (group * 7_919_993) % step
        service = f"service-{group % 25}"
        exception_type = _TYPES[group % len(_TYPES)]
        message = f"synthetic failure {group} while handling request kind {group % 13}"
        dataset.error_index.add_synthetic(
            SyntheticOccurrences(
                group_id=signoz_group_id(service, exception_type, message),
                service=service,
                exception_type=exception_type,
                message=message,
                stacktrace=synthetic_stacktrace(group),
                count=count,
                first=first,
                step=step,
                resource={"service.name": service, "deployment.environment": "bench"},
            )
        )
