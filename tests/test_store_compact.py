"""The database's compact tables: counted occurrence ids in their smallest exact form, keys stored once, and a
database of the form before (schema 9) migrated to them with nothing lost."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from signature_samples import a_signature
from sqlite_utils import Database

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import ErrorEvent
from rounds_bot.store import Store
from rounds_bot.store.schema import MIGRATIONS
from rounds_bot.store.seen import microseconds, stored_id

NOW = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
SPAN_ID = "67d82d4099267421"
EVENT_ID = "acf21162562090a66000ce55bbbeb861"
# ids that are not lowercase hexadecimal of whole bytes stay text
OTHER_IDS = (
    "evt-1",
    "ABCDEF",
    "abc",
    "sha256:9f86d081884c",
    "",
    "ab cd",
    " ab",
    "ab\n",
    "0A",
    "log:checkout:7",
)


def test_a_lowercase_hexadecimal_id_is_stored_as_its_bytes_any_other_as_its_text() -> None:
    assert stored_id(EVENT_ID) == bytes.fromhex(EVENT_ID)
    assert stored_id(SPAN_ID) == bytes.fromhex(SPAN_ID)
    assert [stored_id(other) for other in OTHER_IDS] == list(OTHER_IDS)


def test_an_id_is_found_whichever_form_it_is_stored_in_and_never_by_the_other(fresh_db: Store) -> None:
    # "ab" is stored as the byte 0xab; a text id can never be equal to it
    ids = [EVENT_ID, SPAN_ID, "ab", *OTHER_IDS]
    with fresh_db.transaction():
        fresh_db.mark_seen((event_id, "s1", NOW) for event_id in ids)
    assert fresh_db.seen([*ids, "AB", "0xab", EVENT_ID.upper(), "cd"]) == set(ids)


def test_forgetting_keeps_an_id_seen_at_the_moment_itself_and_drops_one_a_microsecond_before(
    fresh_db: Store,
) -> None:
    moment = NOW + timedelta(minutes=30)
    with fresh_db.transaction():
        fresh_db.mark_seen(
            [("a1", "s1", moment - timedelta(microseconds=1)), ("a2", "s1", moment), ("a3", "s1", NOW)]
        )
        fresh_db.forget_seen_before(moment)
    assert fresh_db.seen(["a1", "a2", "a3"]) == {"a2"}


def test_a_time_in_another_zone_is_the_same_moment() -> None:
    elsewhere = NOW.astimezone(datetime.fromisoformat("2026-11-01T12:00:00+02:00").tzinfo)
    assert microseconds(elsewhere) == microseconds(NOW) == int(NOW.timestamp()) * 1_000_000


def test_each_key_is_held_once(fresh_db: Store) -> None:
    """The tables with a row per id or key keep no second copy of it in an index of their key."""
    indexes = {
        name
        for (name,) in fresh_db.db.execute("select name from sqlite_master where type = 'index'").fetchall()
    }
    assert (
        not {
            "sqlite_autoindex_seen_events_1",
            "idx_seen_events_seen_at",
            "sqlite_autoindex_occurrence_buckets_1",
            "sqlite_autoindex_grouping_keys_1",
        }
        & indexes
    )


def a_database_of_schema_9() -> Database:
    db = Database(memory=True)
    for migration in MIGRATIONS[:9]:
        migration(db)
    db.table("meta").insert({"key": "schema_version", "value": "9"})
    return db


def test_a_database_of_the_form_before_keeps_its_seen_ids_counts_and_keys_when_migrated() -> None:
    db = a_database_of_schema_9()
    engine = GroupingEngine()
    first = engine.assign(ErrorEvent(event_id="a", timestamp=NOW, service="pay", error_code="E9"))
    signature = a_signature(
        first.signature_id, service="pay", grouping_state=engine.state(first.signature_id)
    )
    store = Store(db, ":memory:")
    with store.transaction():
        store.save(signature)  # files its grouping keys in the table of the form before
        store.add_occurrences(first.signature_id, {"2026-11-01T10:00:00+00:00": 3})
    seen_before = [(EVENT_ID, "s1", NOW), ("e1", "s1", NOW + timedelta(hours=1)), (SPAN_ID, "s2", NOW)]
    db.conn.executemany(
        "insert into seen_events (event_id, signature_id, seen_at) values (?, ?, ?)",
        [(event_id, sid, at.isoformat()) for event_id, sid, at in seen_before],
    )

    store.migrate()

    assert store.schema_version() == len(MIGRATIONS)
    assert store.seen([EVENT_ID, "e1", SPAN_ID, "e2"]) == {EVENT_ID, "e1", SPAN_ID}
    with store.transaction():
        store.forget_seen_before(NOW + timedelta(minutes=30))
    assert store.seen([EVENT_ID, "e1", SPAN_ID]) == {"e1"}
    assert store.count_since(first.signature_id, NOW) == 3
    with store.transaction():
        store.add_occurrences(first.signature_id, {"2026-11-01T10:00:00+00:00": 2})
    assert store.occurrence_counts(first.signature_id) == {NOW: 5}
    found = GroupingEngine(lookup=store.grouping_lookup()).assign(
        ErrorEvent(event_id="b", timestamp=NOW, service="pay", error_code="E9")
    )
    assert (found.tier, found.signature_id) == ("error_code", first.signature_id)
    assert store.integrity_ok()


def test_occurrences_written_in_id_order_are_the_rows_inserting_each_in_turn_writes(tmp_path: Path) -> None:
    # random ids (as a round's are), text ids among them, an id given twice and ids stored already
    rng = random.Random(7)
    rows = [(rng.randbytes(16), rng.randrange(2**50)) for _ in range(60_000)] + [("evt-1", 5), ("evt-1", 6)]
    rows += [(f"evt-{n}", n) for n in rng.sample(range(100), 50)] + [(rows[10][0], 1)]
    rng.shuffle(rows)
    earlier = [(rows[n][0], 9) for n in range(0, 60_000, 97)] + [("evt-7", 9), (b"\x00" * 16, 9)]
    written: dict[str, list[tuple[object, ...]]] = {}
    for way in ("in turn", "in id order", "outside a transaction"):
        store = Store.open(tmp_path / f"{way}.db")
        with store.transaction():
            store.mark_seen_stored(iter(earlier))
        if way == "in turn":  # the reference: each inserted in the order given
            with store.transaction():
                sql = "insert or ignore into seen_events (event_id, seen_at) values (?, ?)"
                store.db.conn.executemany(sql, rows)
        elif way == "in id order":
            with store.transaction():
                store.mark_seen_stored(iter(rows))
        else:
            store.mark_seen_stored(iter(rows))
        written[way] = store.db.execute("select event_id, seen_at from seen_events").fetchall()
        assert store.db.execute("select count(*) from temp.sqlite_master").fetchone() == (0,)
        store.close()
    assert written["in id order"] == written["in turn"] == written["outside a transaction"]
    first_evt_1 = next(row for row in rows if row[0] == "evt-1")  # the first given of an id given twice
    assert first_evt_1 in written["in turn"] and ("evt-7", 9) in written["in turn"]


def test_occurrences_that_fail_to_be_given_leave_nothing_written(tmp_path: Path) -> None:
    def failing() -> Iterator[tuple[str | bytes, int]]:
        yield ("evt-1", 1)
        raise RuntimeError("the round's temporary file is gone")

    store = Store.open(tmp_path / "failed.db")
    with pytest.raises(RuntimeError):
        store.mark_seen_stored(failing())
    assert store.db.execute("select count(*) from seen_events").fetchone() == (0,)
    store.mark_seen_stored(iter([("evt-2", 2)]))  # and the next write is not hindered
    assert store.db.execute("select event_id from seen_events").fetchall() == [("evt-2",)]
    store.close()
