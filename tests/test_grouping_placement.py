"""A round's placements (`GroupingEngine.place_each`) are the assignments' signatures and tiers: an event
of a signature the caller keeps already is placed by its error code or its trace's hashes without its
assignment, and every other event gets the very assignment `assign_each` gives it."""

from __future__ import annotations

from pathlib import Path

from test_grouping_corpus import EVENTS
from test_grouping_labelled_data import defects4j, trace_events

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.placement import MessageFacts, Placement
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.store import Store


def placed_as_a_round(engine: GroupingEngine, events: list[ErrorEvent]) -> list[Placement]:
    """The placements with the first assignment of each signature kept, as a round's tally keeps it."""
    kept: dict[str, Assignment] = {}
    placements = []
    for placed in engine.place_each(events, kept):
        if placed.assignment is not None:
            kept.setdefault(placed.signature_id, placed.assignment)
        placements.append(placed)
    return placements


def assert_placed_as_assigned(events: list[ErrorEvent], slow: GroupingEngine, fast: GroupingEngine) -> int:
    """Each placement is the assignment's signature and tier, with the assignment itself when given; the
    events placed without one (how many is returned)."""
    assignments = list(slow.assign_each(events))
    placements = placed_as_a_round(fast, events)
    for assignment, placed in zip(assignments, placements, strict=True):
        assert (placed.signature_id, placed.tier) == (assignment.signature_id, assignment.tier)
        assert placed.assignment is None or placed.assignment == assignment
    states = {s: slow.state(s) for s in slow.signature_ids()}
    assert states == {s: fast.state(s) for s in fast.signature_ids()}  # the engines keep the same
    return sum(placed.assignment is None for placed in placements)


def test_the_corpus_is_placed_as_it_is_assigned_and_its_repeats_without_an_assignment() -> None:
    events = EVENTS + EVENTS  # seen again: most are then known by their error code or trace
    without = assert_placed_as_assigned(events, GroupingEngine(), GroupingEngine())
    assert without > len(EVENTS) // 3


def test_a_round_engine_reading_a_database_places_the_corpus_as_it_assigns_it(tmp_path: Path) -> None:
    slow = GroupingEngine(lookup=Store.open(tmp_path / "slow.db").grouping_lookup())
    fast = GroupingEngine(lookup=Store.open(tmp_path / "fast.db").grouping_lookup())
    assert assert_placed_as_assigned(EVENTS, slow, fast) > 0


def test_real_java_traces_are_placed_as_they_are_assigned(shared_data: Path) -> None:
    events = trace_events(defects4j(shared_data))
    events = events + events  # seen again: every trace is then known by its hashes
    assert assert_placed_as_assigned(events, GroupingEngine(), GroupingEngine()) > len(events) // 4


def test_an_event_of_a_signature_not_kept_gets_its_assignment() -> None:
    engine = GroupingEngine()
    placements = list(engine.place_each(EVENTS, {}))
    assert all(placed.assignment is not None for placed in placements)


def test_the_counting_pass_reads_the_same_from_an_events_fields_as_from_the_event() -> None:
    """A round gives the engine's counting pass the fields it reads (`MessageFacts`, read from the spill
    without making the events); the placements and the engine's states are those the events give."""
    events = EVENTS + EVENTS
    facts = [MessageFacts._make(getattr(event, name) for name in MessageFacts._fields) for event in events]
    by_events, by_facts = GroupingEngine(), GroupingEngine()
    assert list(by_events.place_each(events, {})) == list(by_facts.place_each(events, {}, facts))
    states = {s: by_events.state(s) for s in by_events.signature_ids()}
    assert states == {s: by_facts.state(s) for s in by_facts.signature_ids()}
    assert sum(fact.stacktrace is None and not fact.error_code for fact in facts) > 10  # lines it counts
