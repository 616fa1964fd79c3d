"""The three incident look-ups as the model calls them: scoped, bounded, redacted, answered as text.

    get_trace(trace_id)                 the spans of one of the incident's traces
    get_logs_around(event_id, ...)      logs of the service around one sample event
    get_error_counts(bucket_minutes)    the error's occurrence counts over the incident's window

A call outside the scope raises `ScopeViolation` before the back-end is asked. Every answer is cut
to the limits of `scope.py`, and every text is redacted here, once, whichever back-end answered (this is
where a look-up's answer enters rounds: `redact.clean`), and kept to one line of at most MAX_TEXT_CHARS
characters. Independent of MCP, so it is tested with a fake back-end.
"""

from __future__ import annotations

from datetime import timedelta

from rounds_bot.diagnosis.lookups.scope import (
    MAX_COUNT_POINTS,
    MAX_LOGS,
    MAX_MINUTES_AROUND,
    MAX_SPANS,
    IncidentLookups,
    IncidentScope,
    LogRow,
    ScopeViolation,
    SpanRecord,
)
from rounds_bot.redact import clean

MAX_TEXT_CHARS = 500


class IncidentTools:
    """The three look-ups, bounded, scoped and redacted; independent of MCP for testing."""

    def __init__(self, lookups: IncidentLookups, scope: IncidentScope) -> None:
        self._lookups = lookups
        self._scope = scope

    def get_trace(self, trace_id: str) -> str:
        if trace_id not in self._scope.trace_ids:
            known = ", ".join(sorted(self._scope.trace_ids)) or "none"
            raise ScopeViolation(f"trace {trace_id!r} is not one of this incident's traces ({known})")
        spans = self._lookups.trace(trace_id, MAX_SPANS)[:MAX_SPANS]
        if not spans:
            return f"no spans found for trace {trace_id}"
        return "\n".join(_span_line(span) for span in spans)

    def get_logs_around(self, event_id: str, minutes_before: int = 5, minutes_after: int = 1) -> str:
        event = next((e for e in self._scope.events if e.event_id == event_id), None)
        if event is None:
            known = ", ".join(e.event_id for e in self._scope.events) or "none"
            raise ScopeViolation(f"event {event_id!r} is not one of this incident's samples ({known})")
        before = timedelta(minutes=_clamp(minutes_before, 0, MAX_MINUTES_AROUND))
        after = timedelta(minutes=_clamp(minutes_after, 0, MAX_MINUTES_AROUND))
        records = self._lookups.logs(
            event.service, event.timestamp - before, event.timestamp + after, MAX_LOGS
        )[:MAX_LOGS]
        if not records:
            return f"no logs of {event.service} around {event.timestamp.isoformat()}"
        return "\n".join(_log_line(record) for record in records)

    def get_error_counts(self, bucket_minutes: int = 60) -> str:
        step = timedelta(minutes=max(1, bucket_minutes))
        span = self._scope.window_end - self._scope.window_start
        if span / step > MAX_COUNT_POINTS:
            step = span / MAX_COUNT_POINTS
        points = self._lookups.error_counts(
            self._scope.service,
            self._scope.error_type,
            self._scope.window_start,
            self._scope.window_end,
            step,
        )[:MAX_COUNT_POINTS]
        if not points:
            return "no occurrences counted in the incident's window"
        return "\n".join(f"{point.start.isoformat()} {point.count}" for point in points)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, int(value)))


def one_line(value: object) -> str:
    """`value` as redacted text on one line, cut to MAX_TEXT_CHARS."""
    text = clean(str(value)).replace("\n", " ")
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"


def _span_line(span: SpanRecord) -> str:
    fields = {
        "span_id": span.span_id,
        "parent": span.parent_span_id,
        "service": span.service,
        "name": span.name,
        "start": span.start.isoformat() if span.start else None,
        "duration_ms": span.duration_ms,
        "status": span.status,
        **{f"attr.{key}": value for key, value in sorted(span.attributes.items())},
    }
    return " ".join(f"{key}={one_line(value)}" for key, value in fields.items() if value is not None)


def _log_line(record: LogRow) -> str:
    parts = [
        record.timestamp.isoformat() if record.timestamp else "",
        record.service or "",
        record.severity or "",
        f"trace={record.trace_id}" if record.trace_id else "",
        one_line(record.body),
    ]
    return " ".join(part for part in parts if part)
