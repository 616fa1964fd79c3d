"""One representative occurrence, with its stack trace and span attributes, per new exception group.

SigNoz's error index keeps a group's counts but not an occurrence's trace; rounds reads one sample per
group it has not mapped yet: in batches through `clickhouse_sql` where the key may run it (each batch
reads only the span of its groups' first occurrences), else one `errorFromGroupID` each, up to a cap.
"""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictInt, StrictStr, ValidationError

from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.collector import AttributeValue, Collector, GroupSpan, attributes_of
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.queries import (
    clickhouse_sql,
    exception_samples_sql,
    query_range_request,
    span_attributes_sql,
)
from rounds_bot.sources.signoz.sql_permission import REFUSED_SQL_NOTE, SqlPermission
from rounds_bot.sources.signoz.times import NS_PER_MS, check_unix_ns
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
    span_attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    parent_span_id: str = ""
    kind_string: str = ""


class SpanAttributes(Lenient):
    """A row of `span_attributes_sql`."""

    trace_id: StrictStr
    span_id: StrictStr
    parent_span_id: str = ""
    kind_string: str = ""
    attributes_string: dict[str, str] = Field(default_factory=dict)
    attributes_number: dict[str, float] = Field(default_factory=dict)
    attributes_bool: dict[str, bool] = Field(default_factory=dict)
    resources_string: dict[str, str] = Field(default_factory=dict)


class ExceptionSampleReader:
    """Samples for new exception groups: batched SQL where allowed, else capped detail requests."""

    def __init__(self, client: SignozClient, *, by_sql: bool, batch_size: int, detail_cap: int) -> None:
        self._client = client
        self._by_sql = by_sql
        self._batch_size = batch_size
        self._detail_cap = detail_cap

    def read(
        self,
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]],
        start_ns: int,
        end_ns: int,
        collector: Collector,
        sql: SqlPermission,
    ) -> dict[str, ExceptionSample]:
        if not new_groups:
            return {}
        if self._by_sql and sql.allowed:
            try:
                return self._by_sql_batches(new_groups, start_ns, end_ns, collector)
            except SignozHTTPError as error:
                if error.status != 403:
                    raise
                sql.allowed = False
        return self._one_by_one(new_groups, collector, sql)

    def _by_sql_batches(
        self,
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]],
        start_ns: int,
        end_ns: int,
        collector: Collector,
    ) -> dict[str, ExceptionSample]:
        samples: dict[str, ExceptionSample] = {}
        batch = self._batch_size
        by_first_seen = sorted((group for _, group in new_groups), key=lambda group: group.first_seen_ns)
        for index in range(0, len(by_first_seen), batch):
            groups = by_first_seen[index : index + batch]
            ids = [group.group_id for group in groups]
            # each group's sample is its first occurrence in the window, at its firstSeen: read only the
            # span of this batch's firstSeen (a millisecond more, should a SigNoz round it down); a row of
            # a long span placed at its end (`placed_exceptions.py`) is seen before the window's start
            low = groups[0].first_seen_ns
            high = min(end_ns, groups[-1].first_seen_ns + NS_PER_MS)
            query = clickhouse_sql(exception_samples_sql(ids, low, high))
            data = self._client.query_range(query_range_request(low, high, "raw", query))
            for result in data.raw_results():
                for number, raw in enumerate(result.rows or []):
                    route = self._client.query_range_path
                    where = f"{self._client.base_url}{route} exception sample {number}"
                    sample = _read_sample(raw.data, where, collector)
                    if sample is not None:
                        samples[sample.group_id] = sample
        return self._with_span_attributes(samples, start_ns, end_ns)

    def _with_span_attributes(
        self, samples: dict[str, ExceptionSample], start_ns: int, end_ns: int
    ) -> dict[str, ExceptionSample]:
        """Each sample with its span's attributes (an error code, an HTTP status), which the error
        index does not keep: the OTLP reader reads them from the span, and so must rounds here."""
        pairs = sorted({(s.trace_id, s.span_id) for s in samples.values() if s.trace_id and s.span_id})
        found: dict[tuple[str, str], SpanAttributes] = {}
        batch = self._batch_size
        for index in range(0, len(pairs), batch):
            query = clickhouse_sql(span_attributes_sql(pairs[index : index + batch], start_ns, end_ns))
            data = self._client.query_range(query_range_request(start_ns, end_ns, "raw", query))
            for result in data.raw_results():
                for raw in result.rows or []:
                    try:
                        span = SpanAttributes.model_validate(raw.data)
                    except ValidationError:
                        continue  # the sample keeps the error index's own fields
                    found[(span.trace_id, span.span_id)] = span
        return {
            group_id: _with_span(sample, found.get((sample.trace_id, sample.span_id)))
            for group_id, sample in samples.items()
        }

    def _one_by_one(
        self,
        new_groups: list[tuple[ErrorGroupRow, GroupSpan]],
        collector: Collector,
        sql: SqlPermission,
    ) -> dict[str, ExceptionSample]:
        cap = self._detail_cap
        if not sql.allowed:
            collector.note(
                REFUSED_SQL_NOTE.format(
                    what="exception samples",
                    consequence=f"one errorFromGroupID request per new group, at most {cap}",
                )
            )
        samples: dict[str, ExceptionSample] = {}
        for row, group in new_groups[:cap]:
            detail = self._client.error_from_group_id(group.group_id, group.first_seen_ns)
            if detail is None:
                continue
            samples[group.group_id] = ExceptionSample(
                group_id=detail.groupID,
                error_id=detail.errorId,
                timestamp_ns=group.first_seen_ns,
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


def _with_span(sample: ExceptionSample, span: SpanAttributes | None) -> ExceptionSample:
    """The sample with what its span adds: attributes, parent span and kind (as the OTLP reader has them)."""
    if span is None:
        return sample.model_copy(update={"span_attributes": {}})
    attributes = attributes_of(
        span.resources_string, span.attributes_string, span.attributes_number, span.attributes_bool
    )
    return sample.model_copy(
        update={
            "span_attributes": attributes,
            "parent_span_id": span.parent_span_id,
            "kind_string": span.kind_string,
        }
    )


def _read_sample(data: dict[str, object], where: str, collector: Collector) -> ExceptionSample | None:
    try:
        sample = ExceptionSample.model_validate(data)
        # traceID is a FixedString(32): a span without a valid trace id comes back as 32 NUL bytes
        sample = sample.model_copy(
            update={"trace_id": sample.trace_id.strip("\x00"), "span_id": sample.span_id.strip("\x00")}
        )
        check_unix_ns(sample.timestamp_ns, "timestamp_ns")
    except ValueError as error:  # a ValidationError among them
        collector.skip_invalid(where, "exception sample", error)
        return None
    return sample
