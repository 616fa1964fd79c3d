"""The round's engine reads known signatures from the database as its events need them."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

from sqlite_utils import Database

from rounds_bot.grouping.engine import GroupingConfig, GroupingEngine
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.store import Store
from rounds_bot.store.schema import MIGRATIONS
from rounds_bot.store.signatures import to_row
from tests.signature_samples import a_signature

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"


def stream(seed: int, count: int) -> list[ErrorEvent]:
    rng = random.Random(seed)
    traces = [
        (TRACES / f"{name}.txt").read_text() for name in ("java_caused_by", "python_context", "go_panic")
    ]
    makers = [
        lambda: {
            "service": "auth",
            "message": f"session opened for user {rng.choice(['ann', 'bo'])} by (uid=0)",
        },
        lambda: {
            "service": "auth",
            "message": f"authentication failure; rhost=h{rng.randrange(9)} user=root",
        },
        lambda: {"service": "auth", "message": f"session closed for user {rng.choice(['cy', 'di', 'ed'])}"},
        lambda: {"service": "pay", "message": "card declined", "error_code": rng.choice(["E1", "E2"])},
        lambda: {"service": "shop", "stacktrace": rng.choice(traces), "message": f"cart {rng.randrange(99)}"},
    ]
    return [ErrorEvent(event_id=str(n), timestamp=EPOCH, **rng.choice(makers)()) for n in range(count)]


def essence(assignment: Assignment) -> tuple[object, ...]:
    return (assignment.signature_id, assignment.tier, assignment.related, assignment.explanation)


def saved(engine: GroupingEngine, store: Store) -> list[SignatureState]:
    states = [engine.state(s) for s in engine.signature_ids()]
    with store.transaction():
        for state in states:
            store.save(a_signature(state.signature_id, service=state.service, grouping_state=state))
    return states


def test_a_store_backed_engine_answers_as_one_given_every_signature(fresh_db: Store) -> None:
    events = stream(3, 400)
    original = GroupingEngine()
    for item in events[:200]:
        original.assign(item)
    states = saved(original, fresh_db)
    given = GroupingEngine(known=states)
    looked_up = GroupingEngine(lookup=fresh_db.grouping_lookup())
    for item in events[200:]:
        expected = essence(original.assign(item))
        assert essence(given.assign(item)) == expected
        assert essence(looked_up.assign(item)) == expected


def test_a_quiet_round_reads_only_the_signatures_its_events_point_at(fresh_db: Store) -> None:
    original = GroupingEngine()
    for item in stream(4, 300):
        original.assign(item)
    states = saved(original, fresh_db)
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup())
    again = engine.assign(ErrorEvent(event_id="q", timestamp=EPOCH, service="pay", error_code="E1"))
    assert again.tier == "error_code"
    assert engine.signature_ids() == [again.signature_id] and len(states) > 1


def test_new_signatures_are_numbered_after_every_stored_one(fresh_db: Store) -> None:
    original = GroupingEngine()
    for item in stream(5, 100):
        original.assign(item)
    states = saved(original, fresh_db)
    engine = GroupingEngine(lookup=fresh_db.grouping_lookup())
    fresh = engine.assign(ErrorEvent(event_id="n", timestamp=EPOCH, service="new", message="disk on fire"))
    assert engine.state(fresh.signature_id).seq == max(s.seq for s in states) + 1


def test_the_lookup_keys_follow_a_saved_signature(fresh_db: Store) -> None:
    engine = GroupingEngine()
    first = engine.assign(ErrorEvent(event_id="a", timestamp=EPOCH, service="pay", error_code="E9"))
    saved(engine, fresh_db)
    lookup = fresh_db.grouping_lookup()
    assert [s.signature_id for s in lookup.find(["c:pay\x1fE9"])] == [first.signature_id]
    with fresh_db.transaction():
        fresh_db.save(a_signature(first.signature_id, service="pay", grouping_state=None))
    assert lookup.find(["c:pay\x1fE9"]) == []


def test_a_database_from_before_the_lookup_table_is_filed_when_it_is_migrated() -> None:
    engine = GroupingEngine()
    first = engine.assign(ErrorEvent(event_id="a", timestamp=EPOCH, service="pay", error_code="E9"))
    db = Database(memory=True)
    for migration in MIGRATIONS[:3]:
        migration(db)
    db.table("meta").insert({"key": "schema_version", "value": "3"})
    signature = a_signature(
        first.signature_id, service="pay", grouping_state=engine.state(first.signature_id)
    )
    row = to_row(signature)
    del row["counted_through"]  # a column of a later schema
    db.table("signatures").insert(row)
    store = Store(db, ":memory:")
    store.migrate()
    found = GroupingEngine(lookup=store.grouping_lookup()).assign(
        ErrorEvent(event_id="b", timestamp=EPOCH, service="pay", error_code="E9")
    )
    assert (found.tier, found.signature_id) == ("error_code", first.signature_id)


def java_trace(top: str, caller: str = "ui.Zoom.apply") -> str:
    return (
        f"java.lang.NullPointerException: range of {top} is null\n"
        f"\tat com.acme.chart.plot.XYPlot.{top}(XYPlot.java:10)\n"
        "\tat com.acme.chart.axis.NumberAxis.autoAdjustRange(NumberAxis.java:20)\n"
        "\tat com.acme.chart.axis.NumberAxis.configure(NumberAxis.java:30)\n"
        f"\tat com.acme.chart.{caller}(Caller.java:40)\n"
    )


def test_tier_3_reads_a_services_vectors_and_loads_only_the_signature_an_error_joins(fresh_db: Store) -> None:
    # another exception type at m7's crash site: no fingerprint or site of it is known, and its
    # text is alike (0.59) to m7's: a threshold just below joins them by similarity
    config = GroupingConfig(merge_threshold=0.55)
    original = GroupingEngine(config)
    for n in range(40):
        original.assign(
            ErrorEvent(event_id=str(n), timestamp=EPOCH, service="chart", stacktrace=java_trace(f"m{n}"))
        )
    saved(original, fresh_db)
    engine = GroupingEngine(config, lookup=fresh_db.grouping_lookup())
    rerouted = java_trace("m7", caller="export.Png.write").replace(
        "NullPointerException", "IllegalStateException"
    )
    joined = engine.assign(ErrorEvent(event_id="j", timestamp=EPOCH, service="chart", stacktrace=rerouted))
    expected = original.assign(
        ErrorEvent(event_id="j", timestamp=EPOCH, service="chart", stacktrace=rerouted)
    )
    assert (joined.tier, joined.signature_id) == ("similarity", expected.signature_id)
    assert engine.signature_ids() == [joined.signature_id]
