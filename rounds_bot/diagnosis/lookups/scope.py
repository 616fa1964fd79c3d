"""What the incident look-ups may touch, and what they answer.

The scope is written by the diagnoser for one diagnosis: the incident's samples (their event ids
and trace ids), its service, error type and a window around it, and the back-end to ask. Only
trace ids and event ids of the samples are accepted, only the incident's service is searched, and
every answer is bounded by the limits here. The records are what a back-end (`IncidentLookups`)
returns; it need not bound or redact them, the tools do.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal, Protocol

from pydantic import Field

from rounds_bot.diagnosis.model import DiagnosisRequest, LogLine
from rounds_bot.models import ErrorEvent, Frozen

MAX_SPANS = 200
MAX_LOGS = 100
MAX_MINUTES_AROUND = 30
MAX_COUNT_POINTS = 500


class ScopeViolation(ValueError):
    """The model asked for something outside the incident."""


class SpanRecord(Frozen):
    trace_id: str
    span_id: str | None = None
    parent_span_id: str | None = None
    name: str
    service: str
    start: datetime | None = None
    duration_ms: float | None = None
    status: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)


class LogRow(Frozen):
    timestamp: datetime | None = None
    service: str | None = None
    severity: str | None = None
    body: str
    trace_id: str | None = None


class CountPoint(Frozen):
    start: datetime
    count: int


class IncidentLookups(Protocol):
    """What the server asks a telemetry back-end. Implementations need not bound or redact."""

    def trace(self, trace_id: str, limit: int) -> list[SpanRecord]: ...

    def logs(self, service: str, start: datetime, end: datetime, limit: int) -> list[LogRow]: ...

    def error_counts(
        self, service: str, error_type: str | None, start: datetime, end: datetime, step: timedelta
    ) -> list[CountPoint]: ...


class RecordedBackend(Frozen):
    """Answer from the incident's own samples and related logs, written into the scope file."""

    backend: Literal["recorded"] = "recorded"


class SignozBackend(Frozen):
    """Answer from SigNoz. Only where it is: the API key is never part of the scope file."""

    backend: Literal["signoz"] = "signoz"
    url: str = Field(min_length=1, description="SigNoz's base URL, as SIGNOZ_API_URL")
    timeout_seconds: float = Field(default=15.0, gt=0, le=120, description="per HTTP request")
    deadline_seconds: float = Field(default=30.0, gt=0, le=300, description="per look-up, retries included")


Backend = Annotated[RecordedBackend | SignozBackend, Field(discriminator="backend")]


class ScopedEvent(Frozen):
    event_id: str
    timestamp: datetime
    service: str
    trace_id: str | None = None


class IncidentScope(Frozen):
    """What the look-ups may touch, written by the diagnoser for one diagnosis."""

    signature_id: str
    service: str
    error_type: str | None = None
    window_start: datetime
    window_end: datetime
    events: list[ScopedEvent]
    backend: Backend = Field(default_factory=RecordedBackend)
    recorded_events: list[ErrorEvent] = Field(default_factory=list)
    recorded_logs: list[LogLine] = Field(default_factory=list)
    journal: str | None = Field(
        default=None, description="file the server appends its answers to (lookups/journal.py), if any"
    )

    @property
    def trace_ids(self) -> set[str]:
        return {event.trace_id for event in self.events if event.trace_id}

    @property
    def services(self) -> set[str]:
        return {self.service} | {event.service for event in self.events}


def scope_for_request(
    request: DiagnosisRequest,
    *,
    margin: timedelta = timedelta(hours=1),
    backend: RecordedBackend | SignozBackend | None = None,
) -> IncidentScope:
    """The incident's scope: its samples, and a window around them (or around the statistics)."""
    times = [event.timestamp for event in request.sample_events]
    times += [t for t in (request.stats.first_seen, request.stats.last_seen) if t is not None]
    start = min(times) - margin if times else datetime.min
    end = max(times) + margin if times else datetime.max
    return IncidentScope(
        signature_id=request.signature_id,
        service=request.service,
        error_type=request.error_type,
        window_start=start,
        window_end=end,
        events=[
            ScopedEvent(
                event_id=event.event_id,
                timestamp=event.timestamp,
                service=event.service,
                trace_id=event.trace_id,
            )
            for event in request.sample_events
        ],
        backend=backend or RecordedBackend(),
        recorded_events=list(request.sample_events),
        recorded_logs=list(request.related_logs),
    )
