"""The incident look-ups answered by SigNoz's `/api/v5/query_range`: read-only, bounded, redacted.

    trace(trace_id)          builder `raw` traces with `trace_id = '<id>'`, oldest span first
    logs(service, around)    builder `raw` logs of the service: the newest before the occurrence
                             and the oldest after it (two requests), the closest kept
    error_counts(...)        ClickHouse SQL that counts the incident's occurrences per bucket
                             inside SigNoz, one query per kind of sample

Every request is a `query_range` POST, which SigNoz answers by reading; nothing here writes. Each
look-up is bounded twice: by the `limit` SigNoz is asked for, and by a per-look-up deadline that
covers retries. Every text that comes back passes through `redact.clean` here as well as in the
server, so no caller of this class sees a secret that telemetry carried.

Why the counts use SQL: an occurrence of "this error" is what rounds grouped, and the builder
cannot say that. An exception's type lives in span events, which builder filters cannot reach,
and log and span groups are keyed on rounds' normalised message (`queries.normalised`). SQL over
the error index, the spans and the logs selects exactly what the SigNoz source counted. It needs
the key's clickhouse_sql grant; without it the look-up answers that it failed and why.

The scope is checked here too, not only by the server's tools: a trace id, a service or a time
range outside the incident is refused before any request is made.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import httpx
from pydantic import Field, StrictInt, ValidationError

from rounds_bot.diagnosis.mcp_server import (
    MAX_COUNT_POINTS,
    MAX_LOGS,
    MAX_MINUTES_AROUND,
    MAX_SPANS,
    CountPoint,
    IncidentScope,
    LogRecord,
    ScopeViolation,
    SignozBackend,
    SpanRecord,
)
from rounds_bot.errors import ConfigError, SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.redact import clean
from rounds_bot.sources.signoz.client import ROLE_HINT, SignozClient, SignozHTTPError
from rounds_bot.sources.signoz.collector import normalise_message
from rounds_bot.sources.signoz.queries import (
    ERROR_SEVERITY_TEXTS,
    MAX_V5_LIMIT,
    clickhouse_sql,
    normalised,
    query_range_request,
    sql_string,
)
from rounds_bot.sources.signoz.times import (
    NS_PER_S,
    check_unix_ns,
    datetime_to_ns,
    ns_to_datetime,
    parse_rfc3339_ns,
)
from rounds_bot.sources.signoz.wire import Lenient, QueryRangeData, exception_event

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
#: SigNoz's exception group ids are md5 hex digests of service, type and message
_SIGNOZ_GROUP_ID = re.compile(r"^[0-9a-f]{32}$")
#: ClickHouse keeps spans and logs in 30-minute buckets; a row's bucket may start before it
_BUCKET_SLACK_SECONDS = 1800

KeyT = TypeVar("KeyT")


class SignozLookups:
    """`IncidentLookups` over one SigNoz, for one incident. Close it (or use `with`) when done."""

    def __init__(self, client: SignozClient, scope: IncidentScope, *, deadline_seconds: float = 30.0):
        self._client = client
        self._scope = scope
        self._deadline_seconds = deadline_seconds

    @classmethod
    def connect(
        cls, scope: IncidentScope, *, api_key: str | None, transport: httpx.BaseTransport | None = None
    ) -> SignozLookups:
        backend = scope.backend
        if not isinstance(backend, SignozBackend):
            raise ConfigError(
                f"the incident scope of {scope.signature_id} names the {backend.backend!r} back-end, "
                "not SigNoz",
                hint="build the look-ups with lookups_for(scope)",
            )
        client = SignozClient(
            backend.url, api_key, timeout_seconds=backend.timeout_seconds, max_attempts=3, transport=transport
        )
        return cls(client, scope, deadline_seconds=backend.deadline_seconds)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> SignozLookups:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the look-ups

    def trace(self, trace_id: str, limit: int) -> list[SpanRecord]:
        if trace_id not in self._scope.trace_ids:
            raise ScopeViolation(f"trace {trace_id!r} is not one of this incident's traces")
        self._client.begin_round(self._deadline_seconds)
        limit = _bounded(limit, MAX_SPANS)
        spec = _builder(
            "traces",
            f"trace_id = {sql_string(trace_id)}",
            order=[("timestamp", "asc")],
            limit=limit,
            fields=[_field(name, context, kind) for name, context, kind in TRACE_FIELDS],
        )
        rows = self._raw(self._scope.window_start, self._scope.window_end, spec)
        return [_span_record(trace_id, data) for data in rows[:limit]]

    def logs(self, service: str, start: datetime, end: datetime, limit: int) -> list[LogRecord]:
        self._check_service(service)
        self._check_around(start, end)
        self._client.begin_round(self._deadline_seconds)
        limit = _bounded(limit, MAX_LOGS)
        # More logs than `limit` in the range: keep those closest to the occurrence, read as the
        # newest before it and the oldest after it. SigNoz reads [start, end) in whole ms: a tick
        # past each end makes both inclusive, and the two ranges may then share a row.
        pivot = self._occurrence_within(service, start, end)
        tick = timedelta(microseconds=1)
        where = f"service.name = {sql_string(service)}"
        before = self._raw(start, pivot + tick, _logs_spec(where, "desc", limit))
        after = self._raw(pivot + tick, end + tick, _logs_spec(where, "asc", limit))
        unique = {str(data.get("id") or index): data for index, data in enumerate([*before, *after])}
        records = [_log_record(data) for data in unique.values()]
        pivot_ns = datetime_to_ns(pivot)
        closest = sorted(records, key=lambda record: abs(_ns(record.timestamp) - pivot_ns))[:limit]
        return sorted(closest, key=lambda record: (_ns(record.timestamp), record.body))

    def error_counts(
        self, service: str, error_type: str | None, start: datetime, end: datetime, step: timedelta
    ) -> list[CountPoint]:
        self._check_service(service)
        if error_type != self._scope.error_type:
            raise ScopeViolation(
                f"error type {error_type!r} is not this incident's ({self._scope.error_type!r})"
            )
        if start < self._scope.window_start or end > self._scope.window_end:
            raise ScopeViolation("counts are read only within the incident's window")
        self._client.begin_round(self._deadline_seconds)
        step_ns = max(int(step.total_seconds() * NS_PER_S), 1)
        start_ns, end_ns = datetime_to_ns(start), datetime_to_ns(end)
        buckets: Counter[int] = Counter()
        for condition in occurrence_conditions(self._scope, service, error_type):
            sql = condition.counts_sql(start_ns, end_ns, step_ns)
            for row in self._sql(start_ns, end_ns, sql):
                buckets[row.bucket] += row.occurrences
        return [
            CountPoint(start=ns_to_datetime(start_ns + bucket * step_ns), count=count)
            for bucket, count in sorted(buckets.items())
            if count > 0
        ][:MAX_COUNT_POINTS]

    # ------------------------------------------------------------------ scope checks

    def _check_service(self, service: str) -> None:
        if service not in self._scope.services:
            raise ScopeViolation(f"service {service!r} is not this incident's")

    def _check_around(self, start: datetime, end: datetime) -> None:
        reach = timedelta(minutes=MAX_MINUTES_AROUND)
        if end < start or end - start > 2 * reach:
            raise ScopeViolation(f"logs are read at most {MAX_MINUTES_AROUND} minutes each way")
        if not any(start - reach <= event.timestamp <= end + reach for event in self._scope.events):
            raise ScopeViolation("logs are read only around this incident's samples")

    def _occurrence_within(self, service: str, start: datetime, end: datetime) -> datetime:
        """The sample the range was drawn around: the server asks for whole minutes before and
        after it, so its distance to both ends is a whole number of minutes."""
        inside = [
            e.timestamp for e in self._scope.events if e.service == service and start <= e.timestamp <= end
        ]
        minute = timedelta(minutes=1)
        drawn_around = [t for t in inside if (t - start) % minute == timedelta() == (end - t) % minute]
        candidates = drawn_around or inside
        return candidates[0] if candidates else start + (end - start) / 2

    # ------------------------------------------------------------------ requests

    def _raw(self, start: datetime, end: datetime, spec: dict[str, Any]) -> list[dict[str, Any]]:
        data = self._query(datetime_to_ns(start), datetime_to_ns(end), "raw", spec)
        rows: list[dict[str, Any]] = []
        for result in data.raw_results():
            for row in result.rows or []:
                merged = dict(row.data)
                if row.timestamp is not None:
                    merged.setdefault("__row_timestamp", row.timestamp)
                rows.append(merged)
        return rows

    def _sql(self, start_ns: int, end_ns: int, sql: str) -> list[BucketRow]:
        try:
            data = self._query(start_ns, end_ns, "raw", clickhouse_sql(sql))
        except SignozHTTPError as error:
            if error.status == 403:
                raise SignozError(
                    f"SigNoz at {self._client.base_url} refused the clickhouse_sql query that counts "
                    "this error's occurrences (403)",
                    hint=ROLE_HINT,
                ) from error
            raise
        rows = [row.data for result in data.raw_results() for row in result.rows or []]
        try:
            return [BucketRow.model_validate(row) for row in rows]
        except ValidationError as error:
            raise SignozError(
                f"SigNoz answered the count of this error's occurrences with an unexpected row: "
                f"{error.errors()[0]['msg']}",
                hint="report the SigNoz version and this message",
            ) from error

    def _query(self, start_ns: int, end_ns: int, request_type: str, query: dict[str, Any]) -> QueryRangeData:
        # The deadline (retries included) was set when the look-up began: one per look-up.
        return self._client.query_range(query_range_request(start_ns, end_ns, request_type, query))


class BucketRow(Lenient):
    """One row of the counting SQL: a bucket's index from the window's start, and its count."""

    bucket: StrictInt = Field(ge=0)
    occurrences: StrictInt = Field(ge=0)


# ---------------------------------------------------------------------- what counts as an occurrence


@dataclass(frozen=True)
class OccurrenceCondition:
    """One kind of SigNoz row that is an occurrence of the incident, as SQL that counts them."""

    table: str
    time_ns: str  # the row's time as Unix nanoseconds, in SQL
    window: Callable[[int, int], str]  # (start_ns, end_ns) -> the SQL that keeps rows within
    condition: str

    def counts_sql(self, start_ns: int, end_ns: int, step_ns: int) -> str:
        # toInt64 of a non-negative quotient is its floor: the bucket's index from `start`
        return f"""SELECT toInt64((({self.time_ns}) - {start_ns}) / {step_ns}) AS bucket,
  count() AS occurrences
FROM {self.table}
WHERE {self.window(start_ns, end_ns)}
  AND {self.condition}
GROUP BY bucket
ORDER BY bucket ASC
LIMIT {MAX_COUNT_POINTS}"""


def occurrence_conditions(
    scope: IncidentScope, service: str, error_type: str | None
) -> list[OccurrenceCondition]:
    """The rows of SigNoz that are this incident, per kind of its samples: the exception groups
    they came from, their error spans (name and normalised status message), their error logs
    (exception type and normalised body). The same keys the SigNoz source grouped by."""
    events = [event for event in scope.recorded_events if event.service == service]
    conditions: list[OccurrenceCondition] = []
    exceptions = [event for event in events if event.kind == "exception"]
    if exceptions or not events:
        conditions.append(_exceptions(service, error_type, exceptions))
    spans = _distinct(_span_key(event) for event in events if event.kind == "span_error")
    if spans:
        conditions.append(_error_spans(service, spans))
    logs = _distinct(_log_key(event) for event in events if event.kind == "log")
    if logs:
        conditions.append(_error_logs(service, logs))
    return conditions


def _exceptions(service: str, error_type: str | None, events: list[ErrorEvent]) -> OccurrenceCondition:
    group_ids = sorted(
        {e.source_group_id for e in events if e.source_group_id and _SIGNOZ_GROUP_ID.match(e.source_group_id)}
    )
    if group_ids:
        condition = f"groupID IN ({', '.join(sql_string(group_id) for group_id in group_ids)})"
    else:
        condition = f"serviceName = {sql_string(service)}"
        if error_type:
            condition += f" AND exceptionType = {sql_string(error_type)}"
    return OccurrenceCondition(
        "signoz_traces.distributed_signoz_error_index_v2",
        "toUnixTimestamp64Nano(timestamp)",
        lambda start, end: (
            f"timestamp >= fromUnixTimestamp64Nano(toInt64({start})) "
            f"AND timestamp < fromUnixTimestamp64Nano(toInt64({end}))"
        ),
        condition,
    )


def _span_key(event: ErrorEvent) -> tuple[str, str | None]:
    name = str(event.attributes.get("span.name", ""))
    # The source writes this sentence when the span had no status message: no pattern to match.
    unnamed = event.message == f"span {name} ended with an error"
    return name, None if unnamed else normalise_message(event.message)


def _error_spans(service: str, keys: list[tuple[str, str | None]]) -> OccurrenceCondition:
    alternatives = []
    for name, pattern in keys:
        parts = [f"name = {sql_string(name)}"] if name else []
        if pattern is not None:
            parts.append(f"{normalised('status_message')} = {sql_string(pattern)}")
        alternatives.append("(" + " AND ".join(parts or ["1 = 1"]) + ")")
    condition = (
        f"serviceName = {sql_string(service)} AND has_error = true"
        # spans with an exception event are the error index's: counted there, not twice
        " AND NOT arrayExists(event -> JSONExtractString(event, 'name') = 'exception'"
        " OR endsWith(JSONExtractString(event, 'name'), '.exception'), events)"
        f" AND ({' OR '.join(alternatives)})"
    )
    return OccurrenceCondition(
        "signoz_traces.distributed_signoz_index_v3",
        "toUnixTimestamp64Nano(timestamp)",
        lambda start, end: (
            f"timestamp >= fromUnixTimestamp64Nano(toInt64({start})) "
            f"AND timestamp < fromUnixTimestamp64Nano(toInt64({end})) "
            f"AND ts_bucket_start >= {start // NS_PER_S - _BUCKET_SLACK_SECONDS} "
            f"AND ts_bucket_start <= {end // NS_PER_S}"
        ),
        condition,
    )


def _log_key(event: ErrorEvent) -> tuple[str, str]:
    body = str(event.attributes.get("log.body", event.message))
    return event.error_type or "", normalise_message(body)


def _error_logs(service: str, keys: list[tuple[str, str]]) -> OccurrenceCondition:
    texts = ", ".join(sql_string(text) for text in ERROR_SEVERITY_TEXTS)
    alternatives = [
        f"(attributes_string['exception.type'] = {sql_string(error_type)} "
        f"AND {normalised('body')} = {sql_string(pattern)})"
        for error_type, pattern in keys
    ]
    condition = (
        f"resources_string['service.name'] = {sql_string(service)}"
        f" AND (severity_number >= 17 OR upper(severity_text) IN ({texts}))"
        f" AND ({' OR '.join(alternatives)})"
    )
    return OccurrenceCondition(
        "signoz_logs.distributed_logs_v2",
        "toInt64(timestamp)",
        lambda start, end: (
            f"timestamp >= {start} AND timestamp < {end} "
            f"AND ts_bucket_start >= {start // NS_PER_S - _BUCKET_SLACK_SECONDS} "
            f"AND ts_bucket_start <= {end // NS_PER_S}"
        ),
        condition,
    )


def _distinct(items: Iterable[KeyT]) -> list[KeyT]:
    return list(dict.fromkeys(items))


# ---------------------------------------------------------------------- request and row shapes


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


def _logs_spec(expression: str, direction: str, limit: int) -> dict[str, Any]:
    # No selectFields: SigNoz then returns its default log columns, the shape the source reads.
    return _builder("logs", expression, order=[("timestamp", direction), ("id", direction)], limit=limit)


def _bounded(limit: int, ceiling: int) -> int:
    return max(1, min(int(limit), ceiling, MAX_V5_LIMIT))


def _span_record(trace_id: str, data: dict[str, Any]) -> SpanRecord:
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


def _log_record(data: dict[str, Any]) -> LogRecord:
    resources = data.get("resources_string") or {}
    attributes = data.get("attributes_string") or {}
    body = _text(data.get("body"))
    exception = ": ".join(
        str(attributes[key]) for key in ("exception.type", "exception.message") if attributes.get(key)
    )
    if exception and exception not in body:
        body = f"{body} [{_text(exception)}]" if body else _text(exception)
    return LogRecord(
        timestamp=_moment(data.get("timestamp") or data.get("__row_timestamp")),
        service=_text(resources.get("service.name")) or None,
        severity=_text(data.get("severity_text")) or _severity_of(data.get("severity_number")),
        body=body,
        trace_id=_text(data.get("trace_id")) or None,
    )


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


def _ns(moment: datetime | None) -> int:
    return datetime_to_ns(moment or datetime.min.replace(tzinfo=UTC))


def _text(value: Any) -> str:
    return "" if value is None else clean(str(value))
