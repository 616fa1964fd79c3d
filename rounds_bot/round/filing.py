"""Filing: one issue per signature — plan what each signature needs, then create, update or reopen it."""

from __future__ import annotations

import json

from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.diagnosis.render import render_diagnosis
from rounds_bot.github.labels import service_label, severity_label
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import ErrorEvent
from rounds_bot.redact import clean
from rounds_bot.render.issue import IssueView, issue_title, render_body
from rounds_bot.render.marker import MarkerState
from rounds_bot.round.tally import IssuePlan, RoundContext, Tally, signature_row
from rounds_bot.tracker.base import IssueDraft, TrackerStopped

BOT_LABEL = "rounds"


def hold_while_paused(ctx: RoundContext, tallies: dict[str, Tally]) -> list[IssuePlan]:
    """`/rounds pause`: occurrences are counted; nothing reaches the tracker or the model until `resume`.

    Signatures without an issue are deferred, so the first round after `resume` files them.
    """
    pause = ctx.controls.pause
    assert pause is not None
    plans = []
    for signature_id, tally in tallies.items():
        existing = ctx.store.signature(signature_id)
        if existing is None or not existing["issue_ref"]:
            plans.append(IssuePlan(signature_id, "deferred", tally, existing))
    ctx.report_notes.append(
        f"paused by @{pause.by} since {pause.since}: nothing was filed, updated, commented on or diagnosed "
        "(occurrences are still counted); a `resume` command on any issue restarts rounds"
    )
    return plans


def plan_issues(ctx: RoundContext, tallies: dict[str, Tally], wanted: set[str]) -> list[IssuePlan]:
    """Decide, per signature, whether to file, update, reopen, or wait for the next round.

    Besides the signatures seen this round: those an earlier round's cap deferred, and `wanted` ones
    (a diagnosis to retry or asked for) even when they did not occur.
    """
    plans: list[IssuePlan] = []
    filed_new = 0
    candidates: dict[str, Tally | None] = dict(tallies)
    for signature_id in [*ctx.store.unfiled_ids(), *sorted(wanted)]:
        if signature_id not in candidates and ctx.store.signature(signature_id) is not None:
            candidates[signature_id] = None
    for position, (signature_id, tally) in enumerate(candidates.items()):
        existing = ctx.store.signature(signature_id)
        try:
            issue = ctx.tracker.find(signature_id, known_ref=existing["issue_ref"] if existing else None)
        except TrackerStopped as stop:
            # the tracker's request budget is spent: what is left waits for the next round
            waiting = list(candidates.items())[position:]
            plans.extend(IssuePlan(sid, "deferred", t, ctx.store.signature(sid)) for sid, t in waiting)
            ctx.report_notes.append(f"{len(waiting)} signatures wait for the next round: {stop}")
            break
        if issue is None:
            if filed_new >= ctx.settings.new_issue_cap():
                plans.append(IssuePlan(signature_id, "deferred", tally, existing))
                continue
            filed_new += 1
            plans.append(
                IssuePlan(signature_id, "new" if existing is None else "filed-late", tally, existing)
            )
        elif tally is None and (signature_id not in wanted or issue.state == "closed"):
            continue
        elif _muted(ctx, signature_id, tally, existing) or (
            issue.state == "closed" and issue.state_reason == "not_planned"
        ):
            plans.append(IssuePlan(signature_id, "muted", tally, existing, issue))
        elif issue.state == "closed":
            plans.append(IssuePlan(signature_id, "regressed", tally, existing, issue))
        else:
            plans.append(IssuePlan(signature_id, "updated", tally, existing, issue))
    return plans


def _muted(ctx: RoundContext, signature_id: str, tally: Tally | None, existing: dict | None) -> bool:
    """Ignored with `/rounds ignore` and not lapsed: counts update, no comment, no reopening."""
    mute = ctx.controls.mutes.get(signature_id)
    if mute is None:
        return False
    total = (existing["total_count"] if existing else 0) + (tally.count if tally else 0)
    lapsed = mute.lapsed(ctx.now, total)
    if lapsed is None:
        return True
    ctx.lapsed_mutes.append(signature_id)
    ctx.report_notes.append(f"{signature_id} is no longer ignored: {lapsed}")
    return False


def file_issues(ctx: RoundContext, engine: GroupingEngine, plans: list[IssuePlan]) -> None:
    for position, plan in enumerate(plans):
        if plan.kind == "deferred":
            continue
        try:
            _file_issue(ctx, engine, plan)
        except TrackerStopped as stop:
            # stop cleanly: what was filed is saved, the rest waits for the next round, the report says why
            waiting = [p for p in plans[position:] if p.kind != "deferred"]
            for left in waiting:
                if left.issue is None:
                    left.kind = "deferred"
            ctx.report_notes.append(f"{len(waiting)} issues not filed or updated this round: {stop}")
            return


def _file_issue(ctx: RoundContext, engine: GroupingEngine, plan: IssuePlan) -> None:
    diagnosis = _latest_diagnosis(ctx, plan.signature_id)
    row = signature_row(ctx, engine, plan.signature_id, plan.tally, plan.existing)
    labels = [BOT_LABEL, service_label(_service(plan)), severity_label(severity(row))]
    if diagnosis is not None and diagnosis.classification != "unknown":
        labels.append(f"classification:{diagnosis.classification.replace('_', '-')}")
    view = issue_view(plan, row, diagnosis)
    draft = IssueDraft(
        signature_id=plan.signature_id, title=issue_title(view), body=render_body(view), labels=labels
    )
    if plan.issue is None:
        plan.issue = ctx.tracker.create(draft)
    elif plan.kind == "regressed":
        comment = (
            f"Regression: this problem recurred after the issue was closed — "
            f"{plan.tally.count if plan.tally else 0} occurrences in this round."
        )
        plan.issue = ctx.tracker.update(plan.issue, draft, comment=comment, reopen=True)
    else:
        comment = None if plan.kind == "muted" else _diagnosis_comment(ctx, plan)
        plan.issue = ctx.tracker.update(plan.issue, draft, comment=comment)


def severity(row: dict) -> str:
    """A stable severity: fatal problems are critical, the rest grows with the total count (never churns
    between rounds, so labels change only when a threshold is crossed)."""
    if ErrorEvent.model_validate_json(row["representative"]).fatal:
        return "critical"
    total = row["total_count"]
    return "high" if total >= 1_000 else "medium" if total >= 100 else "low"


def _latest_diagnosis(ctx: RoundContext, signature_id: str) -> Diagnosis | None:
    row = ctx.store.latest_diagnosis(signature_id, ok_only=True)
    if row is None:
        return None
    return DiagnosisOutcome.model_validate_json(row["outcome"]).diagnosis


def _diagnosis_comment(ctx: RoundContext, plan: IssuePlan) -> str | None:
    """One comment when a diagnosis was added to an issue that already existed (new issues carry it)."""
    outcome = ctx.diagnosis.attempted.get(plan.signature_id)
    if outcome is None or outcome.diagnosis is None:
        return None
    d = outcome.diagnosis
    return (
        f"Diagnosis added: **{d.classification.replace('_', ' ')}** (confidence {d.confidence}). "
        "See the Diagnosis section of the description."
    )


def _service(plan: IssuePlan) -> str:
    if plan.tally and plan.tally.services:
        return sorted(plan.tally.services)[0]
    return plan.existing["service"] if plan.existing else "unknown"


def issue_view(plan: IssuePlan, row: dict, diagnosis: Diagnosis | None = None) -> IssueView:
    """What the issue shows, from the signature as it will be after this round."""
    tally = plan.tally
    representative = ErrorEvent.model_validate_json(row["representative"])
    return IssueView(
        signature_id=plan.signature_id,
        service=row["service"],
        error_type=row["error_type"] or None,
        normalized_message=row["normalized_message"],
        title=row["title"],
        tier=tally.assignment.tier if tally else row["first_tier"],
        explanation=row["explanation"],
        round_count=tally.count if tally else 0,
        total_count=row["total_count"],
        first_seen=row["first_seen"],
        last_seen=row["last_seen"],
        services=json.loads(row["services"]),
        versions=json.loads(row["versions"]),
        environments=json.loads(row["environments"]),
        message=clean(representative.message),
        stacktrace=clean(representative.stacktrace) if representative.stacktrace else None,
        classification=diagnosis.classification.replace("_", " ") if diagnosis else None,
        confidence=diagnosis.confidence if diagnosis else None,
        diagnosis_markdown=render_diagnosis(diagnosis) if diagnosis else None,
        related=json.loads(row["related"]),
        links=[("Source", representative.source_url)] if representative.source_url else [],
        marker=MarkerState(
            signature_id=plan.signature_id,
            service=row["service"],
            fingerprint_hash=row["fingerprint_hash"],
            fingerprint_version=row["fingerprint_version"],
            first_seen=row["first_seen"],
            last_seen=row["last_seen"],
            total_count=row["total_count"],
            grouping_state=json.loads(row["grouping_state"]),
            title=row["title"],
            error_type=row["error_type"] or "",
            normalized_message=row["normalized_message"],
            first_tier=row["first_tier"],
            services=json.loads(row["services"]),
            versions=json.loads(row["versions"]),
            environments=json.loads(row["environments"]),
            related=json.loads(row["related"]),
        ),
    )
