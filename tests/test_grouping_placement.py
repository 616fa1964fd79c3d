"""A round's placements (`GroupingEngine.place_each`) are the assignments' signatures and tiers: an event
of a signature the caller keeps already is placed by its error code or its trace's hashes without its
assignment, and every other event gets the very assignment `assign_each` gives it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from test_grouping_corpus import EVENTS
from test_grouping_labelled_data import defects4j, log_events, loghub, trace_events

from rounds_bot.grouping import placement as placement_module
from rounds_bot.grouping import templates as templates_module
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


def test_repeats_share_one_placement_and_are_placed_alike_when_the_kept_ones_are_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A repeat placed without an assignment gets the one placement kept for its signature and tier
    (`placement.KeptPlacements`); with room for a single one (forgotten at every other signature), the
    placements are the same."""
    events = EVENTS + EVENTS
    kept = placed_as_a_round(GroupingEngine(), events)
    repeats = [placed for placed in kept if placed.assignment is None]
    assert len({id(placed) for placed in repeats}) == len({(p.signature_id, p.tier) for p in repeats})
    monkeypatch.setattr(placement_module, "PLACEMENTS_KEPT", 1)
    assert placed_as_a_round(GroupingEngine(), events) == kept


def test_a_skeleton_whose_keys_were_fetched_asks_the_database_nothing_more(tmp_path: Path) -> None:
    """The miner fetches the keys of a skeleton once (`TemplateMiner._fetch_for`): its repeats build no keys
    and ask for none; an engine that forgets which skeletons it fetched (room for one) asks for no more keys
    and places the events alike."""
    asked: list[list[str]] = []

    def engine(path: Path) -> GroupingEngine:
        found = GroupingEngine(lookup=Store.open(path).grouping_lookup())
        registry_fetch = found._known_signatures.fetch

        def fetch(keys: list[str]) -> bool:
            asked.append(keys)
            return registry_fetch(keys)

        found._miner.fetch = fetch
        return found

    events = [event for event in EVENTS if event.stacktrace is None and not event.error_code]
    assert len(events) > 10
    first = placed_as_a_round(engine(tmp_path / "a.db"), events + events)
    fetched = len(asked)
    assert fetched > 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(templates_module, "FETCHED_SKELETONS", 1)
        asked.clear()
        assert placed_as_a_round(engine(tmp_path / "b.db"), events + events) == first
        assert len(asked) == fetched


def message_events(data: Path) -> list[ErrorEvent]:
    """Real log lines of a few systems, each also as a failed span's message (some with an operation target,
    some with an error code among their attributes), in a shuffled order."""
    events: list[ErrorEvent] = []
    for system in ("HDFS", "Zookeeper", "OpenStack"):
        lines = log_events(system, loghub(data, system)[0][:600])
        events += lines
        for number, line in enumerate(lines[::3]):
            attributes: dict[str, str] = {"server.address": f"db{number % 4}"} if number % 5 else {}
            if number % 7 == 0:
                attributes["error.code"] = f"E{number % 3}"
            events.append(
                line.model_copy(
                    update={"event_id": f"span-{number}", "kind": "span_error", "attributes": attributes}
                )
            )
    random.Random(26).shuffle(events)
    return events


def test_log_lines_and_failed_spans_are_placed_as_they_are_assigned_by_their_routes(
    shared_data: Path, tmp_path: Path
) -> None:
    """A message whose template's route is known is placed by it without an assignment, as `assign` would
    place it; an engine that may know an earlier version's signatures reads such a message as `assign` does
    (the earlier reading first), and places it alike."""
    events = message_events(shared_data)
    without = assert_placed_as_assigned(events, GroupingEngine(), GroupingEngine())
    assert without > len(events) // 2
    slow = GroupingEngine(lookup=Store.open(tmp_path / "slow.db").grouping_lookup())
    fast = GroupingEngine(lookup=Store.open(tmp_path / "fast.db").grouping_lookup())
    assert assert_placed_as_assigned(events, slow, fast) > 0


def test_a_message_routed_anew_as_it_is_placed_gets_no_assignment_when_its_signature_is_kept() -> None:
    """Each new shape of a log statement (its values' digits differ in number) has no route yet: its template
    is matched as it is placed, and when the template leads to a kept signature the message is placed by it
    without an assignment; the placements are the assignments' signatures and tiers, and the engines keep
    the same."""
    rng = random.Random(7)
    events = [
        ErrorEvent(
            event_id=f"line-{number}",
            timestamp=EVENTS[0].timestamp,
            service=rng.choice(("cart", "billing")),
            kind=rng.choice(("log", "span_error")),
            message=rng.choice(("cart {} is empty after {} tries", "invoice {} was sent to {} twice")).format(
                rng.randrange(10 ** rng.randrange(1, 12)), rng.randrange(10 ** rng.randrange(1, 12))
            ),
        )
        for number in range(400)
    ]
    fast = GroupingEngine()
    without = assert_placed_as_assigned(events, GroupingEngine(), fast)
    assert without == len(events) - len(fast.signature_ids())  # only a signature's first has one
    assert len({re.sub("[0-9]", "0", event.message) for event in events}) > 50  # shapes, each routed anew
