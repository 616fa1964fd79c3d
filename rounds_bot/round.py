"""One round, start to end.

    window  = plan_window(...)            where to read from
    polled  = source.poll(window, ...)    errors since the cursor
    tallies = group_occurrences(...)      fingerprint + dedup, count what is new
    plans   = plan_issues(...)            new / updated / regressed / deferred
    refs    = file_issues(...)            one issue per signature, never a twin
    commit(...)                           everything learned, in ONE transaction
    report                                 what happened, for humans

Nothing is written to the database before the last step, so a round that fails anywhere leaves the database as
it was and the next round reads the same window again. Issues filed before a failure are found again by their
hidden marker, so the retry updates them instead of filing twins.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from rounds_bot.config import Settings
from rounds_bot.controls import UNMUTED, Controls, load_controls, pending_rediagnoses
from rounds_bot.diagnose import DiagnosisStep, Patient, run_diagnosis_step
from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.diagnosis.render import render_diagnosis
from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine, SignatureState
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.redact import clean
from rounds_bot.report import RoundReport, SignatureLine
from rounds_bot.sources.base import PollResult, Source, Window
from rounds_bot.store import Store, bucket_of, iso
from rounds_bot.tracker.base import IssueDraft, IssueRef, Tracker, TrackerStopped
from rounds_bot.tracker.labels import service_label
from rounds_bot.tracker.marker import MarkerState
from rounds_bot.tracker.render import IssueView, issue_title, render_body
from rounds_bot.triage import Occurrence

# Data younger than this may still be arriving at the backend (SigNoz clamps queries the same way).
INGEST_DELAY = timedelta(seconds=30)
# The start of time, for sources that are read whole the first time (files).
BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)
SAMPLES_PER_SIGNATURE = 5
# A diagnosis that keeps failing (timeouts, API errors) is retried this many times, then waits for new
# occurrences or a `/rounds rediagnose`.
MAX_DIAGNOSIS_ATTEMPTS = 3
BOT_LABEL = "rounds"


@dataclass
class Tally:
    """What one round saw of one signature."""

    assignment: Assignment
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    buckets: dict[str, int] = field(default_factory=dict)
    samples: list[ErrorEvent] = field(default_factory=list)
    occurrences: list[tuple[str, str, datetime]] = field(default_factory=list)
    group_ids: set[str] = field(default_factory=set)
    services: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    timeline: list[Occurrence] = field(default_factory=list)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> None:
        self.count += count
        self.first_seen = min(self.first_seen or first, first)
        self.last_seen = max(self.last_seen or last, last)
        self.buckets[bucket_of(last)] = self.buckets.get(bucket_of(last), 0) + count
        self.timeline.append(Occurrence(timestamp=last, count=count, fatal=event.fatal))
        self.services.add(event.service)
        if event.service_version:
            self.versions.add(event.service_version)
        if event.environment:
            self.environments.add(event.environment)
        if event.source_group_id:
            self.group_ids.add(event.source_group_id)
        if len(self.samples) < SAMPLES_PER_SIGNATURE and self._varied(event):
            self.samples.append(event)

    def _varied(self, event: ErrorEvent) -> bool:
        """Keep samples that differ from each other: different service, version, or message."""
        return all(
            (s.service, s.service_version, s.message) != (event.service, event.service_version, event.message)
            for s in self.samples
        )


@dataclass
class IssuePlan:
    signature_id: str
    kind: str  # new | updated | regressed | muted | deferred
    tally: Tally | None
    existing: dict | None
    issue: IssueRef | None = None


@dataclass
class RoundContext:
    settings: Settings
    source: Source
    tracker: Tracker
    store: Store
    now: datetime
    run_id: str
    window: Window
    report_notes: list[str] = field(default_factory=list)
    tier_counts: dict[str, int] = field(default_factory=dict)
    diagnosis_mode: str = "diagnosis off"
    diagnosis: DiagnosisStep = field(default_factory=DiagnosisStep)
    # what people asked with /rounds commands: pause, mutes, merges (controls.py)
    controls: Controls = field(default_factory=Controls)
    lapsed_mutes: list[str] = field(default_factory=list)


def run_round(
    settings: Settings,
    source: Source,
    tracker: Tracker,
    store: Store,
    *,
    now: datetime | None = None,
    reads_whole_history: bool = False,
    diagnoser: Diagnoser | None = None,
    diagnosis_mode: str = "diagnosis off",
    rediagnose: dict[str, str] | None = None,
) -> RoundReport:
    """Run one round and return its report. Raises RoundsError (database untouched) on failure.

    `rediagnose` maps signature ids to a hint for signatures someone asked to diagnose again.
    """
    now = now or datetime.now(UTC)
    run_id = f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
    window = plan_window(store, source, settings, now, reads_whole_history)
    ctx = RoundContext(settings, source, tracker, store, now, run_id, window, diagnosis_mode=diagnosis_mode)
    ctx.controls = load_controls(store)

    polled = source.poll(window, frozenset(store.group_map()))
    engine = load_engine(settings, store)
    tallies, already_counted = group_occurrences(ctx, engine, polled)
    if ctx.controls.pause is not None:
        plans = hold_while_paused(ctx, tallies)
    else:
        rediagnose = {**pending_rediagnoses(store), **(rediagnose or {})}
        retries = store.pending_diagnoses(MAX_DIAGNOSIS_ATTEMPTS)
        wanted = retries | set(rediagnose)
        plans = plan_issues(ctx, tallies, wanted)
        ctx.diagnosis = diagnose_patients(ctx, engine, plans, diagnoser, rediagnose, wanted)
        file_issues(ctx, engine, plans)
        ctx.report_notes.extend(tracker.finish_round())
    commit(ctx, engine, polled, tallies, plans)
    return build_report(ctx, polled, tallies, plans, already_counted)


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


def diagnose_patients(
    ctx: RoundContext,
    engine: GroupingEngine,
    plans: list[IssuePlan],
    diagnoser: Diagnoser | None,
    rediagnose: dict[str, str],
    wanted: set[str],
) -> DiagnosisStep:
    """Diagnose what triage picks, within budget; duplicates never reach this step."""
    patients = [
        Patient(
            row=signature_row(ctx, engine, plan.signature_id, plan.tally, plan.existing),
            samples=plan.tally.samples if plan.tally else [],
            timeline=plan.tally.timeline if plan.tally else [],
            regressed=plan.kind == "regressed",
            retry=plan.signature_id in wanted and plan.signature_id not in rediagnose,
            related=list(plan.tally.assignment.related) if plan.tally else [],
        )
        for plan in plans
        if plan.kind in ("new", "filed-late", "updated", "regressed")
        and (plan.tally is not None or plan.signature_id in wanted)
    ]
    window_hours = max((ctx.window.end - max(ctx.window.start, _earliest(plans))).total_seconds(), 60) / 3600
    return run_diagnosis_step(
        ctx.settings,
        ctx.store,
        patients,
        diagnoser=diagnoser,
        run_id=ctx.run_id,
        now=ctx.now,
        window_hours=window_hours,
        rediagnose=rediagnose,
    )


def _earliest(plans: list[IssuePlan]) -> datetime:
    seen = [p.tally.first_seen for p in plans if p.tally is not None and p.tally.first_seen is not None]
    return min(seen, default=BEGINNING)


def plan_window(
    store: Store, source: Source, settings: Settings, now: datetime, reads_whole_history: bool
) -> Window:
    """[cursor - overlap, now - ingest delay]; the first round reaches back the lookback (files: all)."""
    end = now - INGEST_DELAY
    cursor = store.cursor(source.name)
    if cursor is not None:
        start = cursor - timedelta(seconds=settings.cursor_overlap_seconds)
    elif reads_whole_history:
        start = BEGINNING
    else:
        start = end - timedelta(minutes=settings.error_lookback_minutes)
    return Window(start=min(start, end), end=end, resume_from=cursor)


def grouping_config(settings: Settings) -> GroupingConfig:
    """The engine's defaults, with whatever the user set."""
    overrides = {
        "in_app_include": settings.in_app_include,
        "in_app_exclude": settings.in_app_exclude,
        "error_code_attributes": settings.error_code_attributes,
        "error_code_pattern": settings.error_code_pattern,
        "merge_threshold": settings.merge_threshold,
        "related_threshold": settings.related_threshold,
    }
    return GroupingConfig(**{k: v for k, v in overrides.items() if v not in (None, [])})


def load_engine(settings: Settings, store: Store) -> GroupingEngine:
    states = [SignatureState.model_validate_json(text) for text in store.grouping_states() if text]
    return GroupingEngine(grouping_config(settings), known=states)


def group_occurrences(
    ctx: RoundContext, engine: GroupingEngine, polled: PollResult
) -> tuple[dict[str, Tally], int]:
    """Fingerprint every occurrence not counted before; known backend groups are counted without grouping."""
    tallies: dict[str, Tally] = {}
    fresh = [e for e in polled.events if e.timestamp >= ctx.window.start]
    already = ctx.store.seen(e.event_id for e in fresh)
    already_counted = len(polled.events) - len(fresh)
    seen_now: set[str] = set()
    for event in fresh:
        if event.event_id in already or event.event_id in seen_now:
            already_counted += 1
            continue
        seen_now.add(event.event_id)
        assignment = engine.assign(event)
        ctx.tier_counts[assignment.tier] = ctx.tier_counts.get(assignment.tier, 0) + 1
        assignment = _follow_merge(ctx, assignment)
        tally = tallies.setdefault(assignment.signature_id, Tally(assignment=assignment))
        tally.add(event, event.count, event.timestamp, event.timestamp)
        tally.occurrences.append((event.event_id, assignment.signature_id, event.timestamp))

    group_map = ctx.store.group_map()
    for group in polled.known_group_counts:
        signature_id = group_map.get(group.source_group_id)
        signature_id = ctx.controls.target_of(signature_id) if signature_id else None
        row = ctx.store.signature(signature_id) if signature_id else None
        if row is None:
            ctx.report_notes.append(
                f"group {group.source_group_id} is mapped to an unknown signature; ignored"
            )
            continue
        if signature_id not in tallies:
            tallies[signature_id] = Tally(assignment=_assignment_from_row(row))
        stand_in = ErrorEvent(
            event_id=f"group:{group.source_group_id}", timestamp=group.last_seen, service=group.service
        )
        tallies[signature_id].add(stand_in, group.count, group.first_seen, group.last_seen)
    return tallies, already_counted


def _follow_merge(ctx: RoundContext, assignment: Assignment) -> Assignment:
    """A signature merged into another (`/rounds merge`) counts its occurrences there."""
    target = ctx.controls.target_of(assignment.signature_id)
    row = ctx.store.signature(target) if target != assignment.signature_id else None
    return _assignment_from_row(row) if row is not None else assignment


def _assignment_from_row(row: dict) -> Assignment:
    return Assignment(
        signature_id=row["id"],
        tier="fingerprint",
        fingerprint_hash=row["fingerprint_hash"],
        fingerprint_version=row["fingerprint_version"],
        explanation=row["explanation"],
        title=row["title"],
        normalized_message=row["normalized_message"],
    )


def plan_issues(ctx: RoundContext, tallies: dict[str, Tally], wanted: set[str]) -> list[IssuePlan]:
    """Decide, per signature, whether to file, update, reopen, or wait for the next round.

    Besides the signatures seen this round: those an earlier round's cap deferred, and `wanted` ones
    (a diagnosis to retry or asked for) even when they did not occur.
    """
    plans: list[IssuePlan] = []
    filed_new = 0
    candidates: dict[str, Tally | None] = dict(tallies)
    for row in ctx.store.signatures():
        if (not row["issue_ref"] or row["id"] in wanted) and row["id"] not in candidates:
            candidates[row["id"]] = None
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
    labels = [BOT_LABEL, service_label(_service(plan))]
    if diagnosis is not None and diagnosis.classification != "unknown":
        labels.append(f"classification:{diagnosis.classification.replace('_', '-')}")
    view = issue_view(ctx, engine, plan, diagnosis)
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


def _merged_list(existing: dict | None, column: str, new: set[str]) -> list[str]:
    old = json.loads(existing[column]) if existing and existing.get(column) else []
    return sorted(set(old) | new)


def issue_view(
    ctx: RoundContext, engine: GroupingEngine, plan: IssuePlan, diagnosis: Diagnosis | None = None
) -> IssueView:
    tally, existing = plan.tally, plan.existing
    row = signature_row(ctx, engine, plan.signature_id, tally, existing)
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


def signature_row(
    ctx: RoundContext, engine: GroupingEngine, signature_id: str, tally: Tally | None, existing: dict | None
) -> dict:
    """The signature as it will be after this round (pure: nothing is written here)."""
    if tally is None:
        assert existing is not None
        return existing
    a = tally.assignment
    first = iso(tally.first_seen) if tally.first_seen else iso(ctx.now)
    last = iso(tally.last_seen) if tally.last_seen else iso(ctx.now)
    representative = (
        existing["representative"] if existing and existing.get("representative") else _sample_json(tally)
    )
    return {
        "id": signature_id,
        "service": existing["service"] if existing else sorted(tally.services)[0],
        "title": existing["title"] if existing else a.title,
        "error_type": existing["error_type"]
        if existing
        else (tally.samples[0].error_type or "")
        if tally.samples
        else "",
        "normalized_message": existing["normalized_message"] if existing else a.normalized_message,
        "fingerprint_hash": existing["fingerprint_hash"] if existing else a.fingerprint_hash,
        "fingerprint_version": existing["fingerprint_version"] if existing else a.fingerprint_version,
        "first_tier": existing["first_tier"] if existing else a.tier,
        "explanation": existing["explanation"] if existing else a.explanation,
        "representative": representative,
        "grouping_state": engine.state(signature_id).model_dump_json(),
        "first_seen": min(existing["first_seen"], first) if existing else first,
        "last_seen": max(existing["last_seen"], last) if existing else last,
        "total_count": (existing["total_count"] if existing else 0) + tally.count,
        "services": json.dumps(_merged_list(existing, "services", tally.services)),
        "versions": json.dumps(_merged_list(existing, "versions", tally.versions)),
        "environments": json.dumps(_merged_list(existing, "environments", tally.environments)),
        "related": json.dumps(
            sorted(set(json.loads(existing["related"]) if existing else []) | set(a.related))
        ),
        "issue_ref": existing["issue_ref"] if existing else None,
        "created_run": existing["created_run"] if existing else ctx.run_id,
    }


def _sample_json(tally: Tally) -> str:
    """The representative occurrence, redacted: the database travels as a build artifact."""
    if tally.samples:
        sample = tally.samples[0]
        redacted = {"message": clean(sample.message)}
        if sample.stacktrace:
            redacted["stacktrace"] = clean(sample.stacktrace)
        return sample.model_copy(update=redacted).model_dump_json()
    return ErrorEvent(event_id="none", timestamp=tally.last_seen or datetime.now(UTC)).model_dump_json()


def commit(
    ctx: RoundContext,
    engine: GroupingEngine,
    polled: PollResult,
    tallies: dict[str, Tally],
    plans: list[IssuePlan],
) -> None:
    """Everything this round learned, in one transaction."""
    store = ctx.store
    with store.transaction():
        for plan in plans:
            existing = store.signature(plan.signature_id)
            row = signature_row(ctx, engine, plan.signature_id, plan.tally, existing)
            if plan.issue is not None:
                row["issue_ref"] = plan.issue.ref
            store.upsert_signature(row)
            _log_events(ctx, plan)
        for signature_id, tally in tallies.items():
            if not any(p.signature_id == signature_id for p in plans):
                store.upsert_signature(
                    signature_row(ctx, engine, signature_id, tally, store.signature(signature_id))
                )
            store.add_occurrences(signature_id, tally.buckets)
            store.mark_seen(tally.occurrences)
            for group_id in tally.group_ids:
                store.map_group(group_id, signature_id)
        for signature_id in ctx.lapsed_mutes:
            store.append_event(
                UNMUTED,
                f"lapsed:{signature_id}:{ctx.run_id}",
                signature_id=signature_id,
                run_id=ctx.run_id,
                at=ctx.now,
                payload={"source": "command", "by": "rounds", "reason": "lapsed"},
            )
        cursor = _next_cursor(ctx, polled)
        store.set_cursor(ctx.source.name, cursor)
        store.forget_seen_before(cursor - timedelta(seconds=ctx.settings.cursor_overlap_seconds))
        store.record_run(
            {
                "id": ctx.run_id,
                "started_at": iso(ctx.now),
                "finished_at": iso(datetime.now(UTC)),
                "source": ctx.source.name,
                "status": "ok",
                "stats": json.dumps({"plans": {p.signature_id: p.kind for p in plans}}, sort_keys=True),
            }
        )


def _next_cursor(ctx: RoundContext, polled: PollResult) -> datetime:
    """Up to the window's end; for historic data (files) the newest occurrence read, so nothing is skipped."""
    newest = max((e.timestamp for e in polled.events), default=None)
    if ctx.window.start == BEGINNING or (newest and newest < ctx.window.start):
        previous = ctx.store.cursor(ctx.source.name)
        candidates = [t for t in (newest, previous) if t is not None]
        return max(candidates) if candidates else ctx.window.start
    return ctx.window.end


def _log_events(ctx: RoundContext, plan: IssuePlan) -> None:
    sid, run, at = plan.signature_id, ctx.run_id, ctx.now
    count = plan.tally.count if plan.tally else 0
    if plan.kind in ("new", "deferred"):
        ctx.store.append_event("IncidentDetected", f"detected:{sid}", signature_id=sid, run_id=run, at=at)
    if plan.issue is not None:
        ctx.store.append_event(
            "IssueFiled",
            f"filed:{sid}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"issue": plan.issue.ref},
        )
    if plan.kind == "regressed":
        ctx.store.append_event(
            "Regressed",
            f"regressed:{sid}:{run}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"count": count},
        )
    if plan.kind in ("updated", "muted", "regressed") and count:
        ctx.store.append_event(
            "Updated", f"updated:{sid}:{run}", signature_id=sid, run_id=run, at=at, payload={"count": count}
        )


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
