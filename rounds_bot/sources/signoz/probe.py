"""`check()`: what rounds can read from a SigNoz, for the doctor's source check (`rounds_bot.doctor.source`).

It answers in a structured report instead of raising, so every problem is listed at once, each with
what to do: the version and the API paths rounds will use by its version gates (the exceptions API
by GET before v0.18 and POST since; clickhouse_sql with the window written in, since SigNoz renders
template variables only from v0.88; how ClickHouse's errors come back, by version), whether the key
may run clickhouse_sql, and the errors the last hour holds (exception groups and events, error
spans, error logs).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from pydantic import Field

from rounds_bot.errors import SignozError
from rounds_bot.models import Frozen
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.queries import (
    clickhouse_sql,
    error_severity_filter,
    query_range_request,
)
from rounds_bot.sources.signoz.source import SignozSource
from rounds_bot.sources.signoz.times import datetime_to_ns
from rounds_bot.sources.signoz.versions import Capabilities

REPORT_FIX = "report the SigNoz version and this message"


class Problem(Frozen):
    """Something that stops rounds reading SigNoz, and what to check or change."""

    problem: str
    fix: str

    @classmethod
    def of(cls, error: SignozError) -> Problem:
        """The error's message, and its hint as the fix."""
        return cls(problem=str(error.args[0]), fix=error.hint or REPORT_FIX)


class LastHour(Frozen):
    exception_groups: int
    exception_events: int | None = Field(description="None when it could not be counted")
    error_spans: int | None
    error_logs: int | None


class DoctorReport(Frozen):
    url: str
    ok: bool
    version: str | None = None
    apis: list[str] = Field(default_factory=list, description="what rounds will call, by the version's gates")
    clickhouse_errors: str | None = Field(
        default=None, description="how this version answers ClickHouse's errors"
    )
    clickhouse_sql: bool | None = None
    last_hour: LastHour | None = None
    problems: list[Problem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    requests: int = 0


def check(
    url: str,
    api_key: str | None,
    *,
    timeout_seconds: float = 15.0,
    deadline_seconds: float = 60.0,
    transport: httpx.BaseTransport | None = None,
    now: datetime | None = None,
) -> DoctorReport:
    """Probe SigNoz; never raises a SignozError, lists it under `problems` instead."""
    try:
        source = SignozSource(
            url,
            api_key,
            timeout_seconds=timeout_seconds,
            deadline_seconds=deadline_seconds,
            max_attempts=2,
            transport=transport,
        )
    except SignozError as error:
        return DoctorReport(url=url, ok=False, problems=[Problem.of(error)])
    with source:
        return _probe(source, now or datetime.now(UTC))


def _probe(source: SignozSource, now: datetime) -> DoctorReport:
    source.begin_round()
    try:
        capabilities = source.capabilities()
    except SignozError as error:
        return DoctorReport(
            url=source.base_url, ok=False, problems=[Problem.of(error)], requests=source.traffic.requests
        )
    end_ns = datetime_to_ns(now - timedelta(seconds=30))
    start_ns = datetime_to_ns(now - timedelta(hours=1))
    try:
        groups = source.client.count_errors(start_ns, end_ns, method=capabilities.exceptions_method)
    except SignozError as error:
        # a refused key or an unreachable API fails every later probe the same way
        return DoctorReport(
            url=source.base_url,
            ok=False,
            version=capabilities.version,
            apis=api_paths(capabilities, None),
            clickhouse_errors=clickhouse_errors(capabilities),
            problems=[Problem.of(error)],
            notes=list(capabilities.notes),
            requests=source.traffic.requests,
        )
    problems: list[Problem] = []
    sql_allowed, last_hour = _last_hour(source.client, capabilities, (start_ns, end_ns), groups, problems)
    problems = list(dict.fromkeys(problems))
    return DoctorReport(
        url=source.base_url,
        ok=not problems,
        version=capabilities.version,
        apis=api_paths(capabilities, sql_allowed),
        clickhouse_errors=clickhouse_errors(capabilities),
        clickhouse_sql=sql_allowed,
        last_hour=last_hour,
        problems=problems,
        notes=list(capabilities.notes),
        requests=source.traffic.requests,
    )


def api_paths(capabilities: Capabilities, sql_allowed: bool | None) -> list[str]:
    """The requests a round makes to this version (`sql_allowed`: the key may run clickhouse_sql)."""
    method = capabilities.exceptions_method
    how = "query parameters: SigNoz before v0.18" if method == "GET" else "a JSON body: SigNoz v0.18+"
    paths = [f"{method} /api/v1/countErrors and {method} /api/v1/listErrors ({how})"]
    if capabilities.query_range_v5 and sql_allowed:
        window = (
            "the window written in as nanoseconds"
            if capabilities.clickhouse_sql_variables
            else "the window written in as nanoseconds, since this version passes template variables "
            "such as {{.start_timestamp_nano}} to ClickHouse unrendered; SigNoz renders them from v0.88"
        )
        paths.append(
            "POST /api/v5/query_range with clickhouse_sql: exception samples, error spans and logs "
            f"grouped in ClickHouse ({window})"
        )
    elif capabilities.query_range_v5:
        paths.append(
            "POST /api/v5/query_range with builder queries: raw error spans and logs, grouped in rounds"
        )
    if not sql_allowed:
        paths.append("GET /api/v1/errorFromGroupID (one request per new exception group)")
    return paths


def clickhouse_errors(capabilities: Capabilities) -> str:
    """How this version answers a query ClickHouse fails, and how rounds reads it."""
    if not capabilities.query_range_v5:
        return "no query_range before v0.87: a failed exceptions-API query is a 500, retried with backoff"
    if capabilities.clickhouse_errors_by_code:
        return (
            "400, 404 or 500 by ClickHouse's error code (SigNoz v0.131+): not retried, and a 404 "
            "with SigNoz's error body is not taken for a missing endpoint"
        )
    return (
        "500 with ClickHouse's message (SigNoz v0.87 to v0.130): a 500 naming a ClickHouse error "
        "is not retried"
    )


def _last_hour(
    client: SignozClient,
    capabilities: Capabilities,
    window: tuple[int, int],
    groups: int,
    problems: list[Problem],
) -> tuple[bool | None, LastHour]:
    """Whether the key may run clickhouse_sql, and the hour's errors."""
    start_ns, end_ns = window
    events: int | None = None
    spans: int | None = None
    logs: int | None = None
    sql_allowed: bool | None = None
    if capabilities.query_range_v5:
        sql_allowed, events = _sql_probe(client, start_ns, end_ns, problems)
        spans = _count(client, start_ns, end_ns, "traces", "has_error = true", problems)
        logs = _count(client, start_ns, end_ns, "logs", error_severity_filter(), problems)
    if events is None and not problems:
        method = capabilities.exceptions_method
        events = _events_from_list(client, (start_ns, end_ns), groups, method, problems)
    last_hour = LastHour(exception_groups=groups, exception_events=events, error_spans=spans, error_logs=logs)
    return sql_allowed, last_hour


def _sql_probe(
    client: SignozClient, start_ns: int, end_ns: int, problems: list[Problem]
) -> tuple[bool | None, int | None]:
    """Counts exception events with clickhouse_sql: proves the grant and sizes the hour."""
    query = (
        "SELECT count() AS events FROM signoz_traces.distributed_signoz_error_index_v2 "
        f"WHERE timestamp >= fromUnixTimestamp64Nano(toInt64({start_ns})) "
        f"AND timestamp <= fromUnixTimestamp64Nano(toInt64({end_ns}))"
    )
    try:
        data = client.query_range(query_range_request(start_ns, end_ns, "raw", clickhouse_sql(query)))
    except SignozHTTPError as error:
        if error.status == 403:
            return False, None
        problems.append(Problem.of(error))
        return None, None
    except SignozError as error:
        problems.append(Problem.of(error))
        return None, None
    rows = [row for result in data.raw_results() for row in result.rows or []]
    count = rows[0].data.get("events") if rows else 0
    return True, count if isinstance(count, int) else None


def _count(
    client: SignozClient,
    start_ns: int,
    end_ns: int,
    signal: str,
    expression: str,
    problems: list[Problem],
) -> int | None:
    query = {
        "type": "builder_query",
        "spec": {
            "name": "A",
            "signal": signal,
            "disabled": False,
            "filter": {"expression": expression},
            "aggregations": [{"expression": "count()"}],
        },
    }
    try:
        data = client.query_range(query_range_request(start_ns, end_ns, "scalar", query))
    except SignozError as error:
        problems.append(Problem.of(error))
        return None
    for result in data.scalar_results():
        for row in result.data or []:
            if row and isinstance(row[-1], int | float):
                return int(row[-1])
    return 0


def _events_from_list(
    client: SignozClient, window: tuple[int, int], groups: int, method: str, problems: list[Problem]
) -> int | None:
    if groups == 0:
        return 0
    try:
        rows = client.list_errors(*window, limit=groups, method=method)
    except SignozError as error:
        problems.append(Problem.of(error))
        return None
    return sum(row.exceptionCount for row in rows)
