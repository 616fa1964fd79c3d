"""The incident look-ups answered from what rounds already holds: the samples and related logs.

Used for file sources, and wherever no query back-end is configured. The scope file carries the
incident's sample events and related logs; a trace is the samples that share its id, the logs
around an occurrence are the related logs and log samples in the range, and the counts are the
samples' counts per bucket.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from rounds_bot.diagnosis.lookups.scope import CountPoint, LogRow, SpanRecord
from rounds_bot.diagnosis.model import LogLine
from rounds_bot.models import ErrorEvent


class RecordedLookups:
    """Answers from the telemetry rounds already holds for the incident: its sample events and
    related logs. Used for file sources, and wherever no query back-end is configured."""

    def __init__(self, events: list[ErrorEvent], logs: list[LogLine]) -> None:
        self._events = sorted(events, key=lambda e: (e.timestamp, e.event_id))
        self._logs = logs

    def trace(self, trace_id: str, limit: int) -> list[SpanRecord]:
        return [
            SpanRecord(
                trace_id=trace_id,
                span_id=event.span_id,
                name=event.error_type or event.kind,
                service=event.service,
                start=event.timestamp,
                status="ERROR",
                attributes={
                    "exception.message": event.message,
                    **{key: str(value) for key, value in event.attributes.items()},
                },
            )
            for event in self._events
            if event.trace_id == trace_id
        ][:limit]

    def logs(self, service: str, start: datetime, end: datetime, limit: int) -> list[LogRow]:
        records = [
            LogRow(
                timestamp=log.timestamp,
                service=log.service,
                severity=log.severity,
                body=log.body,
                trace_id=log.trace_id,
            )
            for log in self._logs
            if log.timestamp is not None and start <= log.timestamp <= end and log.service in (None, service)
        ]
        records += [
            LogRow(
                timestamp=event.timestamp,
                service=event.service,
                severity=event.severity or "ERROR",
                body=event.message,
                trace_id=event.trace_id,
            )
            for event in self._events
            if event.kind == "log" and event.service == service and start <= event.timestamp <= end
        ]
        return sorted(records, key=lambda r: (r.timestamp or start, r.body))[:limit]

    def error_counts(
        self, service: str, error_type: str | None, start: datetime, end: datetime, step: timedelta
    ) -> list[CountPoint]:
        buckets: Counter[datetime] = Counter()
        for event in self._events:
            if event.service == service and start <= event.timestamp < end:
                index = (event.timestamp - start) // step
                buckets[start + index * step] += event.count
        return [CountPoint(start=when, count=count) for when, count in sorted(buckets.items())]
