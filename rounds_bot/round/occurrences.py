"""The round's grouping step: every occurrence not counted before fingerprinted and tallied (the poll was
redacted at the boundary, `redact.boundary.redact_poll`, before it got here).

engine  = load_engine(settings, store)          the grouping engine as the last round left it
grouped = group_occurrences(...)                a Tally per signature, and what was already counted
                                                (by id; for a signature rebuilt from its issue, by time)
states  = states_after(engine, tallies)          the engine's state of each signature the round saw; the
                                                engine is let go as they are read
after   = signatures_after(...)                 each touched signature as it will be after this round
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import numpy

from rounds_bot.controls import Controls
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.placement import MessageFacts, Placement
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ErrorEvent, sharing_fields_set
from rounds_bot.round.cascade import TraceErrors
from rounds_bot.round.counted import Counted
from rounds_bot.round.propagated import Enclosures, enclosing_records
from rounds_bot.round.spilled import SpilledBlobs
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.id_set import IdSet
from rounds_bot.sources.spill import EventSpill, Picked, keys_of
from rounds_bot.sources.spill_chunk import BLANK_TRACE
from rounds_bot.store import Store
from rounds_bot.tally import Samples, Tally


@dataclass(frozen=True)
class Grouped:
    """What the grouping step found: a tally per signature, in the order signatures were first seen."""

    tallies: dict[str, Tally]
    already_counted: int
    tier_counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # the counted errors that have a trace, for the cascade step (`cascade.cascades_of`)
    traces: TraceErrors = field(default_factory=TraceErrors)
    # every occurrence counted, for the commit to remember (`Store.mark_seen_stored`)
    counted: Counted = field(default_factory=Counted)


def load_engine(settings: Settings, store: Store) -> GroupingEngine:
    """The engine, reading known signatures from the store as the round's events need them."""
    # unchanged while used: a round writes nothing to the store before its commit (`round/run.py`: the
    # commit is one transaction after the engine is dropped), so a store found empty here stays empty for
    # the engine's whole life, and its look-ups answer "nothing known" without asking
    lookup = store.grouping_lookup(unchanged_while_used=True)
    return GroupingEngine(settings.grouping_config(), lookup=lookup)


def group_occurrences(
    store: Store, engine: GroupingEngine, controls: Controls, window: Window, polled: PollResult
) -> Grouped:
    """Fingerprint every occurrence not counted before; known backend groups are counted without grouping."""
    counted_through = store.counted_through()
    picked = _not_counted(store, window, polled)
    grouped = _grouped(store, engine, controls, polled, picked, counted_through)
    # a deploy within the batch that first found an earlier reading's signature: placed again, that
    # signature registered ahead under its hashes (`GroupingEngine.place_again`; nearly never)
    while engine.place_again():
        grouped.counted.close()
        grouped = _grouped(store, engine, controls, polled, picked, counted_through)
    return grouped


@dataclass(frozen=True)
class NotCounted:
    """What `_not_counted` found: the events to group, how many were counted already, the events with a
    trace left out, and the new events another of their trace encloses (their indexes in the poll, ascending;
    `round/propagated.py`), with the round's enclosures."""

    to_group: Picked
    already_counted: int
    others: EventSpill
    enclosed: array[int] = field(default_factory=lambda: array("q"))
    enclosures: Enclosures | None = None


def _grouped(
    store: Store,
    engine: GroupingEngine,
    controls: Controls,
    polled: PollResult,
    picked: NotCounted,
    counted_through: dict[str, datetime],
) -> Grouped:
    """`group_occurrences` of the events to group, the engine placing them as one batch; then each new event
    another encloses, counted as the occurrence of its outermost encloser (not tallied again)."""
    to_group, already_counted, others = picked.to_group, picked.already_counted, picked.others
    outers = _Outers(picked, to_group)
    tallies: dict[str, Tally] = {}
    tier_counts: dict[str, int] = {}
    # every tally's samples past its first wait in one file: read only for the signatures diagnosed
    samples = SpilledBlobs("rounds-samples-")
    traces, counted = TraceErrors(), Counted()
    other_ids = {_compact(event.event_id) for event in others}
    signature_of_other: dict[int | str, str] = {}
    # one batch, so the partition does not depend on the order the events arrived in
    # an event of a signature tallied already needs no assignment of its own: only the first is kept
    placements = engine.place_each(to_group, tallies, _message_facts(to_group))
    # bound once: the loop runs once per occurrence counted
    count_it, count_at, trace_it = counted.append, counted.append_at, traces.add
    merged = bool(controls.merges)
    for position, (event, placed) in enumerate(zip(to_group, placements, strict=True)):
        tier_counts[placed.tier] = tier_counts.get(placed.tier, 0) + 1
        if merged:
            signature_id, assignment = _follow_merge(store, controls, placed)
        else:  # what `_follow_merge` gives when no signature was merged into another
            signature_id, assignment = placed.signature_id, placed.assignment
        if position == outers.next_position:
            outers.counted_in(signature_id)
        if counted_through and _in_rebuilt_total(counted_through, signature_id, event):
            already_counted += 1
            continue
        tally = tallies.get(signature_id)
        if tally is None:
            if assignment is None:  # (`place_each` leaves it out only for a signature in `tallies`)
                raise AssertionError(f"{signature_id} was placed without an assignment and is not tallied")
            tally = tallies[signature_id] = Tally(assignment, samples=Samples(samples))
        # its moment in microseconds, worked out once for the tally, the ids counted and the traces
        moment = event.timestamp
        micros = tally.add(event, event.count, moment, moment)
        if micros is None:  # (a moment not in UTC: each keeps it its own way)
            count_it(event.event_id, signature_id, moment)
        else:
            count_at(event.event_id, signature_id, micros)
        trace_it(event, signature_id, micros)
        if other_ids and (key := _compact(event.event_id)) in other_ids:
            signature_of_other[key] = signature_id
    # a record read twice, or also before the window, is in its trace as often as it was read
    for event in others:
        other_in = signature_of_other.get(_compact(event.event_id))
        if other_in is not None:
            traces.add(event, other_in)
    notes = _count_known_groups(store, controls, polled, tallies, samples)
    if picked.enclosed:
        _count_enclosed(engine, controls, polled, picked, outers, counted)
        notes.append(_enclosed_note(len(picked.enclosed)))
    return Grouped(tallies, already_counted, tier_counts, notes, traces, counted)


class _Outers:
    """The outermost enclosers of the new events enclosed (their indexes in the poll, ascending) and the
    signature each is counted in, noted as the grouping loop reaches it: `next_position` is the loop's
    position of the next one it reaches (-1 when none is left), so the loop tests one int per event."""

    _indexes: numpy.ndarray
    _signatures: list[str]
    _positions: list[int]  # the loop's position of each encloser grouped this round, ascending
    _slots: list[int]  # the place in `_indexes` of the encloser at each of those positions

    def __init__(self, picked: NotCounted, to_group: Picked) -> None:
        self._reached, self.next_position = 0, -1
        if picked.enclosures is None or not picked.enclosed:  # (the usual round: nothing more to do)
            self._indexes, self._signatures, self._positions, self._slots = numpy.zeros(0), [], [], []
            return
        self._indexes = numpy.unique(picked.enclosures.outers_of(picked.enclosed))
        self._signatures = [""] * len(self._indexes)
        grouped = numpy.frombuffer(to_group.indexes, dtype=numpy.int64)
        at = numpy.searchsorted(grouped, self._indexes)
        found = at < len(grouped)
        found[found] = grouped[at[found]] == self._indexes[found]
        self._positions = at[found].tolist()
        self._slots = numpy.flatnonzero(found).tolist()
        self.next_position = self._positions[0] if self._positions else -1

    def counted_in(self, signature_id: str) -> None:
        """The encloser at `next_position` was counted in `signature_id`."""
        self._signatures[self._slots[self._reached]] = signature_id
        self._reached += 1
        self.next_position = self._positions[self._reached] if self._reached < len(self._positions) else -1

    def signature_of(self, index: int) -> str:
        """The signature the encloser at `index` of the poll was counted in ("" when it was not grouped)."""
        return self._signatures[int(numpy.searchsorted(self._indexes, index))]

    def settle(self, index: int, signature_id: str) -> None:
        """The signature of an encloser not grouped this round, once found."""
        self._signatures[int(numpy.searchsorted(self._indexes, index))] = signature_id


def _count_enclosed(
    engine: GroupingEngine,
    controls: Controls,
    polled: PollResult,
    picked: NotCounted,
    outers: _Outers,
    counted: Counted,
) -> None:
    """Each event enclosed, remembered as counted in its encloser's signature: one occurrence, counted once
    (by its encloser). An encloser counted in an earlier round (read again in the overlap) is placed again
    to find its signature (nearly never). The events enclosed are read by one pass over the poll."""
    assert picked.enclosures is not None  # (there are events enclosed)
    enclosers = picked.enclosures.outers_of(picked.enclosed).tolist()
    facts = Picked(polled.events, picked.enclosed).fields("event_id", "timestamp")
    for (event_id, moment), outer in zip(facts, enclosers, strict=True):
        signature_id = outers.signature_of(outer)
        if not signature_id:
            signature_id = controls.target_of(engine.assign(polled.events[outer]).signature_id)
            outers.settle(outer, signature_id)
        counted.append(event_id, signature_id, moment)


def _enclosed_note(count: int) -> str:
    records = "record was" if count == 1 else "records were"
    return (
        f"{count} {records} an error recorded again (by a span it escaped, by a log record, or wrapped in "
        "its caller's message) in the same trace and service: each counted once, as the record enclosing it"
    )


#: ids asked about in one database query
SEEN_BATCH = 2_000


def _not_counted(store: Store, window: Window, polled: PollResult) -> NotCounted:
    """The events to group (in the window, not counted before, each id once), and how many were counted: by
    the source, as older than the window, or by their id. Read once, by their keys (id, time, trace), in
    batches: the events need not all be in memory nor be read back, and those to group are picked from the
    poll's by index, not copied. Last, the events with a trace left out as older than the window or as read
    already this round: if their id is counted now, their trace shows them too (usually there are none); and
    the new events another of their trace encloses, left out of those to group (`round/propagated.py`)."""
    events = polled.events
    already_counted = polled.already_counted
    to_group, others = Picked(events), EventSpill()
    # the ids read this round, most of them packed (`IdSet`): not a Python object per occurrence counted
    seen_now = IdSet()
    batch: list[tuple[int, str, str | None]] = []
    # nothing stored (a first round): no id is asked about; the store does not change while grouping
    stored_any = store.any_seen()
    # the events another of their trace encloses (`round/propagated.py`): the new ones are counted as it
    enclosures = enclosing_records(events)
    marks = enclosures.marks(len(events)) if len(enclosures) else None
    enclosed = array("q")

    def take(batch: list[tuple[int, str, str | None]]) -> int:
        already = store.seen(event_id for _, event_id, _ in batch) if stored_any else frozenset()
        counted, first = 0, seen_now.first
        for index, event_id, trace_id in batch:
            # an id counted before is not added to those read now: only an id new to both is `first`
            if event_id in already or not first(_compact(event_id)):
                counted += 1
                if trace_id and event_id not in already:
                    others.append(events[index])
                continue
            if marks is not None and marks[index]:
                enclosed.append(index)
                continue
            to_group.append(index)
        return counted

    start = window.start
    for index, (event_id, timestamp, trace_id) in enumerate(keys_of(events)):
        if timestamp < start:
            already_counted += (
                1  # the source may have recognised some as counted already, from the raw record
            )
            if trace_id:
                others.append(events[index])
            continue
        batch.append((index, event_id, trace_id))
        if len(batch) >= SEEN_BATCH:
            already_counted += take(batch)
            batch = []
    already_counted += take(batch)
    return NotCounted(to_group, already_counted, others, enclosed, enclosures)


_HEX_ID = re.compile(r"[0-9a-f]{32}")


#: what the counting pass reads of an event, its trace only when blank (`BLANK_TRACE`), and where that is
_FACTS = tuple(BLANK_TRACE if name == "stacktrace" else name for name in MessageFacts._fields)
_TRACE = MessageFacts._fields.index("stacktrace")


def _message_facts(events: Picked) -> Iterator[MessageFacts]:
    """The fields the engine's counting pass reads, without making the events (`Picked.fields`), of the
    events it counts: it skips an event with a trace to read (most of a round's), so those are left out,
    and no trace is read back (a blank one is the event's own, None or white space, as the pass tells
    them apart)."""
    return (MessageFacts._make(facts) for facts in events.fields(*_FACTS) if facts[_TRACE] is not False)


def _compact(event_id: str) -> int | str:
    """An id as a set keeps it: 32 hex digits (the usual id) as the number they spell, half the memory."""
    return int(event_id, 16) if _HEX_ID.fullmatch(event_id) else event_id


def _in_rebuilt_total(counted_through: dict[str, datetime], signature_id: str, event: ErrorEvent) -> bool:
    """A signature rebuilt from its issue took its total from the marker, which counted every occurrence up
    to its last_seen; the ids that made it are lost, so the moment stands in for them."""
    through = counted_through.get(signature_id)
    return through is not None and event.timestamp <= through


def _count_known_groups(
    store: Store, controls: Controls, polled: PollResult, tallies: dict[str, Tally], samples: SpilledBlobs
) -> list[str]:
    """Backend groups already mapped to a signature arrive as counts: added without grouping."""
    notes: list[str] = []
    group_map = store.group_map()
    for group in polled.known_group_counts:
        signature_id = group_map.get(group.source_group_id)
        signature_id = controls.target_of(signature_id) if signature_id else None
        known = store.signature(signature_id) if signature_id else None
        if known is None:
            notes.append(f"group {group.source_group_id} is mapped to an unknown signature; ignored")
            continue
        if known.id not in tallies:
            tallies[known.id] = Tally(_assignment_of(known), samples=Samples(samples))
        stand_in = ErrorEvent(
            event_id=f"group:{group.source_group_id}", timestamp=group.last_seen, service=group.service
        )
        tallies[known.id].add(stand_in, group.count, group.first_seen, group.last_seen)
    return notes


def states_after(engine: GroupingEngine, tallies: dict[str, Tally]) -> dict[str, SignatureState]:
    """The engine's state of each signature the round saw, for `signatures_after`, read as the engine is let
    go (`GroupingEngine.released_states`): its memos (the most a round holds) are freed first, and what each
    signature's state is built from as it is, so the states take that memory rather than adding to it; the
    engine places nothing more. A known signature the engine never loaded this round (counted through a
    merge or a backend group) has none here: it keeps the state it had. Each is kept to the round's end (in
    its signature): the set of its given fields is shared (`sharing_fields_set`)."""
    released = engine.released_states(tallies)
    return {signature_id: sharing_fields_set(state) for signature_id, state in released}


def signatures_after(
    store: Store, states: dict[str, SignatureState], tallies: dict[str, Tally], *, run_id: str, now: datetime
) -> dict[str, Signature]:
    """Each signature the round saw, as it will be after the round (nothing is written here), with the
    engine's state of it (`states_after`)."""
    after: dict[str, Signature] = {}
    for signature_id, tally in tallies.items():
        known = store.signature(signature_id)
        if known is None:
            after[signature_id] = Signature.first(tally, states[signature_id], run_id=run_id, now=now)
        else:
            state = states.get(signature_id, known.grouping_state)
            after[signature_id] = known.absorb(tally, state, now=now)
    return after


def _follow_merge(store: Store, controls: Controls, placed: Placement) -> tuple[str, Assignment | None]:
    """A signature merged into another (`/rounds merge`) counts its occurrences there: the signature an
    event is counted in, and the assignment a tally of it starts with (None when the engine left it out)."""
    target = controls.target_of(placed.signature_id)
    known = store.signature(target) if target != placed.signature_id else None
    return (
        (known.id, _assignment_of(known)) if known is not None else (placed.signature_id, placed.assignment)
    )


def _assignment_of(signature: Signature) -> Assignment:
    return Assignment(
        signature_id=signature.id,
        tier="fingerprint",
        fingerprint_hash=signature.fingerprint_hash,
        fingerprint_version=signature.fingerprint_version,
        explanation=signature.explanation,
        title=signature.title,
        normalized_message=signature.normalized_message,
    )
