"""One round, start to end: each step takes values and returns values.

    window     = plan_window(...)            where to read from                          (window.py)
    polled     = read_new(source, ...)       errors since the cursor not counted before, redacted once, here:
                                             nothing after sees raw telemetry (intake.py, redact/)
    grouped    = group_occurrences(...)      fingerprint + dedup, a tally per signature  (occurrences.py)
    states     = states_after(engine, ...)   the engine's state of each; the engine is let go here
    after      = signatures_after(...)       each signature as it will be after the round
    cascades   = cascades_of(...)            signatures whose errors share a trace        (cascade.py)
                 + kept_cascades(...)        with the links earlier rounds saw            (cascade.py)
    candidates = gather_candidates(...)      seen, deferred earlier, or wanted           (planning.py)
    lookups    = look_up_issues(...)         the tracker's issue for each (network)
    planned    = plan_issues(...)            new / updated / regressed / muted / deferred (pure)
    diagnosis  = diagnose_patients(...)      triage, cache, budget, model calls          (diagnosis_step.py)
    memory     = marker_memory(...)          the diagnosis and spending markers carry    (memory.py)
    filed      = file_issues(...)            one issue per signature, never a twin       (filing.py)
    commit(...)                              everything learned, in ONE transaction      (commit.py)
    build_report(...)                        what happened, for humans                   (summary.py)

Nothing the round learned is written to the database before `commit`, so a round that fails anywhere
leaves the signatures, counts and cursor as they were and the next round reads the same window again. Two
kinds of facts are written as they happen, because they are facts about the outside world: money spent on a
model call (the ledger and the cached diagnosis, so a retry never pays twice) and the tracker's intent
journal (so an issue created just before a crash is found again instead of filed twice)."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from rounds_bot.controls import Controls, load_controls, pending_rediagnoses
from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.fixing.release import FixVerdict
from rounds_bot.marker_memory import marker_memory
from rounds_bot.redact import Redactor
from rounds_bot.render.cascade_section import Cascade
from rounds_bot.round.cascade import carry_over, cascades_of
from rounds_bot.round.commit import Learned, commit, forget_before
from rounds_bot.round.diagnosis_step import DiagnosisStep, Patient, run_diagnosis_step
from rounds_bot.round.evidence import gather_evidence
from rounds_bot.round.filing import Filed, IssueStyle, file_issues
from rounds_bot.round.fixed import watch_fixed
from rounds_bot.round.intake import read_new
from rounds_bot.round.occurrences import (
    Grouped,
    group_occurrences,
    load_engine,
    signatures_after,
    states_after,
)
from rounds_bot.round.planning import (
    IssuePlan,
    Planned,
    extension_errors_held,
    gather_candidates,
    hold_while_paused,
    look_up_issues,
    plan_issues,
)
from rounds_bot.round.report import RoundReport
from rounds_bot.round.summary import HISTORY_ROUNDS, RoundOutcome, build_report
from rounds_bot.round.window import BEGINNING, INGEST_DELAY, next_cursor, plan_window, read_window
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature
from rounds_bot.sources.base import Source, Window
from rounds_bot.store import CascadeLinks, Store
from rounds_bot.tracker.base import Tracker

# A diagnosis that keeps failing (timeouts, API errors) is retried this many times, then waits for new
# occurrences or a `/rounds rediagnose`.
MAX_DIAGNOSIS_ATTEMPTS = 3


#: the cyclic garbage collector's thresholds in a round (Python's: 700, 10, 10); see `fewer_collections`
ROUND_GC_THRESHOLDS = (100_000, 20, 20)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """A round keeps what it counted (tallies, signatures, spilled batches' indexes) alive to its end, and
    allocates millions of small objects meanwhile: with Python's thresholds the cyclic collector walks all
    of them again and again (a fifth of a round's CPU time at 20k records), to find almost nothing, as the
    round's objects are freed by their counts. Collecting less often finds the same garbage later; the peak
    memory stays the same. The thresholds are restored afterwards.

    A first round over 100k records leaves about 2,000 objects in cycles in all (its first redaction's
    translation of the rules, modules it imports): at 20,000 new objects a collection, some 35 collections
    each walked the round's young objects, 0.3 s of CPU; at 100,000, one or two, 0.1 s. Cyclic garbage
    is still collected within the round, at most 100,000 objects late."""
    before = gc.get_threshold()
    gc.set_threshold(*ROUND_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


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
    with fewer_collections():
        return _round(
            settings,
            source,
            tracker,
            store,
            now=now,
            reads_whole_history=reads_whole_history,
            diagnoser=diagnoser,
            diagnosis_mode=diagnosis_mode,
            rediagnose=rediagnose,
        )


def _round(
    settings: Settings,
    source: Source,
    tracker: Tracker,
    store: Store,
    *,
    now: datetime | None,
    reads_whole_history: bool,
    diagnoser: Diagnoser | None,
    diagnosis_mode: str,
    rediagnose: dict[str, str] | None,
) -> RoundReport:
    now = now or datetime.now(UTC)
    run_id = f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
    window = plan_window(settings, store.cursor(source.name), now, whole_history=reads_whole_history)
    window = window.model_copy(update={"source_state": store.source_state(source.name)})
    controls = load_controls(store)
    history = store.recent_runs(HISTORY_ROUNDS)
    polled = read_new(source, window, store, Redactor(settings.redact_ips))
    engine = load_engine(settings, store)
    grouped = group_occurrences(store, engine, controls, read_window(window, polled), polled)
    # the engine's caches are the most a round holds, and nothing after this reads them: freed as the states
    # are read (the engine is unusable after), so the states and the steps after reuse their memory
    states = states_after(engine, grouped.tallies)
    del engine
    after = signatures_after(store, states, grouped.tallies, run_id=run_id, now=now)
    del states
    fixed = watch_fixed(store, grouped.tallies, run_id)
    cascade_links: dict[str, CascadeLinks] = {}
    if controls.pause is not None:
        candidates = gather_candidates(store, grouped.tallies, after, ())
        planned, diagnosis, filed = hold_while_paused(candidates, controls), DiagnosisStep(), Filed()
    else:
        cascades, cascade_links = kept_cascades(store, cascades_of(grouped.traces, after))
        occasion = Occasion(run_id, now, window, controls, fixed.verdicts, cascades, cascade_links)
        planned, diagnosis, filed = act(
            settings, store, tracker, diagnoser, occasion, grouped, after, rediagnose
        )
    # the plans as they ended take the place of those planned (nothing reads those after filing), so a
    # round with thousands of new signatures keeps one plan for each to its end, not two
    planned = replace(planned, plans=filed.settle(planned.plans))
    plans = planned.plans
    cursor = next_cursor(window, polled)
    commit(
        store,
        Learned(
            run_id=run_id,
            now=now,
            source=source.name,
            signatures={**after, **{p.signature_id: p.signature for p in plans}},
            tallies=grouped.tallies,
            counted=grouped.counted,
            plans=plans,
            lapsed_mutes=planned.lapsed_mutes,
            cursor=cursor,
            source_state=polled.source_state,
            forget_before=forget_before(cursor, settings.cursor_overlap_seconds),
            facts=fixed.facts,
            cascade_links=cascade_links,
        ),
    )
    return build_report(
        RoundOutcome(
            run_id=run_id,
            source=source.name,
            tracker=tracker.name,
            window=window,
            polled=polled,
            grouped=grouped,
            plans=plans,
            notes=[*polled.failures, *planned.notes, *filed.notes, *fixed.notes],
            diagnosis=diagnosis,
            diagnosis_mode=diagnosis_mode,
            controls=controls,
            started=now,
            history=history,
            charts=settings.charts,
        )
    )


def kept_cascades(
    store: Store, found: dict[str, Cascade]
) -> tuple[dict[str, Cascade], dict[str, CascadeLinks]]:
    """This round's cascades with what earlier rounds saw of them, and the links to keep (`carry_over`)."""
    kept = store.cascade_links()
    named = {*found, *kept, *(sid for links in kept.values() for sid in (*links.caused_by, *links.causes))}
    return carry_over(found, kept, {sid: store.status(sid) for sid in sorted(named)})


@dataclass(frozen=True)
class Occasion:
    """When and where a round acts, and what people asked of it."""

    run_id: str
    now: datetime
    window: Window
    controls: Controls
    fix_verdicts: dict[str, FixVerdict] = field(default_factory=dict)  # recurrences of fixed problems
    cascades: dict[str, Cascade] = field(default_factory=dict)  # signatures whose errors share a trace
    cascade_links: dict[str, CascadeLinks] = field(default_factory=dict)  # kept after it; markers carry them


def act(
    settings: Settings,
    store: Store,
    tracker: Tracker,
    diagnoser: Diagnoser | None,
    occasion: Occasion,
    grouped: Grouped,
    after: dict[str, Signature],
    rediagnose: dict[str, str] | None,
) -> tuple[Planned, DiagnosisStep, Filed]:
    """Plan, diagnose and file: the part of a round that reaches the tracker and the model."""
    rediagnose = {**pending_rediagnoses(store), **(rediagnose or {})}
    wanted = store.pending_diagnoses(MAX_DIAGNOSIS_ATTEMPTS) | set(rediagnose)
    candidates = gather_candidates(store, grouped.tallies, after, wanted)
    planned = plan_issues(
        candidates,
        look_up_issues(tracker, candidates),
        controls=occasion.controls,
        new_issue_cap=settings.new_issue_cap(),
        wanted=wanted,
        now=occasion.now,
        fix_verdicts=occasion.fix_verdicts,
        held_back=extension_errors_held(settings),
    )
    diagnosis = run_diagnosis_step(
        settings,
        store,
        patients(planned.plans, wanted, rediagnose),
        diagnoser=diagnoser,
        run_id=occasion.run_id,
        now=occasion.now,
        window_hours=window_hours(occasion.window, planned.plans),
        rediagnose=rediagnose,
    )
    planned_ids = [plan.signature_id for plan in planned.plans]
    latest = store.latest_good_diagnoses(planned_ids)  # read once, after this round's calls
    diagnoses = {sid: record.outcome.diagnosis for sid, record in latest.items() if record.outcome.diagnosis}
    diagnoses.update(diagnosis.good_diagnoses())
    evidence = gather_evidence(settings, store, planned.plans, occasion.cascades)
    style = IssueStyle(charts=settings.charts, diagnosis_on=diagnoser is not None)
    memory = marker_memory(store, planned_ids, latest, occasion.cascade_links)
    filed = file_issues(tracker, planned.plans, diagnoses, diagnosis.attempted, evidence, style, memory)
    filed = replace(filed, notes=[*filed.notes, *tracker.finish_round()])
    return planned, diagnosis, filed


def patients(plans: list[IssuePlan], wanted: set[str], rediagnose: dict[str, str]) -> list[Patient]:
    """What the diagnosis step may look at: signatures filed or updated this round; duplicates, and signatures
    held back (deferred, or raised in a browser extension), never reach it."""
    return [
        Patient(
            signature=plan.signature,
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


def window_hours(window: Window, plans: list[IssuePlan]) -> float:
    """How long the occurrences this round counted were spread over (at least a minute)."""
    seen = [p.tally.first_seen for p in plans if p.tally is not None and p.tally.first_seen is not None]
    earliest = min(seen, default=BEGINNING)
    return max((window.end - max(window.start, earliest)).total_seconds(), 60) / 3600


__all__ = ["BEGINNING", "INGEST_DELAY", "load_engine", "run_round"]
