"""Log records of severity ERROR or worse, grouped by service, exception type and normalised body.

With `clickhouse_sql` the grouping runs inside ClickHouse (one row per group); without it rounds
pages through raw rows, newest first, up to a cap, and groups them itself with the same masks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import Field, StrictInt, StrictStr, ValidationError, model_validator

from rounds_bot.errors import SignozError
from rounds_bot.models import MAX_CONTEXT_RECORDS, ContextRecord, ErrorEvent
from rounds_bot.settings.error_codes import DEFAULT_ERROR_CODE_ATTRIBUTES
from rounds_bot.sources.log_bodies import read_without_exception
from rounds_bot.sources.neighbours import KEPT_BODY_CHARS, WINDOW_NANOS, context_records
from rounds_bot.sources.signoz.builder_queries import NUMBERS, NamedLogQueries, error_logs_raw
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.collector import (
    Collector,
    FoundGroup,
    GroupSpan,
    RowTally,
    attributes_of,
    derived_group_id,
    environment_of,
    format_buckets,
    group_event_id,
    normalise_message,
    parse_buckets,
    text_of,
)
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.grouped_rows import GroupedRowsReader, GroupKey, RowLimits
from rounds_bot.sources.signoz.links import UiLinks
from rounds_bot.sources.signoz.queries import (
    ERROR_SEVERITY_TEXTS,
    clickhouse_sql,
    error_log_groups_sql,
    is_error_severity,
    log_neighbours_sql,
    query_range_request,
)
from rounds_bot.sources.signoz.record_identity import RecordIdentity
from rounds_bot.sources.signoz.sql_permission import SqlPermission
from rounds_bot.sources.signoz.times import check_unix_ns, ns_to_datetime
from rounds_bot.sources.signoz.wire import UNREAD_JSON_BODY, Lenient, body_message, is_unread_json_body

FATAL_SEVERITY_NUMBER = 21
FATAL_TEXTS = frozenset({"FATAL", "CRITICAL", "EMERGENCY", "ALERT"})


class LogGroupRow(Lenient):
    service_name: StrictStr
    exception_type: StrictStr
    error_code: str = ""
    message_pattern: StrictStr
    occurrences: StrictInt
    first_seen_ns: StrictInt
    last_seen_ns: StrictInt
    buckets: str = ""
    max_severity_number: StrictInt = 0
    sample_message: str = ""
    sample_id: str = ""
    sample_body: str = ""
    sample_severity_text: str = ""
    sample_trace_id: str = ""
    sample_span_id: str = ""
    sample_attributes_string: dict[str, str] = Field(default_factory=dict)
    sample_attributes_number: dict[str, float] = Field(default_factory=dict)
    sample_attributes_bool: dict[str, bool] = Field(default_factory=dict)
    sample_resources_string: dict[str, str] = Field(default_factory=dict)
    sample_timestamp_ns: int = 0  # the sample's time when counted here; ClickHouse's sample is the first


class NeighbourRow(Lenient):
    """A row of `log_neighbours_sql`."""

    error_index: StrictInt
    timestamp_ns: StrictInt
    severity_text: str = ""
    severity_number: StrictInt = 0
    body: str = ""


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
    attributes_number: dict[str, float] = Field(default_factory=dict)
    attributes_bool: dict[str, bool] = Field(default_factory=dict)
    resources_string: dict[str, str] = Field(default_factory=dict)
    read_by_name: bool = False  # `builder_queries.READ_BY_NAME`: its maps hold only what rounds names

    @model_validator(mode="before")
    @classmethod
    def _json_body(cls, data: Any) -> Any:
        """A JSON body (`wire.body_message`) as its message. The grouped SQL (`queries.log_message_sql`)
        reads the `body` column first and `body_v2.message` only when it is empty, so the two differ where
        the collector also keeps the old body (its `body_json_old_body_enabled`: `body` holds the whole
        JSON text, which the SQL groups on). A row written before JSON bodies were on reads `{}` here
        while the SQL reads its text from `body`: it falls back to its attributes and is grouped by its
        exception type, stack or template, else it is skipped (`wire.UNREAD_JSON_BODY`) rather than grouped
        with every other such row under no message."""
        if not isinstance(data, dict) or "body" not in data:
            return data
        body = data["body"]
        message = body_message(body)
        if message is None:
            return data
        strings = data.get("attributes_string")
        if is_unread_json_body(body, strings if isinstance(strings, dict) else {}):
            raise ValueError(UNREAD_JSON_BODY)
        return {**data, "body": message}


def record_error_code(strings: dict[str, str], numbers: dict[str, float], names: tuple[str, ...]) -> str:
    """A raw record's error code for its group key ("" for none): the first of `names` it holds, as a string
    or as a number (SigNoz keeps an OTLP int as a Float64: a whole one is written as the int, as the event's
    attributes hold it, `collector.attributes_of`). Read from the string attribute alone, records of one
    message with the codes 1205 and 1213 set as ints were one group, counted as the first one's code."""
    for name in names:
        text = strings.get(name, "")
        if text.strip():
            return text
        number = numbers.get(name)
        if (
            number is not None and math.isfinite(number) and number != 0
        ):  # 0: none (`builder_queries._numbers`)
            return str(int(number)) if float(number).is_integer() else str(number)
    return ""


@dataclass
class LogsSchema:
    """What the logs table holds, learned once per source: `body_v2` (JSON bodies) until a query
    naming it is refused."""

    json_bodies: bool = True


@dataclass
class _SeverityTally(RowTally):
    """A group's tally that also keeps the highest severity number of its records."""

    max_severity_number: int = 0

    def add(self, timestamp_ns: int, row: dict[str, object], environment: str = "") -> None:
        super().add(timestamp_ns, row, environment)
        record = row["record"]
        assert isinstance(record, RawLog)
        self.max_severity_number = max(self.max_severity_number, record.severity_number)


class ErrorLogsReader(GroupedRowsReader[LogGroupRow, RawLog]):
    what = "error logs"
    group_model = LogGroupRow
    raw_model = RawLog

    def __init__(
        self,
        client: SignozClient,
        limits: RowLimits,
        links: UiLinks | None = None,
        schema: LogsSchema | None = None,
        code_attributes: tuple[str, ...] = DEFAULT_ERROR_CODE_ATTRIBUTES,
    ):
        super().__init__(client, limits, links)
        self._schema = schema or LogsSchema()
        # a record read by name keeps what grouping reads of it, its error code included
        self._named = NamedLogQueries(code_attributes)
        # where a record's group key reads its error code, as grouping reads an event's: `error.code`, then
        # the configured attributes in order (`grouping/error_codes.py`)
        self._code_names = tuple(dict.fromkeys(("error.code", *code_attributes)))
        self._pending: list[tuple[LogGroupRow, GroupSpan]] = []  # new groups of the read under way

    def read(self, start_ns: int, end_ns: int, collector: Collector, sql: SqlPermission) -> None:
        self._pending = []
        try:
            super().read(start_ns, end_ns, collector, sql)
        except SignozHTTPError as error:
            if not (self._schema.json_bodies and "body_v2" in str(error)):
                raise
            # a logs table from before the collector's JSON bodies (schema migration 2001)
            self._schema.json_bodies = False
            self._pending = []
            super().read(start_ns, end_ns, collector, sql)
        contexts = self._neighbours(self._pending, collector) if sql.allowed else {}
        for index, (row, group) in enumerate(self._pending):
            context = contexts.get(index, [])
            collector.found(FoundGroup(group, partial(self._event_with_context, row, group, context)))

    def _add(self, row: LogGroupRow, group: GroupSpan, collector: Collector) -> None:
        if collector.is_known(group.group_id):
            super()._add(row, group, collector)  # counted only: its event is never built
        else:
            self._pending.append((row, group))  # built once the poll's neighbours are read

    def _neighbours(
        self, pending: list[tuple[LogGroupRow, GroupSpan]], collector: Collector
    ) -> dict[int, list[ContextRecord]]:
        """The records below ERROR just before each new group's sample, in its trace and service, read
        in one query; a failed query leaves the events without them (they are context, not the error)."""
        if not pending:
            return {}
        errors = [
            (row.sample_trace_id, row.service_name, row.sample_timestamp_ns or row.first_seen_ns)
            for row, _ in pending
        ]
        query = clickhouse_sql(log_neighbours_sql(errors, WINDOW_NANOS, KEPT_BODY_CHARS, MAX_CONTEXT_RECORDS))
        low = min(moment for _, _, moment in errors) - WINDOW_NANOS
        high = max(moment for _, _, moment in errors) + 1
        try:
            data = self._client.query_range(query_range_request(low, high, "raw", query))
        except SignozError as error:
            collector.note(
                f"the log records before the new error logs were not read ({error}); none is shown"
            )
            return {}
        found: dict[int, list[tuple[int, str, int, str]]] = {}
        for result in data.raw_results():
            for raw in result.rows or []:
                try:
                    neighbour = NeighbourRow.model_validate(raw.data)
                except ValidationError:
                    continue  # a record of context the event can do without
                noted = (
                    neighbour.timestamp_ns,
                    neighbour.severity_text,
                    neighbour.severity_number,
                    neighbour.body,
                )
                found.setdefault(neighbour.error_index, []).append(noted)
        # oldest first, as the file source gives them
        return {index: context_records(sorted(noted)) for index, noted in found.items()}

    def _event_with_context(
        self, row: LogGroupRow, group: GroupSpan, context: list[ContextRecord]
    ) -> ErrorEvent:
        event = self._event(row, group)
        return event.model_copy(update={"context": context}) if context else event

    def _groups_sql(self, start_ns: int, end_ns: int, limit: int, offset: int) -> str:
        return error_log_groups_sql(start_ns, end_ns, limit, offset, json_bodies=self._schema.json_bodies)

    def _raw_query(self, limit: int, offset: int) -> dict[str, Any]:
        return error_logs_raw(limit, offset)

    def _named_raw_queries(self) -> list[tuple[str, Callable[[int, int], dict[str, Any]]]]:
        strings, *numbers = self._named.queries()
        return [("", strings), *((NUMBERS, query) for query in numbers)]

    def _raw_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        return self._named.row(data)

    def _timestamp_ns(self, record: RawLog) -> int:
        return check_unix_ns(record.timestamp, "log timestamp")

    def _key(self, record: RawLog) -> GroupKey | None:
        if not is_error_severity(record.severity_number, record.severity_text):
            return None  # the raw filter reads a superset; the one severity rule decides
        service = record.resources_string.get("service.name", "")
        exception_type = record.attributes_string.get("exception.type", "")
        error_code = record_error_code(record.attributes_string, record.attributes_number, self._code_names)
        return (service, exception_type, error_code, normalise_message(log_message(record)))

    def _identity(self, record: RawLog, timestamp_ns: int) -> RecordIdentity:
        """`queries.LOG_IDENTITY`: the resources and string attributes are compared whole between whole
        reads, and on the keys a read by name holds where one copy was read by name."""
        attributes, resources = self._named.named_part(record.attributes_string, record.resources_string)
        shared = (
            timestamp_ns,
            record.trace_id,
            record.span_id,
            _items(resources),
            record.severity_number,
            log_message(record),
            _items(attributes),
        )
        if record.read_by_name:
            return RecordIdentity(shared, None)
        return RecordIdentity(shared, (_items(record.resources_string), _items(record.attributes_string)))

    def _environment(self, record: RawLog) -> str:
        return environment_of(record.resources_string) or ""

    def _new_tally(self) -> RowTally:
        return _SeverityTally()

    def _row_from_tally(self, key: GroupKey, tally: RowTally) -> LogGroupRow:
        assert isinstance(tally, _SeverityTally)
        service, exception_type, error_code, pattern = key
        record = self._sample(tally)
        return LogGroupRow(
            service_name=service,
            exception_type=exception_type,
            error_code=error_code,
            message_pattern=pattern,
            occurrences=tally.count,
            first_seen_ns=tally.first_seen_ns,
            last_seen_ns=tally.last_seen_ns,
            buckets=format_buckets(tally.buckets),
            max_severity_number=tally.max_severity_number,
            sample_id=record.id,
            sample_body=record.body,
            sample_message=log_message(record),
            sample_severity_text=record.severity_text,
            sample_trace_id=record.trace_id,
            sample_span_id=record.span_id,
            sample_attributes_string=record.attributes_string,
            sample_attributes_number=record.attributes_number,
            sample_attributes_bool=record.attributes_bool,
            sample_resources_string=record.resources_string,
            sample_timestamp_ns=self._timestamp_ns(record),
        )

    def _group_span(self, row: LogGroupRow) -> GroupSpan:
        group_id = derived_group_id(
            "signoz-log", row.service_name, row.exception_type, row.message_pattern, row.error_code
        )
        return GroupSpan(
            group_id,
            row.service_name,
            row.occurrences,
            row.first_seen_ns,
            row.last_seen_ns,
            parse_buckets(row.buckets),
        )

    def _event(self, row: LogGroupRow, group: GroupSpan) -> ErrorEvent:
        """The group's newest record as the OTLP reader makes a log record into an event."""
        fatal = (
            row.max_severity_number >= FATAL_SEVERITY_NUMBER
            or row.sample_severity_text.upper() in FATAL_TEXTS
        )
        strings = row.sample_attributes_string
        attributes = attributes_of(
            row.sample_resources_string, strings, row.sample_attributes_number, row.sample_attributes_bool
        )
        exception_message = strings.get("exception.message") or None
        error_type = row.exception_type or None
        stacktrace = strings.get("exception.stacktrace") or None
        body = row.sample_body or row.sample_message
        if exception_message is not None and body and body != exception_message:
            attributes["log.body"] = body  # the exception is the error; the line around it is context
        elif error_type is None and exception_message is None and stacktrace is None:
            # a JSON body's message, a logger's trace: as the OTLP reader reads them
            error_type, exception_message, stacktrace = read_without_exception(body, strings, attributes)
        attributes["signoz.log_id"] = row.sample_id
        attributes["signoz.first_seen_ns"] = str(row.first_seen_ns)
        attributes["signoz.last_seen_ns"] = str(row.last_seen_ns)
        return ErrorEvent(
            event_id=group_event_id(group.group_id, row.first_seen_ns),
            timestamp=ns_to_datetime(row.first_seen_ns),
            service=row.service_name or "unknown",
            kind="log",
            error_type=error_type,
            message=exception_message if exception_message is not None else body,
            stacktrace=stacktrace,
            error_code=text_of(attributes, "error.code"),
            severity="FATAL" if fatal else "ERROR",
            fatal=fatal,
            trace_id=row.sample_trace_id or None,
            span_id=row.sample_span_id or None,
            service_version=text_of(attributes, "service.version"),
            environment=environment_of(row.sample_resources_string),
            attributes=attributes,
            source_group_id=group.group_id,
            count=row.occurrences,
            source_url=self._links.log(row.sample_id, row.last_seen_ns) if row.sample_id else None,
        )


def _items(values: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(values.items()))


def log_message(record: RawLog) -> str:
    """The Python twin of `queries.log_message_sql()`."""
    strings = record.attributes_string
    return strings.get("exception.message") or record.body or strings.get("message", "")


__all__ = ["ERROR_SEVERITY_TEXTS", "ErrorLogsReader", "LogGroupRow"]
