"""A case's telemetry as the round hands it to a diagnoser: redacted at the boundary, grouped by the engine
(its title and normalised message), with the same occurrence statistics and sample events."""

from __future__ import annotations

from pathlib import Path

from rounds_bot.diagnosis.model import DiagnosisRequest, OccurrenceStats
from rounds_bot.eval.cases import Case
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.redact.event import Redactor


def case_request(case: Case, checkout: Path) -> DiagnosisRequest:
    """The request the round would build for the case's signature, against `checkout`."""
    redactor = Redactor()
    events = [redactor.event(event) for event in case.telemetry]
    assignment = GroupingEngine().assign(events[0])
    representative = events[0]
    times = sorted(event.timestamp for event in events)
    return DiagnosisRequest(
        signature_id=case.id,
        title=assignment.title,
        service=representative.service,
        error_type=representative.error_type,
        error_code=representative.error_code,
        normalized_message=assignment.normalized_message,
        stacktrace=representative.stacktrace,
        sample_events=events,
        stats=OccurrenceStats(
            total=sum(event.count for event in events),
            in_window=sum(event.count for event in events),
            first_seen=times[0],
            last_seen=times[-1],
            services=sorted({event.service for event in events}),
            service_versions=sorted({e.service_version for e in events if e.service_version}),
            environments=sorted({e.environment for e in events if e.environment}),
        ),
        related_logs=list(case.related_logs),
        checkout=checkout,
        code_revision=case.repository.revision or "unknown",
    )
