"""Log records of severity ERROR or worse, grouped by service, exception type and normalised body.

With `clickhouse_sql` the grouping runs inside ClickHouse (one row per group); without it rounds
pages through raw rows, newest first, up to a cap, and groups them itself with the same masks.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictInt, StrictStr

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.signoz.client import SignozClient, SignozHTTPError
from rounds_bot.sources.signoz.collector import (
    Collector,
    GroupSpan,
    Tally,
    derived_group_id,
    group_event_id,
    normalise_message,
)
from rounds_bot.sources.signoz.error_spans import RowLimits
from rounds_bot.sources.signoz.exception_groups import REFUSED_SQL_NOTE, SqlPermission
from rounds_bot.sources.signoz.grouped_rows import iter_rows, validated
from rounds_bot.sources.signoz.queries import (
    ERROR_SEVERITY_TEXTS,
    MAX_V5_LIMIT,
    clickhouse_sql,
    error_log_groups_sql,
    error_logs_raw,
)
from rounds_bot.sources.signoz.times import check_unix_ns, ns_to_datetime
from rounds_bot.sources.signoz.wire import Lenient

FATAL_SEVERITY_NUMBER = 21
FATAL_TEXTS = frozenset({"FATAL", "CRITICAL", "EMERGENCY", "ALERT"})


class LogGroupRow(Lenient):
    service_name: StrictStr
    exception_type: StrictStr
    message_pattern: StrictStr
    occurrences: StrictInt
    first_seen_ns: StrictInt
    last_seen_ns: StrictInt
    max_severity_number: StrictInt = 0
    sample_id: str = ""
    sample_body: str = ""
    sample_severity_text: str = ""
    sample_exception_message: str = ""
    sample_stacktrace: str = ""
    sample_trace_id: str = ""
    sample_span_id: str = ""
    sample_service_version: str = ""
    sample_environment: str = ""


class RawLog(Lenient):
    """The fields of a v5 raw log row rounds uses (SigNoz's column names)."""

    timestamp: Any
    id: StrictStr
    body: StrictStr
    severity_text: str = ""
    severity_number: StrictInt = 0
    trace_id: str = ""
    span_id: str = ""
    attributes_string: dict[str, str] = Field(default_factory=dict)
    resources_string: dict[str, str] = Field(default_factory=dict)


class ErrorLogsReader:
    def __init__(self, client: SignozClient, limits: RowLimits):
        self._client = client
        self._limits = limits

    def read(self, start_ns: int, end_ns: int, collector: Collector, sql: SqlPermission) -> None:
        if sql.allowed:
            try:
                self._read_groups(start_ns, end_ns, collector)
                return
            except SignozHTTPError as error:
                if error.status != 403:
                    raise
                sql.allowed = False
        self._read_raw(start_ns, end_ns, collector)

    def _where(self, number: int) -> str:
        return f"{self._client.base_url}/api/v5/query_range error logs row {number}"

    def _read_groups(self, start_ns: int, end_ns: int, collector: Collector) -> None:
        rows = iter_rows(
            self._client,
            start_ns,
            end_ns,
            lambda limit, offset: clickhouse_sql(error_log_groups_sql(limit, offset)),
            page_size=MAX_V5_LIMIT,
            row_cap=self._limits.sql_group_cap + 1,
        )
        for number, data in rows:
            if number >= self._limits.sql_group_cap:
                collector.note(
                    f"more than {self._limits.sql_group_cap} groups of error logs in the window; "
                    "the rarest were not read (shorten the polling interval)"
                )
                return
            row = validated(LogGroupRow, data, self._where(number), collector)
            if row is None:
                continue
            try:
                check_unix_ns(row.first_seen_ns, "first_seen_ns")
                check_unix_ns(row.last_seen_ns, "last_seen_ns")
            except ValueError as error:
                collector.skip(self._where(number), str(error))
                continue
            self._add(row, collector)

    def _read_raw(self, start_ns: int, end_ns: int, collector: Collector) -> None:
        cap = self._limits.raw_row_cap
        collector.note(
            REFUSED_SQL_NOTE.format(
                what="error logs",
                consequence=f"raw rows, newest first, at most {cap} a round, grouped in rounds",
            )
        )
        tallies: dict[tuple[str, str, str], Tally] = {}
        worst: dict[tuple[str, str, str], int] = {}
        rows = iter_rows(
            self._client,
            start_ns,
            end_ns,
            error_logs_raw,
            page_size=self._limits.raw_page_size,
            row_cap=cap + 1,
        )
        for number, data in rows:
            if number >= cap:
                collector.note(f"more than {cap} error logs in the window: only the newest {cap} were read")
                break
            record = validated(RawLog, data, self._where(number), collector)
            if record is None:
                continue
            try:
                timestamp_ns = check_unix_ns(record.timestamp, "log timestamp")
            except ValueError as error:
                collector.skip(self._where(number), str(error))
                continue
            service = record.resources_string.get("service.name", "")
            exception_type = record.attributes_string.get("exception.type", "")
            key = (service, exception_type, normalise_message(record.body))
            tallies.setdefault(key, Tally()).add(timestamp_ns, {"record": record})
            worst[key] = max(worst.get(key, 0), record.severity_number)
        for key, tally in tallies.items():
            self._add(_row_from_tally(key, tally, worst[key]), collector)

    def _add(self, row: LogGroupRow, collector: Collector) -> None:
        group_id = derived_group_id("signoz-log", row.service_name, row.exception_type, row.message_pattern)
        group = GroupSpan(group_id, row.service_name, row.occurrences, row.first_seen_ns, row.last_seen_ns)
        if collector.is_known(group_id):
            collector.count_known(group)
            return
        fatal = (
            row.max_severity_number >= FATAL_SEVERITY_NUMBER
            or row.sample_severity_text.upper() in FATAL_TEXTS
        )
        collector.events.append(
            ErrorEvent(
                event_id=group_event_id(group_id, row.first_seen_ns),
                timestamp=ns_to_datetime(row.first_seen_ns),
                service=row.service_name or "unknown",
                kind="log",
                error_type=row.exception_type or None,
                message=row.sample_exception_message or row.sample_body,
                stacktrace=row.sample_stacktrace or None,
                severity="FATAL" if fatal else "ERROR",
                fatal=fatal,
                trace_id=row.sample_trace_id or None,
                span_id=row.sample_span_id or None,
                service_version=row.sample_service_version or None,
                environment=row.sample_environment or None,
                attributes={
                    "log.body": row.sample_body,
                    "signoz.log_id": row.sample_id,
                    "signoz.first_seen_ns": str(row.first_seen_ns),
                    "signoz.last_seen_ns": str(row.last_seen_ns),
                },
                source_group_id=group_id,
                count=row.occurrences,
            )
        )


def _row_from_tally(key: tuple[str, str, str], tally: Tally, worst: int) -> LogGroupRow:
    service, exception_type, pattern = key
    record = tally.sample["record"]
    assert isinstance(record, RawLog)
    return LogGroupRow(
        service_name=service,
        exception_type=exception_type,
        message_pattern=pattern,
        occurrences=tally.count,
        first_seen_ns=tally.first_seen_ns,
        last_seen_ns=tally.last_seen_ns,
        max_severity_number=worst,
        sample_id=record.id,
        sample_body=record.body,
        sample_severity_text=record.severity_text,
        sample_exception_message=record.attributes_string.get("exception.message", ""),
        sample_stacktrace=record.attributes_string.get("exception.stacktrace", ""),
        sample_trace_id=record.trace_id,
        sample_span_id=record.span_id,
        sample_service_version=record.resources_string.get("service.version", ""),
        sample_environment=record.resources_string.get("deployment.environment", ""),
    )


__all__ = ["ERROR_SEVERITY_TEXTS", "ErrorLogsReader", "LogGroupRow"]
