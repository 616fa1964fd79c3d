"""`check()`: what rounds can read from a SigNoz, for the doctor's source check (`rounds_bot.doctor.source`).

It answers in a structured report instead of raising, so every problem is listed at once, each with
what to do: the version and the API paths rounds will use by its version gates (the exceptions API
by GET before v0.18 and POST since; clickhouse_sql on /api/v4/query_range from v0.60 and on
/api/v5/query_range from v0.87, with the window written in, since SigNoz renders template variables
only from v0.88; how ClickHouse's errors come back, by version), whether the key may run
clickhouse_sql, and the errors the last hour holds in each stream a round reads (exceptions, error
spans, error logs), counted by the round's own readers with the round's own queries (only the samples
and stack traces a new group would get are not read), each stream's failure reported alone. A refused
key (401/403) ends the probe: nothing more is checked.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from pydantic import Field

from rounds_bot.errors import SignozError
from rounds_bot.models import Frozen
from rounds_bot.sources.base import Window
from rounds_bot.sources.signoz.collector import Collector
from rounds_bot.sources.signoz.counting import SignozState
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.source import SignozSource, Stream
from rounds_bot.sources.signoz.sql_permission import SqlPermission
from rounds_bot.sources.signoz.times import datetime_to_ns, ns_to_datetime
from rounds_bot.sources.signoz.versions import (
    QUERY_RANGE_SQL_SINCE,
    QUERY_RANGE_V4,
    QUERY_RANGE_V5,
    Capabilities,
    format_version,
)

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
    exception_groups: int | None = Field(description="None when countErrors failed")
    exception_events: int | None = Field(description="None when it could not be counted")
    error_spans: int | None
    error_logs: int | None


class StreamHour(Frozen):
    """One stream a round reads, over the last hour: its count, what failed, or why it is not read."""

    stream: str = Field(description="exceptions, error spans or error logs")
    occurrences: int | None = None
    groups: int | None = None
    problem: Problem | None = None
    not_read: str | None = Field(default=None, description="why this SigNoz has no such stream")


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
    streams: list[StreamHour] = Field(default_factory=list, description="each stream's last hour")
    auth_failed: bool = Field(
        default=False, description="SigNoz refused the key (401/403): nothing more was checked"
    )
    problems: list[Problem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    requests: int = 0


class _AuthFailed(Exception):
    def __init__(self, error: SignozHTTPError):
        super().__init__(str(error))
        self.error = error


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
        sql_allowed, last_hour, streams = _last_hour(source, capabilities, (start_ns, end_ns))
    except _AuthFailed as refused:
        # the key is refused: every later request would be refused the same way, so nothing more is checked
        return DoctorReport(
            url=source.base_url,
            ok=False,
            version=capabilities.version,
            auth_failed=True,
            problems=[Problem.of(refused.error)],
            requests=source.traffic.requests,
        )
    return DoctorReport(
        url=source.base_url,
        ok=all(stream.problem is None for stream in streams),
        version=capabilities.version,
        apis=api_paths(capabilities, sql_allowed),
        clickhouse_errors=clickhouse_errors(capabilities),
        clickhouse_sql=sql_allowed,
        last_hour=last_hour,
        streams=streams,
        notes=list(capabilities.notes),
        requests=source.traffic.requests,
    )


def api_paths(capabilities: Capabilities, sql_allowed: bool | None) -> list[str]:
    """The requests a round makes to this version (`sql_allowed`: the key may run clickhouse_sql)."""
    method = capabilities.exceptions_method
    how = "query parameters: SigNoz before v0.18" if method == "GET" else "a JSON body: SigNoz v0.18+"
    exceptions_api = f"{method} /api/v1/countErrors and {method} /api/v1/listErrors ({how})"
    route = capabilities.query_range_path
    if route is None or sql_allowed is False:
        return [
            f"{exceptions_api}: exception groups, each counted over its first to last seen",
            *(
                [f"POST {route} with builder queries: raw error spans and logs, grouped in rounds"]
                if route == QUERY_RANGE_V5
                else []
            ),
            "GET /api/v1/errorFromGroupID (one request per new exception group)",
        ]
    window = (
        "the window written in as nanoseconds"
        if capabilities.clickhouse_sql_variables
        else "the window written in as nanoseconds, since this version passes template variables "
        "such as {{.start_timestamp_nano}} to ClickHouse unrendered; SigNoz renders them from v0.88"
    )
    older = (
        "; SigNoz before v0.87 has no /api/v5/query_range, and v4 runs the same SQL as a list panel"
        if route == QUERY_RANGE_V4
        else ""
    )
    paths = [
        f"POST {route} with clickhouse_sql: exceptions, error spans and logs counted per minute "
        f"in ClickHouse ({window}{older})"
    ]
    if sql_allowed is None:
        paths.append(
            f"{exceptions_api} and builder queries where the key may not run clickhouse_sql "
            "(whether it may could not be checked)"
        )
    return paths


def clickhouse_errors(capabilities: Capabilities) -> str:
    """How this version answers a query ClickHouse fails, and how rounds reads it."""
    # the exceptions API's handlers: countErrors answers RespondError `exec` (422), listErrors
    # HandleError (500) with no ClickHouse message; the client retries 500s only
    exceptions_api = (
        "the exceptions API answers a failed query with 422 from countErrors (not retried) "
        "or 500 from listErrors (retried with backoff)"
    )
    route = capabilities.query_range_path
    if route is None:
        return f"no query_range rounds can run SQL on before v0.60: {exceptions_api}"
    busy = "a busy server's (memory, query slots, time) retried with backoff"
    if route == QUERY_RANGE_V4:
        return (
            "500 with ClickHouse's message from /api/v4/query_range (SigNoz v0.60 to v0.86): a query's "
            f"own error is not retried, {busy}; {exceptions_api}"
        )
    if capabilities.clickhouse_errors_by_code:
        return (
            "400, 404 or 500 by ClickHouse's error code (SigNoz v0.131+): not retried, and a 404 "
            f"with SigNoz's error body is not taken for a missing endpoint; {exceptions_api}"
        )
    return (
        "500 with ClickHouse's message (SigNoz v0.87 to v0.130): a 500 naming a ClickHouse error "
        f"is not retried, {busy}; {exceptions_api}"
    )


def _last_hour(
    source: SignozSource, capabilities: Capabilities, window: tuple[int, int]
) -> tuple[bool | None, LastHour, list[StreamHour]]:
    """Whether the key may run clickhouse_sql, and each stream's hour, read by the round's own readers
    with the round's own queries: exceptions, error spans and error logs counted per group and minute in
    ClickHouse where a query_range route runs clickhouse_sql, else by listErrors (and raw rows without
    the grant). A stream that fails is reported alone; a refused key (401/403) raises `_AuthFailed`."""
    start_ns, end_ns = window
    sql = SqlPermission()
    streams = source.streams(
        capabilities, SignozState(), Window(start=ns_to_datetime(start_ns), end=ns_to_datetime(end_ns))
    )
    hours = [_stream(stream, window, sql) for stream in streams]
    if capabilities.query_range_path is None:
        why = (
            f"SigNoz {capabilities.version} has no query_range rounds can run its SQL on "
            f"(from {format_version(QUERY_RANGE_SQL_SINCE)})"
        )
        hours += [StreamHour(stream=name, not_read=why) for name in ("error spans", "error logs")]
    exceptions, spans, logs = hours
    sql_allowed: bool | None = None
    if capabilities.query_range_path is not None and any(hour.problem is None for hour in hours):
        sql_allowed = sql.allowed
    last_hour = LastHour(
        exception_groups=exceptions.groups,
        exception_events=exceptions.occurrences,
        error_spans=spans.occurrences,
        error_logs=logs.occurrences,
    )
    return sql_allowed, last_hour, hours


class _CountingCollector(Collector):
    """Takes every group for one already filed: the doctor counts, so no sample, stack trace or
    neighbouring log line is read."""

    def is_known(self, group_id: str) -> bool:
        return True


def _stream(stream: Stream, window: tuple[int, int], sql: SqlPermission) -> StreamHour:
    collector = _CountingCollector(frozenset())
    try:
        stream.read(*window, collector, sql)
    except SignozError as error:
        if isinstance(error, SignozHTTPError) and error.status in (401, 403):
            raise _AuthFailed(error) from error
        return StreamHour(stream=stream.name, problem=Problem.of(error))
    return StreamHour(stream=stream.name, groups=len(collector.groups), occurrences=collector.occurrences())
