"""A round over a database that holds nothing to look up (a first round) groups without asking it: the engine
places every event as one asking the empty database does, and a database with anything in it is asked."""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database
from test_grouping_corpus import EVENTS
from test_grouping_labelled_data import defects4j, trace_events
from test_grouping_placement import placed_as_a_round
from test_grouping_store import essence, saved, stream

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.round.occurrences import load_engine
from rounds_bot.settings import Settings
from rounds_bot.store import Store


def statements_while(store: Store, engine: GroupingEngine, events: list) -> tuple[list[tuple], list[str]]:
    """The engine's assignments of `events` (their essence) and the statements the database ran meanwhile."""
    ran: list[str] = []
    store.db.conn.set_trace_callback(ran.append)
    try:
        found = [essence(assignment) for assignment in engine.assign_each(events)]
    finally:
        store.db.conn.set_trace_callback(None)
    return found, ran


def test_an_empty_store_groups_as_asked_and_without_a_query() -> None:
    events = EVENTS + stream(5, 300) + EVENTS
    asked, quiet = Store.memory(), Store.memory()
    assert quiet.holds_nothing_to_look_up()
    slow = GroupingEngine(lookup=asked.grouping_lookup())
    fast = load_engine(Settings(), quiet)
    slow_found, slow_ran = statements_while(asked, slow, events)
    fast_found, fast_ran = statements_while(quiet, fast, events)
    assert fast_found == slow_found
    assert {s: fast.state(s) for s in fast.signature_ids()} == {
        s: slow.state(s) for s in slow.signature_ids()
    }
    assert slow_ran and not [text for text in fast_ran if "grouping_keys" in text or "signatures" in text]


def test_a_second_round_reads_the_stored_signatures(fresh_db: Store) -> None:
    events = stream(3, 400)
    first = GroupingEngine()
    for item in events[:200]:
        first.assign(item)
    saved(first, fresh_db)
    assert not fresh_db.holds_nothing_to_look_up()
    second = load_engine(Settings(), fresh_db)
    found, ran = statements_while(fresh_db, second, events[200:])
    assert found == [essence(first.assign(item)) for item in events[200:]]
    assert any("grouping_keys" in text for text in ran)


def test_a_row_in_any_table_the_lookup_reads_is_something_to_look_up(fresh_db: Store) -> None:
    db: Database = fresh_db.db
    rows = {
        "grouping_keys": {"key": "h:x", "signature_id": "s"},
        "grouping_vectors": {"signature_id": "s", "service": "a", "seq": 0, "packed": "", "with_frames": 0},
    }
    for table, row in rows.items():
        db[table].insert(row)
        assert not fresh_db.holds_nothing_to_look_up(), table
        db[table].delete_where()
        assert fresh_db.holds_nothing_to_look_up()
    saved_one = GroupingEngine()
    saved_one.assign(EVENTS[0])
    saved(saved_one, fresh_db)
    assert not fresh_db.holds_nothing_to_look_up()


def test_an_empty_store_places_as_asked_without_reading_traces_as_earlier_versions(shared_data: Path) -> None:
    """No signature of an earlier fingerprint version can be found in a database that holds nothing (and is
    not written meanwhile), so its engine neither works out a trace's hashes of those versions nor reads a
    message as they did: it places real traces, the corpus and a stream of repeats as an engine asking the
    empty database does (the same signatures and tiers, the same assignments where both give one), and saves
    the same signatures."""
    events = trace_events(defects4j(shared_data)) + EVENTS + stream(7, 300) + EVENTS
    asked, quiet = Store.memory(), Store.memory()
    slow = GroupingEngine(lookup=asked.grouping_lookup())
    fast = load_engine(Settings(), quiet)
    assert slow._candidates.previous_versions and not fast._candidates.previous_versions
    for quick, asking in zip(placed_as_a_round(fast, events), placed_as_a_round(slow, events), strict=True):
        assert (quick.signature_id, quick.tier) == (asking.signature_id, asking.tier)
        assert None in (quick.assignment, asking.assignment) or quick.assignment == asking.assignment
    assert {s: fast.state(s) for s in fast.signature_ids()} == {
        s: slow.state(s) for s in slow.signature_ids()
    }
