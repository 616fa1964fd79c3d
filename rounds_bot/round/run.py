"""One round, start to end.

    window    = plan_window(...)          where to read from
    polled    = source.poll(window, ...)  errors since the cursor
    tallies   = group_occurrences(...)    fingerprint + dedup, count what is new
    plans     = plan_issues(...)          new / updated / regressed / muted / deferred   (filing.py)
    diagnosis = diagnose_patients(...)    triage, cache, budget, model calls              (diagnose.py)
    file_issues(...)                      one issue per signature, never a twin           (filing.py)
    commit(...)                           everything learned, in ONE transaction
    build_report(...)                     what happened, for humans                       (round_summary.py)

Nothing the round learned is written to the database before `commit`, so a round that fails anywhere
leaves the signatures, counts and cursor as they were and the next round reads the same window again. Two
kinds of facts are written as they happen, because they are facts about the outside world: money spent on a
model call (the ledger and the cached diagnosis, so a retry never pays twice) and the tracker's intent
journal (so an issue created just before a crash is found again instead of filed twice)."""

from __future__ import annotations

import functools
import json
import uuid
from datetime import UTC, datetime, timedelta

from rounds_bot.config import Settings
from rounds_bot.controls import UNMUTED, load_controls, pending_rediagnoses
from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.events import Fact
from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine, SignatureState
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.redact import clean
from rounds_bot.round.diagnosis_step import DiagnosisStep, Patient, run_diagnosis_step
from rounds_bot.round.filing import file_issues, hold_while_paused, plan_issues
from rounds_bot.round.report import RoundReport
from rounds_bot.round.summary import build_report
from rounds_bot.round.tally import BEGINNING, IssuePlan, RoundContext, Tally, signature_row
from rounds_bot.sources.base import PollResult, Source, Window
from rounds_bot.store import Store, iso
from rounds_bot.tracker.base import Tracker

# Data younger than this may still be arriving at the backend (SigNoz clamps queries the same way).
INGEST_DELAY = timedelta(seconds=30)
# A diagnosis that keeps failing (timeouts, API errors) is retried this many times, then waits for new
# occurrences or a `/rounds rediagnose`.
MAX_DIAGNOSIS_ATTEMPTS = 3


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
        event = redacted(event)
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


def redacted(event: ErrorEvent) -> ErrorEvent:
    """The occurrence with secrets and personal data redacted, before anything else sees it.

    Grouping runs on the redacted text, so what the signature remembers (its title, templates and the
    state carried in the issue's marker) never holds a secret, and a re-loaded engine groups exactly as
    this one did.
    """
    changes: dict[str, object] = {"message": _clean_cached(event.message)}
    if event.stacktrace:
        changes["stacktrace"] = _clean_cached(event.stacktrace)
    strings = {k: _clean_cached(v) for k, v in event.attributes.items() if isinstance(v, str)}
    if strings:
        changes["attributes"] = {**event.attributes, **strings}
    return event.model_copy(update=changes)


@functools.lru_cache(maxsize=8192)
def _clean_cached(text: str) -> str:
    # the same message and stack trace recur thousands of times; redaction costs about a millisecond
    return clean(text)


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
        ctx.store.append_event(Fact.INCIDENT_DETECTED, f"detected:{sid}", signature_id=sid, run_id=run, at=at)
    if plan.issue is not None:
        ctx.store.append_event(
            Fact.ISSUE_FILED,
            f"filed:{sid}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"issue": plan.issue.ref},
        )
    if plan.kind == "regressed":
        ctx.store.append_event(
            Fact.REGRESSED,
            f"regressed:{sid}:{run}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"count": count},
        )
    if plan.kind in ("updated", "muted", "regressed") and count:
        ctx.store.append_event(
            Fact.UPDATED,
            f"updated:{sid}:{run}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"count": count},
        )


__all__ = ["BEGINNING", "INGEST_DELAY", "load_engine", "run_round"]
