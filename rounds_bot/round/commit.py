"""The round's last step: everything it learned, written in ONE transaction."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from rounds_bot.clock import iso
from rounds_bot.events import Fact
from rounds_bot.round.counted import Counted
from rounds_bot.round.planning import IssuePlan
from rounds_bot.signature import Signature
from rounds_bot.store import CascadeLinks, RunRecord, Store
from rounds_bot.tally import Tally


@dataclass(frozen=True)
class Learned:
    """What one round learned, ready to be written."""

    run_id: str
    now: datetime
    source: str
    signatures: dict[str, Signature]  # every signature the round touched, as it is after the round
    tallies: dict[str, Tally]
    counted: Counted  # every occurrence the tallies counted: remembered, never counted again
    plans: list[IssuePlan]  # as they ended (filed, updated, deferred ...)
    lapsed_mutes: list[str]
    cursor: datetime
    forget_before: datetime
    source_state: dict[str, Any] | None = None  # what the source keeps for its next round
    facts: list[FactToLog] = field(default_factory=list)  # found by a step (a fix's release, a recurrence)
    cascade_links: dict[str, CascadeLinks] = field(default_factory=dict)  # what each cascade is now


@dataclass(frozen=True)
class FactToLog:
    kind: Fact
    key: str
    signature_id: str
    payload: dict[str, Any]


def commit(store: Store, learned: Learned) -> None:
    """Signatures, counts, seen occurrences, versions seen, group mappings, the event log, the cursor and
    the run."""
    with store.transaction(), store.derived_once():
        store.save_many(_saved(learned))
        for plan in learned.plans:
            _log_events(store, learned, plan)
        # each table's rows in the order a signature at a time writes them: the same rows, in few statements
        tallies = learned.tallies
        store.add_occurrences_of((signature_id, tally.buckets) for signature_id, tally in tallies.items())
        store.note_versions_of(tally.service_versions for tally in tallies.values())
        for signature_id, tally in tallies.items():
            for group_id in tally.group_ids:
                store.map_group(group_id, signature_id)
        # streamed from where the round kept them; those the forgetting below would take out again are not
        # written (a first round's reach back, days of occurrences, against the next window's hour): the
        # round counts each id once and never one remembered already, so the rows left are the same
        store.mark_seen_stored(learned.counted.stored(since=learned.forget_before))
        for signature_id in learned.lapsed_mutes:
            store.append_event(
                Fact.INCIDENT_UNSUPPRESSED,
                f"lapsed:{signature_id}:{learned.run_id}",
                signature_id=signature_id,
                run_id=learned.run_id,
                at=learned.now,
                payload={"source": "command", "by": "rounds", "reason": "lapsed"},
            )
        for fact in learned.facts:
            store.append_event(
                fact.kind,
                fact.key,
                signature_id=fact.signature_id,
                run_id=learned.run_id,
                at=learned.now,
                payload=fact.payload,
            )
        store.set_cascade_links(learned.cascade_links)  # after the saves: a new signature's row exists
        store.set_cursor(learned.source, learned.cursor)
        if learned.source_state is not None:
            store.set_source_state(learned.source, learned.source_state)
        store.forget_seen_before(learned.forget_before)
        store.record_run(
            RunRecord(
                id=learned.run_id,
                started_at=iso(learned.now),
                finished_at=iso(datetime.now(UTC)),
                source=learned.source,
                status="ok",
                plans={p.signature_id: p.kind for p in learned.plans},
            )
        )


def _saved(learned: Learned) -> Iterator[Signature]:
    """Every signature the round touched, as saved: each planned one (filed under its issue when it has one)
    in the order of the plans, then the others in the order they were tallied. Made as they are saved (a
    batch at a time, `Store.save_many`): a signature filed under its issue is a copy, and a round saving
    thousands never holds them all."""
    planned = {plan.signature_id for plan in learned.plans}
    for plan in learned.plans:
        signature = learned.signatures[plan.signature_id]
        yield signature.filed_as(plan.issue.ref) if plan.issue is not None else signature
    yield from (learned.signatures[sid] for sid in learned.tallies if sid not in planned)


def _log_events(store: Store, learned: Learned, plan: IssuePlan) -> None:
    sid, run, at = plan.signature_id, learned.run_id, learned.now
    count = plan.tally.count if plan.tally else 0
    if plan.kind in ("new", "deferred", "held"):
        store.append_event(Fact.INCIDENT_DETECTED, f"detected:{sid}", signature_id=sid, run_id=run, at=at)
    if plan.issue is not None:
        store.append_event(
            Fact.ISSUE_FILED,
            f"filed:{sid}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"issue": plan.issue.ref},
        )
    if plan.kind == "regressed":
        store.append_event(
            Fact.REGRESSED,
            f"regressed:{sid}:{run}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"count": count, **({"reason": plan.reason} if plan.reason else {})},
        )
    if plan.kind in ("updated", "muted", "regressed") and count:
        store.append_event(
            Fact.UPDATED,
            f"updated:{sid}:{run}",
            signature_id=sid,
            run_id=run,
            at=at,
            payload={"count": count},
        )


def forget_before(cursor: datetime, overlap_seconds: int) -> datetime:
    """Occurrence ids older than the next window's start can never be read again."""
    return cursor - timedelta(seconds=overlap_seconds)
