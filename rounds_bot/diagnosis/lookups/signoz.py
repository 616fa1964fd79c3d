"""The incident look-ups answered by SigNoz's `/api/v5/query_range`: read-only, bounded, redacted.

    trace(trace_id)          builder `raw` traces with `trace_id = '<id>'`, oldest span first
    logs(service, around)    builder `raw` logs of the service: the newest before the occurrence
                             and the oldest after it (two requests), the closest kept; the id and
                             the service quoted as every version reads them where it can
                             (`builder_queries.filter_string`)
    error_counts(...)        ClickHouse SQL that counts the incident's occurrences per bucket
                             inside SigNoz, one query per kind of sample (`signoz_occurrences`)

Every request is a `query_range` POST, which SigNoz answers by reading; nothing here writes. Each
look-up is bounded twice: by the `limit` SigNoz is asked for, and by a per-look-up deadline that
covers retries. The texts that come back are redacted once, by the look-up tools before the model
sees them (`tools.one_line`).

The counts need the key's clickhouse_sql grant; without it the look-up answers that it failed
and why. The scope is checked here too, not only by the tools: a trace id, a service or a time
range outside the incident is refused before any request is made.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import httpx
from pydantic import Field, StrictInt, ValidationError

from rounds_bot.diagnosis.lookups.scope import (
    MAX_COUNT_POINTS,
    MAX_LOGS,
    MAX_MINUTES_AROUND,
    MAX_SPANS,
    CountPoint,
    IncidentScope,
    LogRow,
    ScopeViolation,
    SignozBackend,
    SpanRecord,
)
from rounds_bot.diagnosis.lookups.signoz_occurrences import occurrence_conditions
from rounds_bot.diagnosis.lookups.signoz_rows import (
    bounded,
    log_record,
    logs_spec,
    ns_of,
    span_record,
    trace_spec,
)
from rounds_bot.errors import ConfigError, SignozError
from rounds_bot.sources.signoz.builder_queries import filter_string
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.failures import ROLE_HINT, SignozHTTPError
from rounds_bot.sources.signoz.queries import clickhouse_sql, query_range_request
from rounds_bot.sources.signoz.times import NS_PER_S, datetime_to_ns, ns_to_datetime
from rounds_bot.sources.signoz.wire import Lenient, QueryRangeData


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
        limit = bounded(limit, MAX_SPANS)
        spec = trace_spec(f"trace_id = {filter_string(trace_id)}", limit)
        rows = self._raw(self._scope.window_start, self._scope.window_end, spec)
        return [span_record(trace_id, data) for data in rows[:limit]]

    def logs(self, service: str, start: datetime, end: datetime, limit: int) -> list[LogRow]:
        self._check_service(service)
        self._check_around(start, end)
        self._client.begin_round(self._deadline_seconds)
        limit = bounded(limit, MAX_LOGS)
        # More logs than `limit` in the range: keep those closest to the occurrence, read as the
        # newest before it and the oldest after it. SigNoz reads [start, end) in whole ms: a tick
        # past each end makes both inclusive, and the two ranges may then share a row.
        pivot = self._occurrence_within(service, start, end)
        tick = timedelta(microseconds=1)
        where = f"service.name = {filter_string(service)}"
        before = self._raw(start, pivot + tick, logs_spec(where, "desc", limit))
        after = self._raw(pivot + tick, end + tick, logs_spec(where, "asc", limit))
        unique = {str(data.get("id") or index): data for index, data in enumerate([*before, *after])}
        records = [log_record(data) for data in unique.values()]
        pivot_ns = datetime_to_ns(pivot)
        closest = sorted(records, key=lambda record: abs(ns_of(record.timestamp) - pivot_ns))[:limit]
        return sorted(closest, key=lambda record: (ns_of(record.timestamp), record.body))

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
        return self._query(datetime_to_ns(start), datetime_to_ns(end), "raw", spec).raw_rows()

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
