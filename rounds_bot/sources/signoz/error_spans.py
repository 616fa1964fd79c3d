"""Spans with error status that carry no exception event, grouped by service, name and message.

Spans that do carry an exception event are already counted by the error index (listErrors), so
they are left out here: the two sets overlap, and this keeps every occurrence counted once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import StrictInt, StrictStr

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
from rounds_bot.sources.signoz.exception_groups import REFUSED_SQL_NOTE, SqlPermission
from rounds_bot.sources.signoz.grouped_rows import iter_rows, validated
from rounds_bot.sources.signoz.queries import (
    MAX_V5_LIMIT,
    clickhouse_sql,
    error_span_groups_sql,
    error_spans_raw,
)
from rounds_bot.sources.signoz.times import check_unix_ns, ns_to_datetime, parse_rfc3339_ns
from rounds_bot.sources.signoz.wire import Lenient


class SpanGroupRow(Lenient):
    service_name: StrictStr
    span_name: StrictStr
    message_pattern: StrictStr
    occurrences: StrictInt
    first_seen_ns: StrictInt
    last_seen_ns: StrictInt
    sample_trace_id: str = ""
    sample_span_id: str = ""
    sample_status_message: str = ""
    sample_response_status_code: str = ""
    sample_http_method: str = ""
    sample_http_url: str = ""
    sample_service_version: str = ""
    sample_environment: str = ""


class RawSpan(Lenient):
    """The fields of a v5 raw trace row rounds uses (keys as SigNoz names them)."""

    timestamp: StrictStr
    trace_id: StrictStr
    span_id: StrictStr
    name: StrictStr
    service_name: str = ""
    status_message: str = ""
    response_status_code: str = ""
    http_method: str = ""
    http_url: str = ""
    service_version: str = ""
    environment: str = ""
    events: list[Any] | None = None


@dataclass(frozen=True)
class RowLimits:
    raw_page_size: int = 1_000
    raw_row_cap: int = 20_000
    sql_group_cap: int = 50_000


class ErrorSpansReader:
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
        return f"{self._client.base_url}/api/v5/query_range error spans row {number}"

    def _read_groups(self, start_ns: int, end_ns: int, collector: Collector) -> None:
        rows = iter_rows(
            self._client,
            start_ns,
            end_ns,
            lambda limit, offset: clickhouse_sql(error_span_groups_sql(limit, offset)),
            page_size=MAX_V5_LIMIT,
            row_cap=self._limits.sql_group_cap + 1,
        )
        for number, data in rows:
            if number >= self._limits.sql_group_cap:
                collector.note(
                    f"more than {self._limits.sql_group_cap} groups of error spans in the window; "
                    "the rarest were not read (shorten the polling interval)"
                )
                return
            row = validated(SpanGroupRow, data, self._where(number), collector)
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
                what="error spans",
                consequence=f"raw rows, newest first, at most {cap} a round, grouped in rounds",
            )
        )
        tallies: dict[tuple[str, str, str], Tally] = {}
        read = 0
        rows = iter_rows(
            self._client,
            start_ns,
            end_ns,
            error_spans_raw,
            page_size=self._limits.raw_page_size,
            row_cap=cap + 1,
        )
        for number, data in rows:
            if number >= cap:
                collector.note(f"more than {cap} error spans in the window: only the newest {cap} were read")
                break
            read += 1
            span = validated(RawSpan, _flatten_span(data), self._where(number), collector)
            if span is None:
                continue
            try:
                timestamp_ns = parse_rfc3339_ns(span.timestamp)
            except ValueError as error:
                collector.skip(self._where(number), str(error))
                continue
            if _has_exception_event(span.events):
                continue  # counted by the exception groups
            key = (span.service_name, span.name, normalise_message(span.status_message))
            tallies.setdefault(key, Tally()).add(timestamp_ns, span.model_dump())
        for (service, name, pattern), tally in tallies.items():
            sample = tally.sample
            self._add(
                SpanGroupRow(
                    service_name=service,
                    span_name=name,
                    message_pattern=pattern,
                    occurrences=tally.count,
                    first_seen_ns=tally.first_seen_ns,
                    last_seen_ns=tally.last_seen_ns,
                    sample_trace_id=str(sample["trace_id"]),
                    sample_span_id=str(sample["span_id"]),
                    sample_status_message=str(sample["status_message"]),
                    sample_response_status_code=str(sample["response_status_code"]),
                    sample_http_method=str(sample["http_method"]),
                    sample_http_url=str(sample["http_url"]),
                    sample_service_version=str(sample["service_version"]),
                    sample_environment=str(sample["environment"]),
                ),
                collector,
            )

    def _add(self, row: SpanGroupRow, collector: Collector) -> None:
        group_id = derived_group_id("signoz-span", row.service_name, row.span_name, row.message_pattern)
        group = GroupSpan(group_id, row.service_name, row.occurrences, row.first_seen_ns, row.last_seen_ns)
        if collector.is_known(group_id):
            collector.count_known(group)
            return
        attributes: dict[str, str | int | float | bool] = {
            "span.name": row.span_name,
            "signoz.first_seen_ns": str(row.first_seen_ns),
            "signoz.last_seen_ns": str(row.last_seen_ns),
        }
        for key, value in (
            ("http.request.method", row.sample_http_method),
            ("url.full", row.sample_http_url),
            ("http.response.status_code", row.sample_response_status_code),
        ):
            if value:
                attributes[key] = value
        trace_id = row.sample_trace_id or None
        collector.events.append(
            ErrorEvent(
                event_id=group_event_id(group_id, row.first_seen_ns),
                timestamp=ns_to_datetime(row.first_seen_ns),
                service=row.service_name or "unknown",
                kind="span_error",
                message=row.sample_status_message or f"span {row.span_name} ended with an error",
                trace_id=trace_id,
                span_id=row.sample_span_id or None,
                service_version=row.sample_service_version or None,
                environment=row.sample_environment or None,
                attributes=attributes,
                source_group_id=group_id,
                count=row.occurrences,
                source_url=f"{self._client.base_url}/trace/{trace_id}" if trace_id else None,
            )
        )


def _flatten_span(data: dict[str, Any]) -> dict[str, Any]:
    flat = dict(data)
    if "timestamp" not in flat and "__row_timestamp" in flat:
        flat["timestamp"] = flat["__row_timestamp"]
    flat["service_name"] = data.get("service.name", "")
    flat["service_version"] = data.get("service.version", "")
    flat["environment"] = data.get("deployment.environment", "")
    for key in ("status_message", "response_status_code", "http_method", "http_url"):
        if flat.get(key) is None:
            flat[key] = ""
    return flat


def _has_exception_event(events: list[Any] | None) -> bool:
    """Events are objects since SigNoz v0.130 and JSON strings before."""
    for event in events or []:
        if isinstance(event, str):
            try:
                event = json.loads(event)
            except ValueError:
                continue
        if isinstance(event, dict):
            name = str(event.get("name", ""))
            if name == "exception" or name.endswith(".exception"):
                return True
    return False
