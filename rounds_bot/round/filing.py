"""Filing: one issue per signature — create, update or reopen it as planned, and say what was filed."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from rounds_bot.clock import iso
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.diagnosis.render import render_diagnosis
from rounds_bot.github.labels import BOT_LABEL, service_label, severity_label
from rounds_bot.render import markdown as md
from rounds_bot.render.chart import occurrence_chart
from rounds_bot.render.code_section import code_section
from rounds_bot.render.headline import summary_of
from rounds_bot.render.issue import IssueView, RelatedLink, issue_title, render_body
from rounds_bot.render.marker import MarkerMemory
from rounds_bot.render.next_step import next_step
from rounds_bot.round.evidence import Evidence
from rounds_bot.round.planning import IssuePlan
from rounds_bot.signature import Signature
from rounds_bot.tracker.base import IssueDraft, IssueRef, Tracker, TrackerStopped


@dataclass(frozen=True)
class Filed:
    """What filing did: the issue each signature has now, and what it could not reach this round."""

    issues: dict[str, IssueRef] = field(default_factory=dict)
    not_reached: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def settle(self, plans: list[IssuePlan]) -> list[IssuePlan]:
        """The plans as they ended: with their issue, and deferred when no issue was reached."""
        settled = []
        for plan in plans:
            issue = self.issues.get(plan.signature_id, plan.issue)
            if plan.signature_id in self.not_reached and issue is None:
                settled.append(replace(plan, kind="deferred"))
            else:
                settled.append(replace(plan, issue=issue))
        return settled


def file_issues(
    tracker: Tracker,
    plans: list[IssuePlan],
    diagnoses: dict[str, Diagnosis],
    attempted: dict[str, DiagnosisOutcome],
    evidence: dict[str, Evidence],
    style: IssueStyle,
    memory: dict[str, MarkerMemory] | None = None,
) -> Filed:
    """File or update each planned issue. `diagnoses` holds each signature's latest good diagnosis;
    `attempted`, this round's diagnosis attempts (an existing issue gets one comment for a new one);
    `evidence`, where and when each problem happens; `memory`, what each marker remembers of diagnoses
    and spending."""
    memory = memory or {}
    filed = Filed()
    for position, plan in enumerate(plans):
        if plan.kind == "deferred":
            continue
        try:
            sid = plan.signature_id
            found = _with_refs(evidence.get(sid, Evidence()), filed.issues)
            view = issue_view(plan, diagnoses.get(sid), found, style, memory.get(sid))
            filed.issues[sid] = _file_issue(tracker, plan, view, attempted.get(sid))
        except TrackerStopped as stop:
            # stop cleanly: what was filed is saved, the rest waits for the next round, the report says why
            waiting = [p for p in plans[position:] if p.kind != "deferred"]
            filed.not_reached.update(p.signature_id for p in waiting)
            filed.notes.append(f"{len(waiting)} issues not filed or updated this round: {stop}")
            break
    return filed


def _with_refs(evidence: Evidence, issues: dict[str, IssueRef]) -> Evidence:
    """Related signatures filed earlier in this round linked to the issue they just got."""
    related = [
        link.model_copy(update={"issue_ref": issues[link.signature_id].ref})
        if link.issue_ref is None and link.signature_id in issues
        else link
        for link in evidence.related
    ]
    return replace(evidence, related=related)


def _file_issue(
    tracker: Tracker, plan: IssuePlan, view: IssueView, attempt: DiagnosisOutcome | None
) -> IssueRef:
    labels = [BOT_LABEL, service_label(_service(plan)), severity_label(plan.signature.severity)]
    if view.classification_key:
        labels.append(f"classification:{view.classification_key}")
    draft = IssueDraft(
        signature_id=plan.signature_id, title=issue_title(view), body=render_body(view), labels=labels
    )
    if plan.issue is None:
        return tracker.create(draft)
    if plan.kind == "regressed":
        regression = (
            f"Regression: this problem recurred after the issue was closed — "
            f"{plan.tally.count if plan.tally else 0} occurrences in this round."
        )
        if plan.reason:  # a merged fix did not hold: say on which version
            count = plan.tally.count if plan.tally else 0
            regression = f"Regression: {md.escape(plan.reason)} ({count} occurrences)."
        return tracker.update(plan.issue, draft, comment=regression, reopen=True)
    comment = None if plan.kind == "muted" else _diagnosis_comment(attempt)
    return tracker.update(plan.issue, draft, comment=comment)


def _diagnosis_comment(attempt: DiagnosisOutcome | None) -> str | None:
    """One comment when a diagnosis was added to an issue that already existed (new issues carry it)."""
    if attempt is None or attempt.diagnosis is None:
        return None
    d = attempt.diagnosis
    return (
        f"Diagnosis added: **{d.classification.replace('_', ' ')}** (confidence {d.confidence}). "
        "See the Diagnosis section of the description."
    )


def _service(plan: IssuePlan) -> str:
    if plan.tally and plan.tally.services:
        return sorted(plan.tally.services)[0]
    return plan.signature.service


def _crash_site(evidence: Evidence) -> str | None:
    """The innermost in-app frame as `path:line`, shown beside the diagnosis's fault location."""
    frame = next((f for f in evidence.code.frames if f.repo_path and f.line), None)
    return f"{frame.repo_path}:{frame.line}" if frame is not None else None


@dataclass(frozen=True)
class IssueStyle:
    """How issues are drawn this round."""

    charts: bool = True
    diagnosis_on: bool = True  # False: the next step says how to turn it on


def issue_view(
    plan: IssuePlan,
    diagnosis: Diagnosis | None = None,
    evidence: Evidence | None = None,
    style: IssueStyle | None = None,
    memory: MarkerMemory | None = None,
) -> IssueView:
    """What the issue shows, from the signature as it will be after this round."""
    evidence = evidence or Evidence()
    style = style or IssueStyle()
    signature: Signature = plan.signature
    tally = plan.tally
    representative = signature.representative
    return IssueView(
        signature_id=plan.signature_id,
        service=signature.service,
        error_type=signature.error_type or None,
        normalized_message=signature.normalized_message,
        title=signature.title,
        tier=tally.assignment.tier if tally else signature.first_tier,
        explanation=signature.explanation,
        round_count=tally.count if tally else 0,
        total_count=signature.total_count,
        first_seen=iso(signature.first_seen),
        last_seen=iso(signature.last_seen),
        services=sorted(signature.services),
        versions=sorted(signature.versions),
        environments=sorted(signature.environments),
        message=representative.message,
        summary=summary_of(representative),
        stacktrace=representative.stacktrace,
        classification=diagnosis.classification.replace("_", " ") if diagnosis else None,
        classification_key=(
            diagnosis.classification.replace("_", "-")
            if diagnosis and diagnosis.classification != "unknown"
            else None
        ),
        where_markdown=code_section(evidence.code),
        trend_markdown=occurrence_chart(evidence.occurrences, mermaid=style.charts),
        confidence=diagnosis.confidence if diagnosis else None,
        diagnosis_markdown=(
            render_diagnosis(diagnosis, crash_site=_crash_site(evidence)) if diagnosis else None
        ),
        next_step_markdown=next_step(diagnosis, evidence.code, diagnosis_on=style.diagnosis_on),
        related=evidence.related or [RelatedLink(signature_id=sid) for sid in sorted(signature.related)],
        links=[("Source", representative.source_url)] if representative.source_url else [],
        marker=signature.to_marker(memory),
    )
