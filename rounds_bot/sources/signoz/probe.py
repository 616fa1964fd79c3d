"""`check()`: what rounds can read from a SigNoz, for the doctor's source check (`rounds_bot.doctor.source`).

It answers in a structured report instead of raising, so every problem is listed at once: the
version and the APIs rounds will use, whether the key may run clickhouse_sql, and the errors the
last hour holds (exception groups and events, error spans, error logs).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from pydantic import Field

from rounds_bot.errors import SignozError
from rounds_bot.models import Frozen
from rounds_bot.sources.signoz.client import SignozClient, SignozHTTPError
from rounds_bot.sources.signoz.queries import (
    clickhouse_sql,
    error_severity_filter,
    query_range_request,
)
from rounds_bot.sources.signoz.source import SignozSource
from rounds_bot.sources.signoz.times import datetime_to_ns


class LastHour(Frozen):
    exception_groups: int
    exception_events: int | None = Field(description="None when it could not be counted")
    error_spans: int | None
    error_logs: int | None


class DoctorReport(Frozen):
    url: str
    ok: bool
    version: str | None = None
    apis: list[str] = Field(default_factory=list, description="what rounds will call")
    clickhouse_sql: bool | None = None
    last_hour: LastHour | None = None
    problems: list[str] = Field(default_factory=list, description="each with what to do")
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
        return DoctorReport(url=url, ok=False, problems=[str(error)])
    with source:
        return _probe(source, now or datetime.now(UTC))


def _probe(source: SignozSource, now: datetime) -> DoctorReport:
    source.begin_round()
    try:
        capabilities = source.capabilities()
    except SignozError as error:
        return DoctorReport(
            url=source.base_url, ok=False, problems=[str(error)], requests=source.traffic.requests
        )
    apis = ["POST /api/v1/countErrors", "POST /api/v1/listErrors"]
    end_ns = datetime_to_ns(now - timedelta(seconds=30))
    start_ns = datetime_to_ns(now - timedelta(hours=1))
    try:
        groups = source.client.count_errors(start_ns, end_ns)
    except SignozError as error:
        # a refused key or an unreachable API fails every later probe the same way
        return DoctorReport(
            url=source.base_url,
            ok=False,
            version=capabilities.version,
            apis=apis,
            problems=[str(error)],
            notes=list(capabilities.notes),
            requests=source.traffic.requests,
        )
    problems: list[str] = []
    sql_allowed, last_hour = _last_hour(
        source.client, capabilities.query_range_v5, (start_ns, end_ns), groups, apis, problems
    )
    problems = list(dict.fromkeys(problems))
    return DoctorReport(
        url=source.base_url,
        ok=not problems,
        version=capabilities.version,
        apis=apis,
        clickhouse_sql=sql_allowed,
        last_hour=last_hour,
        problems=problems,
        notes=list(capabilities.notes),
        requests=source.traffic.requests,
    )


def _last_hour(
    client: SignozClient,
    query_range_v5: bool,
    window: tuple[int, int],
    groups: int,
    apis: list[str],
    problems: list[str],
) -> tuple[bool | None, LastHour]:
    """Whether the key may run clickhouse_sql, and the hour's errors; adds the APIs rounds will call."""
    start_ns, end_ns = window
    events: int | None = None
    spans: int | None = None
    logs: int | None = None
    sql_allowed: bool | None = None
    if query_range_v5:
        sql_allowed, events = _sql_probe(client, start_ns, end_ns, problems)
        apis.append(
            "POST /api/v5/query_range (clickhouse_sql: exception samples, error spans and logs "
            "grouped in ClickHouse)"
            if sql_allowed
            else "POST /api/v5/query_range (builder raw rows, grouped in rounds)"
        )
        spans = _count(client, start_ns, end_ns, "traces", "has_error = true", problems)
        logs = _count(client, start_ns, end_ns, "logs", error_severity_filter(), problems)
    if not sql_allowed:
        apis.append("GET /api/v1/errorFromGroupID (one request per new exception group)")
    if events is None and not problems:
        events = _events_from_list(client, start_ns, end_ns, groups, problems)
    last_hour = LastHour(exception_groups=groups, exception_events=events, error_spans=spans, error_logs=logs)
    return sql_allowed, last_hour


def _sql_probe(
    client: SignozClient, start_ns: int, end_ns: int, problems: list[str]
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
        problems.append(str(error))
        return None, None
    except SignozError as error:
        problems.append(str(error))
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
    problems: list[str],
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
        problems.append(str(error))
        return None
    for result in data.scalar_results():
        for row in result.data or []:
            if row and isinstance(row[-1], int | float):
                return int(row[-1])
    return 0


def _events_from_list(
    client: SignozClient, start_ns: int, end_ns: int, groups: int, problems: list[str]
) -> int | None:
    if groups == 0:
        return 0
    try:
        rows = client.list_errors(start_ns, end_ns, limit=groups)
    except SignozError as error:
        problems.append(str(error))
        return None
    return sum(row.exceptionCount for row in rows)
