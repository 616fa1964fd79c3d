"""Filing: one issue per signature — create, update or reopen it as planned, and say what was filed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from rounds_bot.clock import iso
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.github.labels import BOT_LABEL, service_label, severity_label
from rounds_bot.headline import summary_of
from rounds_bot.marker import MarkerMemory
from rounds_bot.models import ErrorEvent
from rounds_bot.render import markdown as md
from rounds_bot.render.cascade_section import Cascade, cascade_line, path_section, reference
from rounds_bot.render.chart import occurrence_chart
from rounds_bot.render.code_section import code_section, frame_markdown
from rounds_bot.render.diagnosis import render_diagnosis, render_failed_attempt
from rounds_bot.render.issue import IssueView, RelatedLink, issue_title, render_body
from rounds_bot.render.next_step import next_step, search_text
from rounds_bot.render.telemetry import (
    before_the_error,
    log_rows,
    other_attributes,
    request_rows,
    table,
    trace_rows,
)
from rounds_bot.round.evidence import Evidence, IssueEvidence
from rounds_bot.round.planning import UNFILED_KINDS, IssuePlan
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
                settled.append(plan if issue is plan.issue else replace(plan, issue=issue))
        return settled


def file_issues(
    tracker: Tracker,
    plans: list[IssuePlan],
    diagnoses: dict[str, Diagnosis],
    attempted: dict[str, DiagnosisOutcome],
    evidence: Evidence,
    style: IssueStyle,
    memory: Mapping[str, MarkerMemory] | None = None,
) -> Filed:
    """File or update each planned issue, one at a time: each one's evidence is found, its body rendered
    and written, then let go. `diagnoses` holds each signature's latest good diagnosis; `attempted`, this
    round's diagnosis attempts (an existing issue gets one comment for a new one); `evidence`, where and
    when each problem happens; `memory`, what each marker remembers of diagnoses and spending."""
    memory = memory or {}
    # built here, then handed to Filed whole: Filed is frozen, its containers too are never changed after
    issues: dict[str, IssueRef] = {}
    not_reached: set[str] = set()
    notes: list[str] = []
    unlinked: list[_Unlinked] = []  # bodies naming a cascade's signature before its issue
    for position, plan in enumerate(plans):
        if plan.kind in UNFILED_KINDS:
            continue
        try:
            sid = plan.signature_id
            gathered = evidence.of(plan)
            found = _with_refs(gathered, issues)
            view = issue_view(plan, diagnoses.get(sid), found, style, memory.get(sid), attempted.get(sid))
            issues[sid] = _file_issue(tracker, plan, view, attempted.get(sid))
            missing = _unresolved(found)
            if missing:
                unlinked.append((plan, gathered, missing))
        except TrackerStopped as stop:
            # stop cleanly: what was filed is saved, the rest waits for the next round, the report says why
            waiting = [p for p in plans[position:] if p.kind not in UNFILED_KINDS]
            not_reached.update(p.signature_id for p in waiting)
            notes.append(f"{len(waiting)} issues not filed or updated this round: {stop}")
            break
    _link_cascades(tracker, unlinked, issues, notes, diagnoses, attempted, style, memory)
    md.forget_remembered()  # the bodies are written: what their rendering remembered has no reader left
    return Filed(issues=issues, not_reached=not_reached, notes=notes)


def _link_cascades(
    tracker: Tracker,
    unlinked: list[_Unlinked],
    issues: dict[str, IssueRef],
    notes: list[str],
    diagnoses: dict[str, Diagnosis],
    attempted: dict[str, DiagnosisOutcome],
    style: IssueStyle,
    memory: Mapping[str, MarkerMemory],
) -> None:
    """Once more, the bodies that named a cascade's signature before its issue existed: "caused by #12" is
    what makes a cascade read as one problem, so it does not wait for the next round (one edit each)."""
    for plan, gathered, missing in unlinked:
        sid = plan.signature_id
        found = _with_refs(gathered, issues)
        issue = issues.get(sid)
        if issue is None or _unresolved(found) == missing:
            continue
        view = issue_view(plan, diagnoses.get(sid), found, style, memory.get(sid), attempted.get(sid))
        draft = IssueDraft(
            signature_id=sid, title=issue_title(view), body=render_body(view), labels=_labels(plan, view)
        )
        try:
            issues[sid] = tracker.update(issue, draft)
        except TrackerStopped as stop:
            notes.append(f"cascade links wait for the next round: {stop}")
            return


#: a plan whose body named a cascade's signature before its issue existed, its evidence as gathered (kept
#: for the second edit: evidence is found once per plan), and those signatures
_Unlinked = tuple[IssuePlan, IssueEvidence, set[str]]


def _unresolved(evidence: IssueEvidence) -> set[str]:
    """The signatures a body's cascade names that have no issue yet."""
    return {sid for sid in _named(evidence) if sid not in evidence.refs}


def _named(evidence: IssueEvidence) -> set[str]:
    """The signatures a body's cascade names (the only ones whose issue it links)."""
    cascade = evidence.cascade
    if cascade is None:
        return set()
    return {*cascade.caused_by, *cascade.causes, *(step.signature_id for step in cascade.path)}


def _with_refs(evidence: IssueEvidence, issues: dict[str, IssueRef]) -> IssueEvidence:
    """Related and cascading signatures filed earlier in this round linked to the issue they just got (the
    evidence itself when it names none, as most do)."""
    if not evidence.related and evidence.cascade is None:
        return evidence
    related = [
        link.model_copy(update={"issue_ref": issues[link.signature_id].ref})
        if link.issue_ref is None and link.signature_id in issues
        else link
        for link in evidence.related
    ]
    # only the signatures the cascade names are ever looked up: the round's other issues are left out, so
    # filing stays linear in the issues filed (this round's refs are the newest)
    named = _named(evidence)
    refs = {**evidence.refs, **{sid: issues[sid].ref for sid in named if sid in issues}}
    return replace(evidence, related=related, refs=refs)


def _file_issue(
    tracker: Tracker, plan: IssuePlan, view: IssueView, attempt: DiagnosisOutcome | None
) -> IssueRef:
    draft = IssueDraft(
        signature_id=plan.signature_id,
        title=issue_title(view),
        body=render_body(view),
        labels=_labels(plan, view),
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


def _labels(plan: IssuePlan, view: IssueView) -> list[str]:
    labels = [BOT_LABEL, service_label(_service(plan)), severity_label(plan.signature.severity)]
    if view.classification_key:
        labels.append(f"classification:{view.classification_key}")
    return labels


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


def _crash_site(evidence: IssueEvidence) -> str | None:
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
    evidence: IssueEvidence | None = None,
    style: IssueStyle | None = None,
    memory: MarkerMemory | None = None,
    attempt: DiagnosisOutcome | None = None,
) -> IssueView:
    """What the issue shows, from the signature as it will be after this round. A diagnosis `attempt` of
    this round that failed is said in the Diagnosis section (after the last good diagnosis, if any)."""
    evidence = evidence or IssueEvidence()
    style = style or IssueStyle()
    signature: Signature = plan.signature
    tally = plan.tally
    representative = signature.representative
    context_title, rows = _context(representative, evidence)
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
        message=_message(representative),
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
        context_title=context_title,
        context_markdown="\n\n".join(
            part for part in (table(rows), before_the_error(representative)) if part
        ),
        cascade_line=cascade_line(evidence.cascade, evidence.refs),
        path_markdown=path_section(evidence.cascade, evidence.refs, plan.signature_id),
        confidence=diagnosis.confidence if diagnosis else None,
        diagnosis_markdown=_diagnosis_markdown(diagnosis, attempt, _crash_site(evidence)),
        next_step_markdown=next_step(
            diagnosis,
            evidence.code,
            diagnosis_on=style.diagnosis_on,
            search=search_text(representative, signature.title),
            cause=_cause(evidence.cascade, evidence.refs),
        ),
        related=evidence.related or [RelatedLink(signature_id=sid) for sid in sorted(signature.related)],
        links=[("Source", representative.source_url)] if representative.source_url else [],
        marker=signature.to_marker(memory),
    )


def _context(event: ErrorEvent, evidence: IssueEvidence) -> tuple[str, list[tuple[str, str]]]:
    """The occurrence's telemetry beyond its message: the log record, the request, or only the trace."""
    own = other_attributes(event)
    extra = [("Attributes", own)] if own else []
    if event.kind == "log":
        logged_at = evidence.code.logged_at
        where = frame_markdown(logged_at) if logged_at and evidence.code.source != "attributes" else None
        return "Log record", log_rows(event, where) + extra
    request = request_rows(event)
    if request:
        return "Request", request + extra
    traced = trace_rows(event)
    return ("Trace", traced) if traced else ("", [])


def _cause(cascade: Cascade | None, refs: dict[str, str]) -> str | None:
    """The issue this problem's traces began with (the one most traces show), as a reference."""
    if cascade is None or not cascade.caused_by:
        return None
    first = min(cascade.caused_by.items(), key=lambda pair: (-pair[1], pair[0]))[0]
    return reference(refs.get(first), first)


def _message(event: ErrorEvent) -> str:
    """The occurrence's message as the issue shows it apart: a failed span's only when it says more than the
    summary does (a span named after its method, `POST`, says nothing the Request table does not)."""
    if event.kind == "span_error" and " ".join(event.message.split()) in summary_of(event):
        return ""
    return event.message


def _diagnosis_markdown(
    diagnosis: Diagnosis | None, attempt: DiagnosisOutcome | None, crash_site: str | None
) -> str | None:
    failed = render_failed_attempt(attempt) if attempt is not None and attempt.status != "ok" else None
    if diagnosis is None:
        return failed
    shown = render_diagnosis(diagnosis, crash_site=crash_site)
    return f"{failed}\n{shown}" if failed else shown
