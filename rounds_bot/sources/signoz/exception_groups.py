"""Exception groups from SigNoz's error index: counts from listErrors, one sample per new group.

Flow: `countErrors` says how many groups the window holds; `listErrors` pages through them with
counts and first/last seen (SigNoz aggregates); a group already mapped to a signature becomes a
count, and each new group gets one representative occurrence with its stack trace: in batches
through `clickhouse_sql` where the key may run it, else one `errorFromGroupID` each, up to a cap.

A sample batch holds groups whose last occurrences are neighbours in time and reads only the span
from the first to the last of them: the error index is ordered by time, so the batches together
read about the window once, not once each.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import StrictBool, StrictInt, StrictStr, ValidationError

from rounds_bot.errors import SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.collector import Collector, GroupSpan, group_event_id
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.queries import (
    clickhouse_sql,
    exception_samples_sql,
    query_range_request,
)
from rounds_bot.sources.signoz.times import NS_PER_MS, check_unix_ns, ns_to_datetime, parse_rfc3339_ns
from rounds_bot.sources.signoz.wire import ErrorGroupRow, Lenient


class ExceptionSample(Lenient):
    """A row of `exception_samples_sql`."""

    group_id: StrictStr
    error_id: StrictStr
    timestamp_ns: StrictInt
    exception_type: StrictStr
    exception_message: StrictStr
    exception_stacktrace: StrictStr
    exception_escaped: StrictBool
    trace_id: StrictStr
    span_id: StrictStr
    service_name: StrictStr
    service_version: str = ""
    environment: str = ""
    environment_name: str = ""


@dataclass(frozen=True)
class ExceptionSettings:
    page_size: int = 10_000
    sample_batch_size: int = 400
    detail_request_cap: int = 200


@dataclass
class SqlPermission:
    """Whether this poll may use clickhouse_sql; the first 403 turns it off for the poll."""

    allowed: bool = True


REFUSED_SQL_NOTE = (
    "the SigNoz API key may not run clickhouse_sql queries (403); rounds read {what} "
    "without them: {consequence}. Grant the key's role clickhouse_sql to aggregate inside SigNoz"
)


class ExceptionGroupsReader:
    def __init__(
        self, client: SignozClient, settings: ExceptionSettings, *, use_v5: bool, method: str = "POST"
    ):
        self._client = client
        self._settings = settings
        self._use_v5 = use_v5
        self._method = method

    def read(self, start_ns: int, end_ns: int, collector: Collector, sql: SqlPermission) -> None:
        rows = self._list_all(start_ns, end_ns)
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]] = []
        for row in rows:
            group = self._span_of(row, collector)
            if group is None:
                continue
            if collector.is_known(group.group_id):
                collector.count_known(group)
            else:
                new_groups.append((row, group))
        samples = self._samples(new_groups, start_ns, end_ns, collector, sql)
        missing = 0
        for row, group in new_groups:
            sample = samples.get(group.group_id)
            missing += sample is None
            collector.events.append(self._event(row, group, sample))
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

    # -- representative occurrences ------------------------------------------------------------

    def _samples(
        self,
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]],
        start_ns: int,
        end_ns: int,
        collector: Collector,
        sql: SqlPermission,
    ) -> dict[str, ExceptionSample]:
        if not new_groups:
            return {}
        if self._use_v5 and sql.allowed:
            try:
                return self._samples_by_sql(new_groups, start_ns, end_ns, collector)
            except SignozHTTPError as error:
                if error.status != 403:
                    raise
                sql.allowed = False
        return self._samples_one_by_one(new_groups, collector, sql)

    def _samples_by_sql(
        self,
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]],
        start_ns: int,
        end_ns: int,
        collector: Collector,
    ) -> dict[str, ExceptionSample]:
        samples: dict[str, ExceptionSample] = {}
        batch = self._settings.sample_batch_size
        by_last_seen = sorted((group for _, group in new_groups), key=lambda group: group.last_seen_ns)
        for index in range(0, len(by_last_seen), batch):
            groups = by_last_seen[index : index + batch]
            ids = [group.group_id for group in groups]
            # each group's sample is its last occurrence in the window, at its lastSeen: read only the
            # span of this batch's lastSeen (a millisecond more, should a SigNoz round lastSeen down)
            low = max(start_ns, groups[0].last_seen_ns)
            high = min(end_ns, groups[-1].last_seen_ns + NS_PER_MS)
            query = clickhouse_sql(exception_samples_sql(ids, low, high))
            data = self._client.query_range(query_range_request(low, high, "raw", query))
            for result in data.raw_results():
                for number, raw in enumerate(result.rows or []):
                    where = f"{self._client.base_url}/api/v5/query_range exception sample {number}"
                    sample = _read_sample(raw.data, where, collector)
                    if sample is not None:
                        samples[sample.group_id] = sample
        return samples

    def _samples_one_by_one(
        self,
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]],
        collector: Collector,
        sql: SqlPermission,
    ) -> dict[str, ExceptionSample]:
        cap = self._settings.detail_request_cap
        if not sql.allowed:
            collector.note(
                REFUSED_SQL_NOTE.format(
                    what="exception samples",
                    consequence=f"one errorFromGroupID request per new group, at most {cap}",
                )
            )
        samples: dict[str, ExceptionSample] = {}
        for row, group in new_groups[:cap]:
            detail = self._client.error_from_group_id(group.group_id, group.last_seen_ns)
            if detail is None:
                continue
            samples[group.group_id] = ExceptionSample(
                group_id=detail.groupID,
                error_id=detail.errorId,
                timestamp_ns=group.last_seen_ns,
                exception_type=detail.exceptionType,
                exception_message=detail.exceptionMessage,
                exception_stacktrace=detail.exceptionStacktrace,
                exception_escaped=detail.exceptionEscaped,
                trace_id=detail.traceID,
                span_id=detail.spanID,
                service_name=detail.serviceName or row.serviceName,
            )
        if len(new_groups) > cap:
            collector.note(
                f"{len(new_groups) - cap} of {len(new_groups)} new exception groups got no "
                f"errorFromGroupID request: the cap of {cap} detail requests per round was reached"
            )
        return samples

    # -- events ------------------------------------------------------------------------------

    def _event(self, row: ErrorGroupRow, group: GroupSpan, sample: ExceptionSample | None) -> ErrorEvent:
        url_timestamp = sample.timestamp_ns if sample else group.last_seen_ns
        attributes: dict[str, str | int | float | bool] = {
            "signoz.first_seen_ns": str(group.first_seen_ns),
            "signoz.last_seen_ns": str(group.last_seen_ns),
        }
        if sample is not None:
            attributes["signoz.error_id"] = sample.error_id
            attributes["exception.escaped"] = sample.exception_escaped
        return ErrorEvent(
            event_id=group_event_id(group.group_id, group.first_seen_ns),
            timestamp=ns_to_datetime(group.first_seen_ns),
            service=row.serviceName or "unknown",
            kind="exception",
            error_type=row.exceptionType or None,
            message=row.exceptionMessage,
            stacktrace=(sample.exception_stacktrace or None) if sample else None,
            trace_id=(sample.trace_id or None) if sample else None,
            span_id=(sample.span_id or None) if sample else None,
            service_version=(sample.service_version or None) if sample else None,
            environment=(sample.environment_name or sample.environment or None) if sample else None,
            attributes=attributes,
            source_group_id=group.group_id,
            count=group.count,
            source_url=(
                f"{self._client.base_url}/error-detail?groupId={group.group_id}&timestamp={url_timestamp}"
            ),
        )


def _read_sample(data: dict[str, object], where: str, collector: Collector) -> ExceptionSample | None:
    try:
        sample = ExceptionSample.model_validate(data)
        check_unix_ns(sample.timestamp_ns, "timestamp_ns")
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        collector.skip(where, f"exception sample field {location}: {first['msg']}")
        return None
    except ValueError as error:
        collector.skip(where, str(error))
        return None
    return sample
