"""Which SigNoz rows are occurrences of the incident, as ClickHouse SQL that counts them per bucket.

An occurrence of "this error" is what rounds grouped, and SigNoz's query builder cannot say that:
an exception's type lives in span events, which builder filters cannot reach, and log and span
groups are keyed on rounds' normalised message (`queries.normalised`). SQL over the error index,
the spans and the logs selects exactly what the SigNoz source counted: one condition per kind of
the incident's samples (exception groups, error spans, error logs), keyed as the source grouped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from rounds_bot.diagnosis.lookups.scope import MAX_COUNT_POINTS, IncidentScope
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.signoz.collector import normalise_message
from rounds_bot.sources.signoz.queries import INDEXED_EVENT, error_severity_sql, normalised, sql_string
from rounds_bot.sources.signoz.times import NS_PER_S

#: SigNoz's exception group ids are md5 hex digests of service, type and message
_SIGNOZ_GROUP_ID = re.compile(r"^[0-9a-f]{32}$")
#: ClickHouse keeps spans and logs in 30-minute buckets; a row's bucket may start before it
_BUCKET_SLACK_SECONDS = 1800

KeyT = TypeVar("KeyT")


@dataclass(frozen=True)
class OccurrenceCondition:
    """One kind of SigNoz row that is an occurrence of the incident, as SQL that counts them."""

    table: str
    time_ns: str  # the row's time as Unix nanoseconds, in SQL
    window: Callable[[int, int], str]  # (start_ns, end_ns) -> the SQL that keeps rows within
    condition: str

    def counts_sql(self, start_ns: int, end_ns: int, step_ns: int) -> str:
        # toInt64 of a non-negative quotient is its floor: the bucket's index from `start`
        return f"""SELECT toInt64((({self.time_ns}) - {start_ns}) / {step_ns}) AS bucket,
  count() AS occurrences
FROM {self.table}
WHERE {self.window(start_ns, end_ns)}
  AND {self.condition}
GROUP BY bucket
ORDER BY bucket ASC
LIMIT {MAX_COUNT_POINTS}"""


def occurrence_conditions(
    scope: IncidentScope, service: str, error_type: str | None
) -> list[OccurrenceCondition]:
    """The rows of SigNoz that are this incident, per kind of its samples: the exception groups
    they came from, their error spans (name and normalised status message), their error logs
    (exception type and normalised body). The same keys the SigNoz source grouped by."""
    events = [event for event in scope.recorded_events if event.service == service]
    conditions: list[OccurrenceCondition] = []
    exceptions = [event for event in events if event.kind == "exception"]
    if exceptions or not events:
        conditions.append(_exceptions(service, error_type, exceptions))
    spans = _distinct(_span_key(event) for event in events if event.kind == "span_error")
    if spans:
        conditions.append(_error_spans(service, spans))
    logs = _distinct(_log_key(event) for event in events if event.kind == "log")
    if logs:
        conditions.append(_error_logs(service, logs))
    return conditions


def _exceptions(service: str, error_type: str | None, events: list[ErrorEvent]) -> OccurrenceCondition:
    group_ids = sorted(
        {e.source_group_id for e in events if e.source_group_id and _SIGNOZ_GROUP_ID.match(e.source_group_id)}
    )
    if group_ids:
        condition = f"groupID IN ({', '.join(sql_string(group_id) for group_id in group_ids)})"
    else:
        condition = f"serviceName = {sql_string(service)}"
        if error_type:
            condition += f" AND exceptionType = {sql_string(error_type)}"
    return OccurrenceCondition(
        "signoz_traces.distributed_signoz_error_index_v2",
        "toUnixTimestamp64Nano(timestamp)",
        lambda start, end: (
            f"timestamp >= fromUnixTimestamp64Nano(toInt64({start})) "
            f"AND timestamp < fromUnixTimestamp64Nano(toInt64({end}))"
        ),
        condition,
    )


def _span_key(event: ErrorEvent) -> tuple[str, str | None]:
    name = str(event.attributes.get("span.name", ""))
    # The source writes this sentence when the span had no status message: no pattern to match.
    unnamed = event.message == f"span {name} ended with an error"
    return name, None if unnamed else normalise_message(event.message)


def _error_spans(service: str, keys: list[tuple[str, str | None]]) -> OccurrenceCondition:
    alternatives = []
    for name, pattern in keys:
        parts = [f"name = {sql_string(name)}"] if name else []
        if pattern is not None:
            parts.append(f"{normalised('status_message')} = {sql_string(pattern)}")
        alternatives.append("(" + " AND ".join(parts or ["1 = 1"]) + ")")
    condition = (
        f"serviceName = {sql_string(service)} AND has_error = true"
        # a span with an event the collector indexed is the error index's: counted there, not twice. Which
        # events it indexes depends on its version (`*.exception` only from v0.144.3), so the source's rule
        # asks the collector's own mark, not the event's name; the same rule here counts the same spans.
        f" AND NOT arrayExists(event -> position(event, {sql_string(INDEXED_EVENT)}) > 0, events)"
        f" AND ({' OR '.join(alternatives)})"
    )
    return OccurrenceCondition(
        "signoz_traces.distributed_signoz_index_v3",
        "toUnixTimestamp64Nano(timestamp)",
        lambda start, end: (
            f"timestamp >= fromUnixTimestamp64Nano(toInt64({start})) "
            f"AND timestamp < fromUnixTimestamp64Nano(toInt64({end})) "
            f"AND ts_bucket_start >= {start // NS_PER_S - _BUCKET_SLACK_SECONDS} "
            f"AND ts_bucket_start <= {end // NS_PER_S}"
        ),
        condition,
    )


def _log_key(event: ErrorEvent) -> tuple[str, str]:
    body = str(event.attributes.get("log.body", event.message))
    return event.error_type or "", normalise_message(body)


def _error_logs(service: str, keys: list[tuple[str, str]]) -> OccurrenceCondition:
    alternatives = [
        f"(attributes_string['exception.type'] = {sql_string(error_type)} "
        f"AND {normalised('body')} = {sql_string(pattern)})"
        for error_type, pattern in keys
    ]
    condition = (
        f"resources_string['service.name'] = {sql_string(service)}"
        f" AND {error_severity_sql()}"
        f" AND ({' OR '.join(alternatives)})"
    )
    return OccurrenceCondition(
        "signoz_logs.distributed_logs_v2",
        "toInt64(timestamp)",
        lambda start, end: (
            f"timestamp >= {start} AND timestamp < {end} "
            f"AND ts_bucket_start >= {start // NS_PER_S - _BUCKET_SLACK_SECONDS} "
            f"AND ts_bucket_start <= {end // NS_PER_S}"
        ),
        condition,
    )


def _distinct(items: Iterable[KeyT]) -> list[KeyT]:
    return list(dict.fromkeys(items))
