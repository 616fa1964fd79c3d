"""The round's diagnosis step: triage, cache, budget, one model call per chosen signature.

    decisions = triage(...)                 which signatures deserve a diagnosis now, and why others wait
    for each chosen signature:
        cached?  -> reuse it, no call       (one diagnosis per signature and code revision)
        estimate -> budget.decide(...)      per-diagnosis, per-round and monthly caps
        outcome  = diagnoser.diagnose(...)  a status, never an exception
        record(...)                         ledger, diagnosis row, event log: at once

Money spent is a fact even if the round fails later, so each attempt is written in its own small
transaction as soon as it ends: a retried round reuses the cached answer instead of paying twice. A failed
attempt leaves the signature pending; the next round retries it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from rounds_bot.clock import iso, month_start, parse_iso
from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.diagnosis.budget import BudgetCaps, decide, diagnosis_cache_key
from rounds_bot.diagnosis.configured import code_revision
from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisOutcome,
    DiagnosisRequest,
    LogLine,
    OccurrenceStats,
    RelatedSignature,
)
from rounds_bot.events import Fact
from rounds_bot.models import ErrorEvent
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature
from rounds_bot.store import DiagnosisRecord, Store
from rounds_bot.tally import Timeline
from rounds_bot.telemetry import span
from rounds_bot.triage import (
    ListedFigures,
    Occurrence,
    OccurrenceFigures,
    SignatureActivity,
    TriageDecision,
    TriagePolicy,
    triage,
)

RELATED_LOGS = 5
PREVIOUSLY_DIAGNOSED = 3


@dataclass
class Patient:
    """One signature the round touched, as the diagnosis step sees it."""

    signature: Signature  # as it will be after this round
    samples: Sequence[ErrorEvent]  # a tally's samples, kept packed: read when a request needs them
    timeline: Sequence[Occurrence]  # a tally's compact timeline: read, never copied whole
    regressed: bool = False
    retry: bool = False  # its last diagnosis attempt failed: try again
    related: list[str] = field(default_factory=list)


@dataclass
class DiagnosisStep:
    """What the step did, for the issue bodies and the round report."""

    attempted: dict[str, DiagnosisOutcome] = field(default_factory=dict)
    waiting: dict[str, str] = field(default_factory=dict)
    spent_usd: float = 0.0
    calls: int = 0
    notes: list[str] = field(default_factory=list)
    month_remaining_usd: float | None = None

    def good_diagnoses(self) -> dict[str, Diagnosis]:
        """This round's successful diagnoses, by signature."""
        return {
            sid: outcome.diagnosis
            for sid, outcome in self.attempted.items()
            if outcome.status == "ok" and outcome.diagnosis is not None
        }


def run_diagnosis_step(
    settings: Settings,
    store: Store,
    patients: Sequence[Patient],
    *,
    diagnoser: Diagnoser | None,
    run_id: str,
    now: datetime,
    window_hours: float,
    rediagnose: dict[str, str] | None = None,
) -> DiagnosisStep:
    step = DiagnosisStep()
    caps = BudgetCaps(
        per_diagnosis=settings.claude_max_budget_usd,
        per_round=settings.round_budget_usd,
        monthly=settings.monthly_budget_usd,
    )
    spent_month = store.spent_since(month_start(now))
    step.month_remaining_usd = max(caps.monthly - spent_month, 0.0)
    if not patients:
        return step
    revision = code_revision(settings)
    policy = TriagePolicy(
        new_threshold_count=settings.diagnose_threshold,
        new_threshold_window=timedelta(minutes=settings.diagnose_window_minutes),
    )
    # one signature's activity at a time: each holds its occurrences as objects; a round may count millions
    known = _Known.read(store, [p.signature.id for p in patients], now)
    activities = (_activity(known, p, window_hours, rediagnose or {}) for p in patients)
    decisions = triage(activities, now=now, code_revision=revision, policy=policy)
    by_id = {p.signature.id: p for p in patients}
    # one copy of each reason a signature waits for: thousands of new signatures wait for the same few, and
    # the report keeps them to the round's end
    reasons: dict[str, str] = {}
    for decision in decisions:
        if not decision.diagnose:
            step.waiting[decision.signature_id] = reasons.setdefault(decision.reason, decision.reason)
            continue
        patient = by_id[decision.signature_id]
        key = diagnosis_cache_key(decision.signature_id, revision)
        if decision.trigger not in ("rediagnose", "regression") and store.cached_diagnosis(key):
            step.waiting[decision.signature_id] = f"cached diagnosis for revision {revision[:12]} reused"
            continue
        if diagnoser is None:
            off = f"{decision.reason}; but diagnosis is off"
            step.waiting[decision.signature_id] = reasons.setdefault(off, off)
            continue
        request = _request(store, settings, patient, revision, rediagnose or {}, patients)
        estimate = diagnoser.estimate_cost(request)
        verdict = decide(estimate, spent_this_round=step.spent_usd, spent_this_month=spent_month, caps=caps)
        if not verdict.allow:
            step.waiting[decision.signature_id] = verdict.reason
            continue
        outcome = _call(diagnoser, request, decision)
        step.calls += 1
        step.spent_usd += outcome.cost_usd
        spent_month += outcome.cost_usd
        step.attempted[decision.signature_id] = outcome
        _record(store, decision, outcome, key=key, revision=revision, run_id=run_id, now=now)
        if outcome.status != "ok":
            step.waiting[decision.signature_id] = (
                f"diagnosis {outcome.status}: {outcome.detail or 'no detail'}; retried next round"
            )
    step.month_remaining_usd = max(caps.monthly - spent_month, 0.0)
    return step


def _call(diagnoser: Diagnoser, request: DiagnosisRequest, decision: TriageDecision) -> DiagnosisOutcome:
    with span("rounds.diagnose", signature=request.signature_id, trigger=decision.trigger) as current:
        try:
            outcome = diagnoser.diagnose(request)
        except RecursionError:
            # a diagnoser reads its answer within bounds (`json_answer`); should one still recurse without
            # end on an answer, that one diagnosis fails and the round goes on with every other signature
            outcome = DiagnosisOutcome(
                status="invalid_answer", detail="the answer nests too deep to read", model=None
            )
        current.set(
            **{
                "rounds.status": outcome.status,
                "gen_ai.request.model": outcome.model,
                "rounds.turns": outcome.turns,
                "gen_ai.usage.input_tokens": outcome.tokens.input_tokens,
                "gen_ai.usage.output_tokens": outcome.tokens.output_tokens,
                "rounds.cost_usd": outcome.cost_usd,
            }
        )
    return outcome


def _record(
    store: Store,
    decision: TriageDecision,
    outcome: DiagnosisOutcome,
    *,
    key: str,
    revision: str,
    run_id: str,
    now: datetime,
) -> None:
    sid = decision.signature_id
    with store.transaction():
        store.record_diagnosis(
            DiagnosisRecord(
                cache_key=key,
                signature_id=sid,
                revision=revision,
                at=iso(now),
                status=outcome.status,
                trigger=decision.trigger or "",
                cost_usd=outcome.cost_usd,
                outcome=outcome,
            )
        )
        if outcome.cost_usd:
            store.book_cost(
                run_id=run_id,
                signature_id=sid,
                usd=outcome.cost_usd,
                model=outcome.model or "",
                note=f"{decision.trigger}: {outcome.status}"
                + (" (estimate)" if outcome.cost_is_estimate else ""),
                at=now,
            )
        store.append_event(
            Fact.CONTEXT_BUILT, f"context:{key}:{run_id}", signature_id=sid, run_id=run_id, at=now,
            payload={"trigger": decision.trigger, "reason": decision.reason},
        )  # fmt: skip
        if outcome.status == "ok" and outcome.diagnosis is not None:
            store.append_event(
                Fact.ROOT_CAUSE_PROPOSED, f"rootcause:{key}:{run_id}",
                signature_id=sid, run_id=run_id, at=now,
                payload={
                    "classification": outcome.diagnosis.classification,
                    "confidence": outcome.diagnosis.confidence,
                    "revision": revision,
                },
            )  # fmt: skip


@dataclass(frozen=True)
class _Known:
    """What triage needs of the store for the round's patients, read together: each one's latest diagnosis
    attempt, its latest good one, and its occurrences counted in the day before the round."""

    latest: dict[str, DiagnosisRecord]
    ok: dict[str, DiagnosisRecord]
    day: dict[str, int]

    @classmethod
    def read(cls, store: Store, signature_ids: list[str], now: datetime) -> _Known:
        return cls(
            latest=store.latest_diagnoses(signature_ids),
            ok=store.latest_diagnoses(signature_ids, ok_only=True),
            day=store.counts_since(signature_ids, now - timedelta(days=1)),
        )


def _activity(
    known: _Known, patient: Patient, window_hours: float, rediagnose: dict[str, str]
) -> SignatureActivity:
    sid = patient.signature.id
    latest = known.latest.get(sid)
    ok = known.ok.get(sid)
    pending = patient.retry and latest is not None
    # a round's timeline answers triage's questions from its arrays (`tally.Timeline`): no `Occurrence` is
    # built per occurrence counted; any other sequence is read as a list
    timeline = patient.timeline
    figures: OccurrenceFigures = timeline if isinstance(timeline, Timeline) else ListedFigures(list(timeline))
    day_before = known.day[sid] - figures.total()
    reason = rediagnose.get(sid)
    if pending and reason is None and sid not in rediagnose:
        reason = f"retrying: the last attempt ended with {latest.status}" if latest else None
    return SignatureActivity(
        signature_id=sid,
        figures=figures,
        baseline_per_hour=max(day_before, 0) / 24 if ok else None,
        window_hours=max(window_hours, 1 / 60),
        last_diagnosed_at=parse_iso(ok.at) if ok else None,
        diagnosed_revision=ok.revision if ok else None,
        resolved_at=(timeline[0].timestamp - timedelta(seconds=1))
        if patient.regressed and timeline
        else None,
        rediagnose_requested=sid in rediagnose or pending,
        rediagnose_reason=reason,
    )


def _request(
    store: Store,
    settings: Settings,
    patient: Patient,
    revision: str,
    rediagnose: dict[str, str],
    everyone: Sequence[Patient],
) -> DiagnosisRequest:
    signature = patient.signature
    representative = signature.representative
    return DiagnosisRequest(
        signature_id=signature.id,
        title=signature.title,
        service=signature.service,
        error_type=signature.error_type or None,
        error_code=representative.error_code,
        normalized_message=signature.normalized_message,
        stacktrace=representative.stacktrace,
        sample_events=list(patient.samples) or [representative],
        stats=OccurrenceStats(
            total=signature.total_count,
            in_window=sum(o.count for o in patient.timeline),
            first_seen=signature.first_seen,
            last_seen=signature.last_seen,
            services=sorted(signature.services),
            service_versions=sorted(signature.versions),
            environments=sorted(signature.environments),
        ),
        related_logs=_related_logs(patient, everyone),
        related=_related(store, patient),
        checkout=Path(settings.repo_path).resolve(),
        code_revision=revision,
        rediagnose_hint=rediagnose.get(signature.id) or None,
    )


def _related_logs(patient: Patient, everyone: Sequence[Patient]) -> list[LogLine]:
    """Error logs of the same service from other signatures this round: often the cause's footprints."""
    lines: list[LogLine] = []
    for other in everyone:
        if other is patient:
            continue
        for event in other.samples:
            if event.kind == "log" and event.service == patient.signature.service:
                lines.append(
                    LogLine(
                        timestamp=event.timestamp,
                        service=event.service,
                        severity=event.severity,
                        body=event.message,
                        trace_id=event.trace_id,
                    )
                )
    return lines[:RELATED_LOGS]


def _related(store: Store, patient: Patient) -> list[RelatedSignature]:
    related: list[RelatedSignature] = []
    for sid in patient.related:
        known = store.signature(sid)
        if known is not None:
            related.append(RelatedSignature(signature_id=sid, title=known.title, relation="similar"))
    signature = patient.signature
    for neighbour, outcome in store.diagnosed_neighbours(
        signature.service, signature.id, PREVIOUSLY_DIAGNOSED
    ):
        if outcome.diagnosis is not None:
            related.append(
                RelatedSignature(
                    signature_id=neighbour.id,
                    title=neighbour.title,
                    relation="previously_diagnosed",
                    classification=outcome.diagnosis.classification,
                    root_cause=outcome.diagnosis.root_cause,
                )
            )
    return related
