"""The round report's content, from what the round did."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from rounds_bot.clock import iso, parse_iso
from rounds_bot.controls import Controls
from rounds_bot.render.chart import MAX_BARS, rounds_chart
from rounds_bot.round.diagnosis_step import DiagnosisStep
from rounds_bot.round.occurrences import Grouped
from rounds_bot.round.planning import IssuePlan
from rounds_bot.round.report import RoundReport, SignatureLine
from rounds_bot.round.window import BEGINNING
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.store import RunRecord


@dataclass(frozen=True)
class RoundOutcome:
    """Everything a round did, as the report needs it."""

    run_id: str
    source: str
    tracker: str
    window: Window
    polled: PollResult
    grouped: Grouped
    plans: list[IssuePlan]  # as they ended
    notes: list[str]
    diagnosis: DiagnosisStep
    diagnosis_mode: str
    controls: Controls
    started: datetime
    history: list[RunRecord] = field(default_factory=list)  # the rounds before this one, oldest first
    charts: bool = True


def build_report(outcome: RoundOutcome) -> RoundReport:
    step, polled, grouped = outcome.diagnosis, outcome.polled, outcome.grouped
    by_kind: dict[str, list[SignatureLine]] = {"new": [], "updated": [], "regressed": [], "deferred": []}
    for plan in outcome.plans:
        if plan.kind in ("new", "filed-late"):
            by_kind["new"].append(_line(plan, "filed late" if plan.kind == "filed-late" else ""))
        elif plan.kind == "muted":
            mute = outcome.controls.mutes.get(plan.signature_id)
            by_kind["updated"].append(
                _line(plan, mute.describe() if mute else "closed as not planned: muted")
            )
        elif plan.kind == "held":
            continue  # counted in one line of the notes (`planning.held_note`), not listed
        elif plan.kind == "deferred":
            by_kind["deferred"].append(
                _line(plan, "paused" if outcome.controls.pause else "over the new-issue cap")
            )
        else:
            by_kind[plan.kind].append(_line(plan))
    window = outcome.window
    return RoundReport(
        run_id=outcome.run_id,
        source=outcome.source,
        tracker=outcome.tracker,
        window_start="the beginning" if window.start == BEGINNING else iso(window.start),
        window_end=iso(window.end),
        events_read=len(polled.events) + polled.already_counted,
        occurrences_counted=sum(t.count for t in grouped.tallies.values()),
        already_counted=grouped.already_counted,
        new=by_kind["new"],
        updated=by_kind["updated"],
        regressed=by_kind["regressed"],
        deferred=by_kind["deferred"],
        skipped=polled.skipped,
        notes=[*polled.notes, *grouped.notes, *outcome.notes, *step.notes],
        tier_counts=grouped.tier_counts,
        requests=polled.requests,
        diagnosed=[
            _diagnosed_line(step, plan) for plan in outcome.plans if plan.signature_id in step.attempted
        ],
        waiting=[
            _line(plan, step.waiting[plan.signature_id])
            for plan in outcome.plans
            if plan.signature_id in step.waiting
        ],
        spent_usd=step.spent_usd,
        model_calls=step.calls,
        diagnosis_mode=outcome.diagnosis_mode,
        budget_remaining_usd=step.month_remaining_usd,
        trend=_trend(outcome),
    )


def _line(plan: IssuePlan, note: str = "") -> SignatureLine:
    """A signature's line; the report keeps one or two per signature the round acted on."""
    signature, tally = plan.signature, plan.tally
    return SignatureLine(
        signature_id=plan.signature_id,
        title=signature.title or (tally.assignment.title if tally else ""),
        service=signature.service,
        tier=tally.assignment.tier if tally else signature.first_tier,
        round_count=tally.count if tally else 0,
        total_count=signature.total_count,
        issue=plan.issue.ref if plan.issue else None,
        note=note,
    )


def _diagnosed_line(step: DiagnosisStep, plan: IssuePlan) -> SignatureLine:
    outcome = step.attempted[plan.signature_id]
    if outcome.status == "ok" and outcome.diagnosis is not None:
        d = outcome.diagnosis
        note = f"{d.classification} ({d.confidence}), ${outcome.cost_usd:.4f}, {outcome.turns} turns"
    else:
        note = f"{outcome.status}: {outcome.detail[:120]}"
    return _line(plan, note)


NEW_KINDS = ("new", "filed-late")
ONGOING_KINDS = ("updated", "regressed", "muted")
HISTORY_ROUNDS = MAX_BARS - 1


def _trend(outcome: RoundOutcome) -> str:
    """New and ongoing signatures per round, this one last; nothing until there are two rounds to compare."""
    kinds = [(parse_iso(run.started_at), list(run.plans.values())) for run in outcome.history]
    kinds.append((outcome.started, [plan.kind for plan in outcome.plans]))
    if len(kinds) < 2:
        return ""
    rounds = [(at, _count(k, NEW_KINDS), _count(k, ONGOING_KINDS)) for at, k in kinds]
    return rounds_chart(rounds, mermaid=outcome.charts)


def _count(kinds: list[str], wanted: tuple[str, ...]) -> int:
    return sum(1 for kind in kinds if kind in wanted)
