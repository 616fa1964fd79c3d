"""Spans with error status whose exception is not in the error index, grouped by service, name,
error type, response code and message.

Spans that do carry an exception event are already counted by the error index (listErrors), so
they are left out here: the two sets overlap, and this keeps every occurrence counted once.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, StrictInt, StrictStr

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.signoz.builder_queries import error_spans_raw
from rounds_bot.sources.signoz.collector import (
    GroupSpan,
    RowTally,
    attributes_of,
    derived_group_id,
    environment_of,
    format_buckets,
    group_event_id,
    normalise_message,
    parse_buckets,
    span_kind,
    text_of,
)
from rounds_bot.sources.signoz.grouped_rows import GroupedRowsReader, GroupKey
from rounds_bot.sources.signoz.queries import error_span_groups_sql
from rounds_bot.sources.signoz.record_identity import RecordIdentity
from rounds_bot.sources.signoz.times import ns_to_datetime, parse_rfc3339_ns
from rounds_bot.sources.signoz.wire import Lenient, exception_event


class SpanGroupRow(Lenient):
    service_name: StrictStr
    span_name: StrictStr
    message_pattern: StrictStr
    error_type: str = ""
    response_code: str = ""
    occurrences: StrictInt
    first_seen_ns: StrictInt
    last_seen_ns: StrictInt
    buckets: str = ""
    sample_trace_id: str = ""
    sample_span_id: str = ""
    sample_parent_span_id: str = ""
    sample_kind_string: str = ""
    sample_status_message: str = ""
    sample_http_method: str = ""
    sample_http_url: str = ""
    sample_attributes_string: dict[str, str] = Field(default_factory=dict)
    sample_attributes_number: dict[str, float] = Field(default_factory=dict)
    sample_attributes_bool: dict[str, bool] = Field(default_factory=dict)
    sample_resources_string: dict[str, str] = Field(default_factory=dict)


class RawSpan(Lenient):
    """The fields of a v5 raw trace row rounds uses (keys as SigNoz names them)."""

    timestamp: StrictStr
    trace_id: StrictStr
    span_id: StrictStr
    name: StrictStr
    parent_span_id: str = ""
    kind_string: str = ""
    service_name: str = ""
    status_message: str = ""
    response_status_code: str = ""
    http_method: str = ""
    http_url: str = ""
    service_version: str = ""
    environment: str = ""
    events: list[Any] | None = None


class ErrorSpansReader(GroupedRowsReader[SpanGroupRow, RawSpan]):
    what = "error spans"
    group_model = SpanGroupRow
    raw_model = RawSpan

    def _groups_sql(self, start_ns: int, end_ns: int, limit: int, offset: int) -> str:
        return error_span_groups_sql(start_ns, end_ns, limit, offset)

    def _raw_query(self, limit: int, offset: int) -> dict[str, Any]:
        return error_spans_raw(limit, offset)

    def _raw_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        return _flatten_span(data)

    def _timestamp_ns(self, record: RawSpan) -> int:
        return parse_rfc3339_ns(record.timestamp)

    def _key(self, record: RawSpan) -> GroupKey | None:
        if indexed_by_the_collector(record.events):
            return None  # counted by the exception groups
        return (
            record.service_name,
            record.name,
            normalise_message(record.status_message),
            "",
            record.response_status_code,
        )

    def _identity(self, record: RawSpan, timestamp_ns: int) -> RecordIdentity:
        return RecordIdentity((record.trace_id, record.span_id))  # a span is always read whole

    def _environment(self, record: RawSpan) -> str:
        return record.environment

    def _row_from_tally(self, key: GroupKey, tally: RowTally) -> SpanGroupRow:
        service, name, pattern, error_type, response_code = key
        span = self._sample(tally)
        resources = {"service.name": service}
        if span.service_version:
            resources["service.version"] = span.service_version
        if span.environment:
            resources["deployment.environment"] = span.environment
        strings = {
            key: value
            for key, value in (
                ("http.request.method", span.http_method),
                ("url.full", span.http_url),
                ("http.response.status_code", span.response_status_code),
            )
            if value
        }
        return SpanGroupRow(
            service_name=service,
            span_name=name,
            message_pattern=pattern,
            error_type=error_type,
            response_code=response_code,
            occurrences=tally.count,
            first_seen_ns=tally.first_seen_ns,
            last_seen_ns=tally.last_seen_ns,
            buckets=format_buckets(tally.buckets),
            sample_trace_id=span.trace_id,
            sample_span_id=span.span_id,
            sample_parent_span_id=span.parent_span_id,
            sample_kind_string=span.kind_string,
            sample_status_message=span.status_message,
            sample_http_method=span.http_method,
            sample_http_url=span.http_url,
            sample_attributes_string=strings,
            sample_resources_string=resources,
        )

    def _group_span(self, row: SpanGroupRow) -> GroupSpan:
        group_id = derived_group_id(
            "signoz-span",
            row.service_name,
            row.span_name,
            row.message_pattern,
            row.error_type,
            row.response_code,
        )
        return GroupSpan(
            group_id,
            row.service_name,
            row.occurrences,
            row.first_seen_ns,
            row.last_seen_ns,
            parse_buckets(row.buckets),
        )

    def _event(self, row: SpanGroupRow, group: GroupSpan) -> ErrorEvent:
        """The group's newest span as the OTLP reader makes an error span into an event."""
        attributes = attributes_of(
            row.sample_resources_string,
            row.sample_attributes_string,
            row.sample_attributes_number,
            row.sample_attributes_bool,
        )
        attributes.setdefault("service.name", row.service_name)
        for key, value in (
            ("http.request.method", row.sample_http_method),
            ("url.full", row.sample_http_url),
        ):
            if value:
                attributes.setdefault(key, value)
        attributes["signoz.first_seen_ns"] = str(row.first_seen_ns)
        attributes["signoz.last_seen_ns"] = str(row.last_seen_ns)
        trace_id = row.sample_trace_id or None
        return ErrorEvent(
            event_id=group_event_id(group.group_id, row.first_seen_ns),
            timestamp=ns_to_datetime(row.first_seen_ns),
            service=row.service_name or "unknown",
            kind="span_error",
            error_type=text_of(attributes, "error.type"),
            message=row.sample_status_message or row.span_name,
            error_code=text_of(attributes, "error.code"),
            trace_id=trace_id,
            span_id=row.sample_span_id or None,
            parent_span_id=row.sample_parent_span_id or None,
            span_kind=span_kind(row.sample_kind_string),
            service_version=text_of(attributes, "service.version"),
            environment=environment_of(row.sample_resources_string),
            attributes=attributes,
            source_group_id=group.group_id,
            count=row.occurrences,
            source_url=self._links.trace(trace_id, row.sample_span_id) if trace_id else None,
        )


def indexed_by_the_collector(events: list[Any] | None) -> bool:
    """Whether the collector wrote an error-index row of one of the span's events, as `queries.INDEXED_EVENT`
    asks in SQL. Before v0.130 SigNoz answers each event as the JSON the collector stored, whose `isError` is
    set on exactly the events it indexed (signoz-otel-collector populateEventsV3, clickhouse_exporter_v3.go):
    the flag decides, for a collector before v0.144.3 indexes `exception` only, not `*.exception`. From v0.130
    SigNoz parses the events and drops the flag (pkg/types/spantypes/event.go ParseEvents), so the names
    decide, as the collector those versions ship (v0.144.3 or later) indexes them."""
    for event in events or []:
        if isinstance(event, str):
            try:
                stored = json.loads(event)
            except ValueError:
                continue  # not the collector's JSON: no row of it
            if isinstance(stored, dict) and stored.get("isError") is True:
                return True
        elif exception_event([event]) is not None:
            return True
    return False


def _flatten_span(data: dict[str, Any]) -> dict[str, Any]:
    """A raw span row as `RawSpan` reads it. A resource field the span lacks comes back as JSON null
    (SigNoz's field mapper ends in `multiIf(..., NULL)`): it is read as empty, never as a bad row."""
    flat = dict(data)
    if "timestamp" not in flat and "__row_timestamp" in flat:
        flat["timestamp"] = flat["__row_timestamp"]
    flat["service_name"] = data.get("service.name")
    flat["service_version"] = data.get("service.version")
    flat["environment"] = data.get("deployment.environment")
    for key in (
        "service_name",
        "service_version",
        "environment",
        "status_message",
        "response_status_code",
        "http_method",
        "http_url",
        "parent_span_id",
        "kind_string",
    ):
        if flat.get(key) is None:
            flat[key] = ""
    return flat
