"""Build what the model is shown about one signature: deterministic and bounded in tokens.

Sections, in the order they are kept when the budget runs short: the signature and its
occurrence statistics (always), the representative stack trace, source snippets read from the
checkout at the trace's frames, a few varied sample events, related error logs, and similar or
previously diagnosed signatures. Every piece of telemetry was redacted once, when the round read it
(`redact.boundary.redact_poll`); here it is only bounded. The same request always gives the same context.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TypeVar

from pydantic import Field

from rounds_bot.diagnosis.model import DiagnosisRequest, OccurrenceStats, RelatedSignature
from rounds_bot.diagnosis.snippets import SourceSnippet, source_snippets
from rounds_bot.models import ErrorEvent, Frozen

_T = TypeVar("_T")

#: characters per token assumed by `estimate_tokens`: code and logs run denser than prose
CHARS_PER_TOKEN = 3.5
DEFAULT_BUDGET_TOKENS = 12_000

MAX_MESSAGE_CHARS = 2_000
MAX_TRACE_LINES = 80
MAX_SAMPLES = 5
MAX_SAMPLE_MESSAGE_CHARS = 600
MAX_ATTRIBUTES = 15
MAX_ATTRIBUTE_CHARS = 200
MAX_LOG_LINES = 40
MAX_LOG_CHARS = 300
MAX_RELATED = 5


def estimate_tokens(text: str) -> int:
    """A deterministic, tokenizer-free estimate: good enough for budgets, not for billing."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class SampleView(Frozen):
    event_id: str
    timestamp: datetime
    service: str
    kind: str
    service_version: str | None = None
    environment: str | None = None
    severity: str | None = None
    error_code: str | None = None
    trace_id: str | None = None
    count: int = 1
    message: str
    attributes: dict[str, str] = Field(default_factory=dict)

    def origin(self) -> str:
        """Where the event came from, one `name: value` line each for those recorded: all of it telemetry,
        for a prompt to fence (`data`) as it fences the message."""
        recorded = {
            "event id": self.event_id,
            "service": self.service,
            "version": self.service_version,
            "environment": self.environment,
            "severity": self.severity,
            "trace id": self.trace_id,
            "error code": self.error_code,
        }
        return "\n".join(f"{name}: {value}" for name, value in recorded.items() if value)


class DiagnosisContext(Frozen):
    """The redacted, bounded material a prompt template renders."""

    signature_id: str
    title: str
    service: str
    error_type: str | None
    error_code: str | None
    message: str
    stats: OccurrenceStats
    code_revision: str
    rediagnose_hint: str | None = None
    stacktrace: str | None = None
    snippets: list[SourceSnippet] = Field(default_factory=list)
    samples: list[SampleView] = Field(default_factory=list)
    related_logs: list[str] = Field(default_factory=list)
    related: list[RelatedSignature] = Field(default_factory=list)
    budget_tokens: int
    tokens: int = Field(description="estimated tokens of everything above")
    omitted: list[str] = Field(default_factory=list, description="what the budget left out")


# --------------------------------------------------------------------------- building


class _Budget:
    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self.omitted: list[str] = []

    def take(self, text: str) -> bool:
        cost = estimate_tokens(text)
        if self.used + cost > self.total:
            return False
        self.used += cost
        return True

    def force(self, text: str) -> None:
        self.used += estimate_tokens(text)


def build_context(
    request: DiagnosisRequest, *, budget_tokens: int = DEFAULT_BUDGET_TOKENS
) -> DiagnosisContext:
    """The context for `request`, at most about `budget_tokens` tokens (the header always fits)."""
    budget = _Budget(budget_tokens)
    message = _truncate(request.normalized_message, MAX_MESSAGE_CHARS)
    title = _truncate(request.title, 300)
    budget.force(" ".join([title, message, request.signature_id, request.service]))
    budget.force(request.stats.model_dump_json())

    stacktrace = _bounded_stacktrace(request.stacktrace, budget)
    snippets = _fit_each(
        source_snippets(request.stacktrace, request.checkout), budget, "source snippet", _snippet_text
    )
    samples = _fit_each(_varied_samples(request.sample_events), budget, "sample event", _view_text)
    logs = _fit_each(_log_lines(request), budget, "related log line", str)
    related = _fit_each(request.related[:MAX_RELATED], budget, "related signature", _related_text)
    if len(request.related) > MAX_RELATED:
        budget.omitted.append(f"{len(request.related) - MAX_RELATED} related signatures (limit)")

    return DiagnosisContext(
        signature_id=request.signature_id,
        title=title,
        service=request.service,
        error_type=request.error_type or None,
        error_code=request.error_code or None,
        message=message,
        stats=request.stats,
        code_revision=request.code_revision,
        rediagnose_hint=request.rediagnose_hint or None,
        stacktrace=stacktrace,
        snippets=snippets,
        samples=samples,
        related_logs=logs,
        related=list(related),
        budget_tokens=budget_tokens,
        tokens=budget.used,
        omitted=budget.omitted,
    )


def _fit_each(items: Iterable[_T], budget: _Budget, label: str, as_text: Callable[[_T], str]) -> list[_T]:
    kept: list[_T] = []
    dropped = 0
    for item in items:
        if budget.take(as_text(item)):
            kept.append(item)
        else:
            dropped += 1
    if dropped:
        budget.omitted.append(f"{dropped} {label}(s) (token budget)")
    return kept


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded_stacktrace(stacktrace: str | None, budget: _Budget) -> str | None:
    if not stacktrace or not stacktrace.strip():
        return None
    lines = stacktrace.splitlines()
    if len(lines) > MAX_TRACE_LINES:
        budget.omitted.append(f"{len(lines) - MAX_TRACE_LINES} stack trace lines (line limit)")
        lines = lines[:MAX_TRACE_LINES]
    # A trace that does not fit whole is cut from the bottom: the crash site is at the top.
    while lines and not budget.take("\n".join(lines)):
        cut = max(1, len(lines) // 4)
        budget.omitted.append(f"{cut} stack trace lines (token budget)")
        lines = lines[:-cut]
    return "\n".join(lines) if lines else None


def _snippet_text(snippet: SourceSnippet) -> str:
    return f"{snippet.path}:{snippet.line}\n{snippet.text}"


# --------------------------------------------------------------------------- samples and logs


def _variety_key(event: ErrorEvent) -> tuple[str, ...]:
    return (
        event.service,
        event.service_version or "",
        event.environment or "",
        event.message,
        event.error_code or "",
        event.kind,
    )


def _varied_samples(events: Sequence[ErrorEvent]) -> list[SampleView]:
    """Up to MAX_SAMPLES events, the latest first, then each the most unlike those chosen."""
    remaining = sorted(events, key=lambda e: (e.timestamp, e.event_id), reverse=True)
    chosen: list[ErrorEvent] = []
    while remaining and len(chosen) < MAX_SAMPLES:
        if not chosen:
            pick = remaining[0]
        else:
            chosen_keys = [_variety_key(event) for event in chosen]
            pick = max(
                remaining,
                key=lambda event: min(
                    sum(a != b for a, b in zip(_variety_key(event), key, strict=True)) for key in chosen_keys
                ),
            )
        chosen.append(pick)
        remaining.remove(pick)
    return [_sample_view(event) for event in chosen]


def _sample_view(event: ErrorEvent) -> SampleView:
    attributes = {
        str(key): _truncate(str(value), MAX_ATTRIBUTE_CHARS)
        for key, value in sorted(event.attributes.items())[:MAX_ATTRIBUTES]
    }
    return SampleView(
        event_id=event.event_id,
        timestamp=event.timestamp,
        service=event.service,
        kind=event.kind,
        service_version=event.service_version,
        environment=event.environment,
        severity=event.severity,
        error_code=event.error_code,
        trace_id=event.trace_id,
        count=event.count,
        message=_truncate(event.message, MAX_SAMPLE_MESSAGE_CHARS),
        attributes=attributes,
    )


def _view_text(view: SampleView) -> str:
    return view.model_dump_json()


def _log_lines(request: DiagnosisRequest) -> list[str]:
    ordered = sorted(
        request.related_logs,
        key=lambda log: (log.timestamp.isoformat() if log.timestamp else "", log.body),
    )
    lines = []
    for log in ordered[:MAX_LOG_LINES]:
        parts = [
            log.timestamp.isoformat() if log.timestamp else "",
            log.service or "",
            log.severity or "",
            _truncate(log.body.replace("\n", " "), MAX_LOG_CHARS),
        ]
        lines.append(" ".join(part for part in parts if part))
    return lines


def _related_text(item: RelatedSignature) -> str:
    return item.model_dump_json()
