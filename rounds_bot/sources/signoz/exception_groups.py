"""Exception groups from SigNoz's error index: counts from listErrors, one sample per new group.

Flow: `countErrors` says how many groups the window holds; `listErrors` pages through them with
counts and first/last seen (SigNoz aggregates), or one `clickhouse_sql` query counts them by minute
where the key may run it; a group already mapped to a signature becomes a count, and each new group
gets one representative occurrence with its stack trace (`exception_samples.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from pydantic import Field, StrictInt, StrictStr

from rounds_bot.errors import SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.collector import (
    AttributeValue,
    Collector,
    FoundGroup,
    GroupSpan,
    attributes_of,
    environment_of,
    group_event_id,
    parse_buckets,
    span_kind,
    text_of,
)
from rounds_bot.sources.signoz.exception_samples import ExceptionSample, ExceptionSampleReader
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.links import UiLinks
from rounds_bot.sources.signoz.queries import (
    MAX_V5_LIMIT,
    clickhouse_sql,
    exception_groups_sql,
    query_range_request,
)
from rounds_bot.sources.signoz.sql_permission import SqlPermission
from rounds_bot.sources.signoz.times import (
    check_unix_ns,
    format_rfc3339_ns,
    ns_to_datetime,
    parse_rfc3339_ns,
)
from rounds_bot.sources.signoz.wire import ErrorGroupRow, Lenient


class ExceptionGroupSqlRow(Lenient):
    """A row of `exception_groups_sql`."""

    group_id: StrictStr = Field(min_length=1)
    service_name: StrictStr
    occurrences: StrictInt = Field(ge=1)
    first_seen_ns: StrictInt
    last_seen_ns: StrictInt
    buckets: StrictStr
    sample_exception_type: StrictStr
    sample_exception_message: StrictStr


@dataclass(frozen=True)
class ExceptionSettings:
    page_size: int = 10_000
    sample_batch_size: int = 400
    detail_request_cap: int = 200


class ExceptionGroupsReader:
    def __init__(
        self,
        client: SignozClient,
        settings: ExceptionSettings,
        *,
        by_sql: bool,
        method: str = "POST",
        links: UiLinks | None = None,
    ):
        self._links = links or UiLinks(client.base_url)
        self._client = client
        # where the stream's cursor is: listErrors reads from here, never the re-read overlap
        self.list_from_ns = 0
        self._settings = settings
        self._by_sql = by_sql  # a query_range route runs clickhouse_sql (v5, or v4 before v0.87)
        self._method = method
        self._samples = ExceptionSampleReader(
            client,
            by_sql=by_sql,
            batch_size=settings.sample_batch_size,
            detail_cap=settings.detail_request_cap,
        )

    def read(self, start_ns: int, end_ns: int, collector: Collector, sql: SqlPermission) -> None:
        """The window's exception groups with their minutes: counted in ClickHouse where the key may
        run clickhouse_sql, else by listErrors (a group's count then spans its first to last seen)."""
        if self._by_sql and sql.allowed:
            try:
                self._read_by_sql(start_ns, end_ns, collector)
                return
            except SignozHTTPError as error:
                if error.status != 403:
                    raise
                sql.allowed = False
        self._read_by_list(start_ns, end_ns, collector, sql)

    def _read_by_sql(self, start_ns: int, end_ns: int, collector: Collector) -> None:
        rows: list[ErrorGroupRow] = []
        spans: list[GroupSpan] = []
        offset = 0
        while True:
            sql = exception_groups_sql(start_ns, end_ns, MAX_V5_LIMIT, offset)
            data = self._client.query_range(query_range_request(start_ns, end_ns, "raw", clickhouse_sql(sql)))
            page = [row for result in data.raw_results() for row in (result.rows or [])]
            for number, raw in enumerate(page, start=offset):
                where = f"{self._client.base_url}{self._client.query_range_path} exception group {number}"
                found = _read_group(raw.data, where, collector)
                if found is not None:
                    rows.append(found[0])
                    spans.append(found[1])
            if len(page) < MAX_V5_LIMIT:
                break
            offset += len(page)
        self._found(list(zip(rows, spans, strict=True)), start_ns, end_ns - 1, collector, SqlPermission())

    def _read_by_list(self, start_ns: int, end_ns: int, collector: Collector, sql: SqlPermission) -> None:
        # listErrors counts whole groups, not minutes: nothing before the stream's cursor is read again
        start_ns = max(start_ns, self.list_from_ns)
        if start_ns >= end_ns:
            return
        # the exceptions API includes `end`: ask for [start, end - 1 ns] so the window stays half-open
        groups: list[tuple[ErrorGroupRow, GroupSpan]] = []
        for row in self._list_all(start_ns, end_ns - 1):
            group = self._span_of(row, collector)
            if group is not None:
                groups.append((row, group))
        self._found(groups, start_ns, end_ns - 1, collector, sql)

    def _found(
        self,
        groups: list[tuple[ErrorGroupRow, GroupSpan]],
        start_ns: int,
        end_ns: int,
        collector: Collector,
        sql: SqlPermission,
    ) -> None:
        new_groups = [(row, group) for row, group in groups if not collector.is_known(group.group_id)]
        samples = self._samples.read(new_groups, start_ns, end_ns, collector, sql)
        missing = sum(1 for _, group in new_groups if group.group_id not in samples)
        for row, group in groups:
            sample = samples.get(group.group_id)
            collector.found(FoundGroup(group, partial(self._event, row, group, sample)))
        if missing:
            collector.note(
                f"{missing} new exception group(s) were read without a representative "
                "occurrence, so their events carry type and message but no stack trace"
            )

    def _list_all(self, start_ns: int, end_ns: int) -> list[ErrorGroupRow]:
        expected = self._client.count_errors(start_ns, end_ns, method=self._method)
        if expected == 0:
            return []
        rows = self._pages(start_ns, end_ns, self._settings.page_size)
        if len(rows) < expected:
            # Offset paging over groups that tie on firstSeen is not stable in ClickHouse: read
            # everything in one page instead.
            rows = self._pages(start_ns, end_ns, expected + self._settings.page_size)
        if len(rows) < expected:
            raise SignozError(
                f"SigNoz's listErrors returned {len(rows)} exception groups for the window but "
                f"countErrors counted {expected}; rounds will not report a partial window",
                hint="run the round again; if it persists, report the SigNoz version",
            )
        return list(rows.values())

    def _pages(self, start_ns: int, end_ns: int, page_size: int) -> dict[str, ErrorGroupRow]:
        rows: dict[str, ErrorGroupRow] = {}
        offset = 0
        while True:
            page = self._client.list_errors(
                start_ns, end_ns, limit=page_size, offset=offset, method=self._method
            )
            for row in page:
                rows.setdefault(row.groupID, row)
            if len(page) < page_size:
                return rows
            offset += page_size

    def _span_of(self, row: ErrorGroupRow, collector: Collector) -> GroupSpan | None:
        try:
            first = parse_rfc3339_ns(row.firstSeen)
            last = parse_rfc3339_ns(row.lastSeen)
        except ValueError as error:
            collector.skip(
                f"{self._client.base_url}/api/v1/listErrors group {row.groupID}",
                f"unreadable firstSeen/lastSeen: {error}",
            )
            return None
        return GroupSpan(row.groupID, row.serviceName, row.exceptionCount, first, last)

    # -- events ------------------------------------------------------------------------------

    def _event(self, row: ErrorGroupRow, group: GroupSpan, sample: ExceptionSample | None) -> ErrorEvent:
        """The group's newest occurrence as the OTLP reader makes an exception event into an event:
        resource and span attributes merged, the error code and environment read from them."""
        url_timestamp = sample.timestamp_ns if sample else group.last_seen_ns
        attributes: dict[str, AttributeValue] = {}
        if sample is not None:
            resources = {"service.name": sample.service_name or row.serviceName}
            for key, value in (
                ("service.version", sample.service_version),
                ("deployment.environment", sample.environment),
                ("deployment.environment.name", sample.environment_name),
            ):
                if value:
                    resources[key] = value
            attributes = {**attributes_of(resources, {}, {}, {}), **sample.span_attributes}
            attributes["signoz.error_id"] = sample.error_id
            attributes["exception.escaped"] = sample.exception_escaped
        attributes["signoz.first_seen_ns"] = str(group.first_seen_ns)
        attributes["signoz.last_seen_ns"] = str(group.last_seen_ns)
        environment = environment_of({k: str(v) for k, v in attributes.items()}) if sample else None
        return ErrorEvent(
            event_id=group_event_id(group.group_id, group.first_seen_ns),
            timestamp=ns_to_datetime(group.first_seen_ns),
            service=row.serviceName or "unknown",
            kind="exception",
            error_type=row.exceptionType or None,
            message=row.exceptionMessage,
            stacktrace=(sample.exception_stacktrace or None) if sample else None,
            error_code=text_of(attributes, "error.code"),
            trace_id=(sample.trace_id or None) if sample else None,
            span_id=(sample.span_id or None) if sample else None,
            parent_span_id=(sample.parent_span_id or None) if sample else None,
            span_kind=span_kind(sample.kind_string) if sample else None,
            service_version=text_of(attributes, "service.version"),
            environment=environment,
            attributes=attributes,
            source_group_id=group.group_id,
            count=group.count,
            source_url=(
                self._links.trace(sample.trace_id, sample.span_id)
                if sample is not None and sample.trace_id
                else self._links.exception(group.group_id, url_timestamp)
            ),
        )


def _read_group(
    data: dict[str, object], where: str, collector: Collector
) -> tuple[ErrorGroupRow, GroupSpan] | None:
    """A row of `exception_groups_sql` as listErrors would have answered it, with its minutes."""
    try:
        row = ExceptionGroupSqlRow.model_validate(data)
        check_unix_ns(row.first_seen_ns, "first_seen_ns")
        check_unix_ns(row.last_seen_ns, "last_seen_ns")
        buckets = parse_buckets(row.buckets)
    except ValueError as error:  # a ValidationError among them
        collector.skip_invalid(where, "exception group", error)
        return None
    listed = ErrorGroupRow(
        exceptionType=row.sample_exception_type,
        exceptionMessage=row.sample_exception_message,
        exceptionCount=row.occurrences,
        lastSeen=format_rfc3339_ns(row.last_seen_ns),
        firstSeen=format_rfc3339_ns(row.first_seen_ns),
        serviceName=row.service_name,
        groupID=row.group_id,
    )
    span = GroupSpan(
        row.group_id, row.service_name, row.occurrences, row.first_seen_ns, row.last_seen_ns, buckets
    )
    return listed, span
