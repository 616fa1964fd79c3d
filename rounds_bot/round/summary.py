"""The round report's content, from what the round did."""

from __future__ import annotations

from rounds_bot.round.report import RoundReport, SignatureLine
from rounds_bot.round.tally import BEGINNING, IssuePlan, RoundContext, Tally
from rounds_bot.sources.base import PollResult
from rounds_bot.store import iso


def build_report(
    ctx: RoundContext,
    polled: PollResult,
    tallies: dict[str, Tally],
    plans: list[IssuePlan],
    already_counted: int,
) -> RoundReport:
    def line(plan: IssuePlan, note: str = "") -> SignatureLine:
        row = ctx.store.signature(plan.signature_id) or {}
        tally = plan.tally
        return SignatureLine(
            signature_id=plan.signature_id,
            title=row.get("title") or (tally.assignment.title if tally else ""),
            service=row.get("service") or "",
            tier=tally.assignment.tier if tally else row.get("first_tier", ""),
            round_count=tally.count if tally else 0,
            total_count=row.get("total_count") or 0,
            issue=plan.issue.ref if plan.issue else None,
            note=note,
        )

    step = ctx.diagnosis
    by_kind: dict[str, list[SignatureLine]] = {"new": [], "updated": [], "regressed": [], "deferred": []}
    for plan in plans:
        if plan.kind in ("new", "filed-late"):
            by_kind["new"].append(line(plan, "filed late" if plan.kind == "filed-late" else ""))
        elif plan.kind == "muted":
            mute = ctx.controls.mutes.get(plan.signature_id)
            by_kind["updated"].append(line(plan, mute.describe() if mute else "closed as not planned: muted"))
        elif plan.kind == "deferred":
            by_kind["deferred"].append(
                line(plan, "paused" if ctx.controls.pause else "over the new-issue cap")
            )
        else:
            by_kind[plan.kind].append(line(plan))
    return RoundReport(
        run_id=ctx.run_id,
        source=ctx.source.name,
        tracker=ctx.tracker.name,
        window_start="the beginning" if ctx.window.start == BEGINNING else iso(ctx.window.start),
        window_end=iso(ctx.window.end),
        events_read=len(polled.events),
        occurrences_counted=sum(t.count for t in tallies.values()),
        already_counted=already_counted,
        new=by_kind["new"],
        updated=by_kind["updated"],
        regressed=by_kind["regressed"],
        deferred=by_kind["deferred"],
        skipped=polled.skipped,
        notes=[*polled.notes, *ctx.report_notes, *step.notes],
        tier_counts=ctx.tier_counts,
        requests=polled.requests,
        diagnosed=[
            _diagnosed_line(ctx, plan, line(plan)) for plan in plans if plan.signature_id in step.attempted
        ],
        waiting=[
            line(plan, step.waiting[plan.signature_id]) for plan in plans if plan.signature_id in step.waiting
        ],
        spent_usd=step.spent_usd,
        model_calls=step.calls,
        diagnosis_mode=ctx.diagnosis_mode,
        budget_remaining_usd=step.month_remaining_usd,
    )


def _diagnosed_line(ctx: RoundContext, plan: IssuePlan, base: SignatureLine) -> SignatureLine:
    outcome = ctx.diagnosis.attempted[plan.signature_id]
    if outcome.status == "ok" and outcome.diagnosis is not None:
        d = outcome.diagnosis
        note = f"{d.classification} ({d.confidence}), ${outcome.cost_usd:.4f}, {outcome.turns} turns"
    else:
        note = f"{outcome.status}: {outcome.detail[:120]}"
    return base.model_copy(update={"note": note})
