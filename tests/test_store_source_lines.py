"""A file source's line memory kept as rows of the database (`store/source_states.py`), not as one JSON text:
written in the round's transaction, read back a line at a time by digest, and the same memory the JSON form
held; a database of the form before has its memory moved to rows once, when it is migrated."""

from __future__ import annotations

import base64
import json
import random
from array import array
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from rounds_bot import __version__
from rounds_bot.errors import StoreError
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources import line_memory, otlp_file
from rounds_bot.sources.line_memory import LINES, LineMemory, Read, digest_of, packed_from_text
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.store.schema import MIGRATIONS
from rounds_bot.store.source_states import StoredLines
from rounds_bot.tracker.dryrun import DryRunTracker
from tests.test_otlp_lean import write_otlp
from tests.test_otlp_line_memory import WINDOW, Counted, without_state

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
SOURCE = "otlp-file:telemetry.jsonl"


def random_reads(rng: random.Random, count: int) -> dict[str, Read]:
    """Lines as a file source reads them: any number of records (none, for a line of neighbours alone),
    ids of 128 bits, times in microseconds either side of the epoch."""
    reads = {}
    for index in range(count):
        records = [
            (rng.getrandbits(128), rng.randrange(-(2**62), 2**62)) for _ in range(rng.choice((0, 1, 3, 20)))
        ]
        reads[digest_of(f"line {index} {rng.random()}".encode())] = Read.of(records, rng.random() < 0.5)
    return reads


def earlier_form(read: Read) -> list[Any]:
    """A line as the JSON form of the memory held it: neighbours as 0 or 1, ids and times in base64 (the
    times in the byte order of the machine that wrote them)."""
    ids = b"".join(number.to_bytes(16, "big") for number, _ in read.records)
    micros = array("q", (moment for _, moment in read.records)).tobytes()
    return [int(read.neighbours), base64.b64encode(ids).decode(), base64.b64encode(micros).decode()]


def a_state(reads: dict[str, Read]) -> dict[str, Any]:
    memory = LineMemory({})
    for digest, read in reads.items():
        memory.keep(digest, read)
    return memory.state()


def test_a_line_packs_and_unpacks_to_the_same_records() -> None:
    for digest, read in random_reads(random.Random(7), 200).items():
        assert Read.unpacked(read.packed()) == read, digest


def test_a_line_of_the_json_form_packs_to_what_the_line_packs_to() -> None:
    for read in random_reads(random.Random(8), 200).values():
        assert packed_from_text(earlier_form(read)) == read.packed()


@pytest.mark.parametrize(
    "value",
    [None, "x", [], [1, "", ""][:2], [1, 2, ""], [1, "not base64!", ""], [1, "AA==", ""], [1, "", "AA=="]],
)
def test_what_the_json_form_never_wrote_is_no_line(value: Any) -> None:
    assert packed_from_text(value) is None


def test_a_states_lines_come_back_from_the_store_as_they_were_kept(fresh_db: Store) -> None:
    reads = random_reads(random.Random(9), 300)
    state = a_state(reads)
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, state)
    back = fresh_db.source_state(SOURCE)
    assert back is not None
    lines = back[LINES]
    assert isinstance(lines, StoredLines)
    assert back == state
    assert len(lines) == len(reads) and sorted(lines) == sorted(reads)
    assert sorted(lines.values()) == sorted(state[LINES].values())
    assert all(lines.get(digest) == state[LINES][digest] for digest in reads)
    assert lines.get(digest_of(b"a line never read")) is None
    with pytest.raises(KeyError):
        lines[digest_of(b"a line never read")]
    # the rest of the state is JSON, without the lines
    [text] = fresh_db.db.execute("select state from source_states").fetchone()
    assert json.loads(text) == {"format": line_memory.FORMAT, "release": __version__}


def test_a_state_without_lines_is_kept_as_it_was(fresh_db: Store) -> None:
    state = {"version": 1, "streams": {"errors": {"cursor": 12}}}
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, a_state(random_reads(random.Random(1), 5)))
        fresh_db.set_source_state(SOURCE, state)
    assert fresh_db.source_state(SOURCE) == state
    assert fresh_db.db.execute("select count(*) from source_lines").fetchone()[0] == 0


def test_each_sources_lines_are_its_own_and_a_later_state_replaces_them(fresh_db: Store) -> None:
    rng = random.Random(10)
    first, second, other = (a_state(random_reads(rng, 40)) for _ in range(3))
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, first)
        fresh_db.set_source_state("otlp-file:other.jsonl", other)
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, second)
    assert fresh_db.source_state(SOURCE) == second
    assert fresh_db.source_state("otlp-file:other.jsonl") == other


def test_the_lines_read_back_saved_again_stay_the_same(fresh_db: Store) -> None:
    state = a_state(random_reads(random.Random(11), 30))
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, state)
    stored = fresh_db.source_state(SOURCE)
    assert stored is not None
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, stored)
    assert fresh_db.source_state(SOURCE) == state


def test_a_round_that_fails_while_writing_keeps_the_lines_before(fresh_db: Store) -> None:
    rng = random.Random(12)
    before, after = a_state(random_reads(rng, 50)), a_state(random_reads(rng, 50))
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, before)

    class Broken(dict[str, Any]):
        """Lines whose last one cannot be read: the failure comes after rows were written."""

        def __getitem__(self, digest: str) -> Any:
            if digest == max(self):
                raise OSError("disk gone")
            return super().__getitem__(digest)

    with pytest.raises(OSError), fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, {**after, LINES: Broken(after[LINES])})
    assert fresh_db.source_state(SOURCE) == before


def test_a_quiet_read_from_the_stored_lines_gives_what_the_lines_in_memory_give(
    tmp_path: Path, fresh_db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 300, 40, NOW)
    source = OtlpFileSource(data)
    first = source.poll_new(WINDOW, frozenset(), Counted(set()))
    ids = {event.event_id for event in first.events}
    assert first.source_state is not None
    with fresh_db.transaction():
        fresh_db.set_source_state(source.name, first.source_state)
    decoded: list[bytes] = []
    lean_line = otlp_file.lean_line
    monkeypatch.setattr(otlp_file, "lean_line", lambda raw: decoded.append(raw) or lean_line(raw))
    stored = WINDOW.model_copy(update={"source_state": fresh_db.source_state(source.name)})
    quiet = source.poll_new(stored, frozenset(), Counted(ids - {min(ids)}))
    assert len(decoded) == 1  # the line of the one error not counted
    in_memory = WINDOW.model_copy(update={"source_state": first.source_state})
    assert without_state(quiet) == without_state(
        source.poll_new(in_memory, frozenset(), Counted(ids - {min(ids)}))
    )
    assert [event.event_id for event in quiet.events] == [min(ids)]
    assert quiet.source_state == first.source_state


def a_database_of_schema_10_with_lines(state: dict[str, Any]) -> Store:
    db = Database(memory=True)
    for migration in MIGRATIONS[:10]:
        migration(db)
    db.table("meta").insert({"key": "schema_version", "value": "10"})
    db.table("source_states").insert({"source": SOURCE, "state": json.dumps(state, sort_keys=True)})
    return Store(db, ":memory:")


def test_a_memory_of_the_json_form_is_moved_to_rows_when_the_database_is_migrated() -> None:
    reads = random_reads(random.Random(13), 200)
    text_lines: dict[str, Any] = {digest: earlier_form(read) for digest, read in reads.items()}
    text_lines[digest_of(b"damaged")] = [1, "not base64!", ""]  # no line: decoded when it comes
    store = a_database_of_schema_10_with_lines(
        {"format": line_memory.FORMAT, "release": __version__, LINES: text_lines}
    )
    store.migrate()
    assert store.schema_version() == len(MIGRATIONS)
    state = store.source_state(SOURCE)
    assert state is not None
    assert state == a_state(reads)
    memory = LineMemory.restore(state)
    assert all(memory.recall(digest) == read for digest, read in reads.items())
    assert memory.recall(digest_of(b"damaged")) is None
    [text] = store.db.execute("select state from source_states").fetchone()
    assert LINES not in json.loads(text)  # moved once: the JSON holds the lines no more


def test_a_migrated_memory_serves_a_quiet_round_and_is_then_written_as_rows(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 120, 15, NOW - timedelta(minutes=5))
    source = OtlpFileSource(data)
    database = tmp_path / "rounds.db"
    first_store = Store.open(database)
    run_round(
        load_settings(), source, DryRunTracker(tmp_path), first_store, now=NOW, reads_whole_history=True
    )
    stored = first_store.source_state(source.name)
    assert stored is not None
    state = {**stored, LINES: dict(stored[LINES])}  # read before the database changes below
    as_json = {
        **state,
        LINES: {digest: earlier_form(Read.unpacked(value)) for digest, value in state[LINES].items()},
    }
    # the database as the form before left it: the memory in the state's JSON, schema 10
    first_store.db.execute("drop table source_lines")
    first_store.db.execute("alter table source_states drop column kept_lines")
    first_store.db.execute("update source_states set state = ?", [json.dumps(as_json, sort_keys=True)])
    first_store.db.execute("update meta set value = '10' where key = 'schema_version'")
    first_store.db.conn.commit()
    first_store.close()

    store = Store.open(database)
    decoded: list[bytes] = []
    lean_line = otlp_file.lean_line
    monkeypatch.setattr(otlp_file, "lean_line", lambda raw: decoded.append(raw) or lean_line(raw))
    run_round(load_settings(), source, DryRunTracker(tmp_path), store, now=NOW + timedelta(minutes=1))
    assert decoded == []  # every line recalled from the migrated memory
    assert store.source_state(source.name) == state
    assert store.db.execute("select count(*) from source_lines").fetchone()[0] == len(state[LINES])


def test_a_memory_that_is_not_a_mapping_of_lines_is_dropped_when_migrated() -> None:
    store = a_database_of_schema_10_with_lines({"format": 1, "release": __version__, LINES: ["odd"]})
    store.migrate()
    assert store.source_state(SOURCE) == {"format": 1, "release": __version__}
    assert LineMemory.restore(store.source_state(SOURCE)).recall(digest_of(b"any")) is None


def test_a_store_error_names_the_failure_of_a_write(fresh_db: Store) -> None:
    with pytest.raises(StoreError), fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, a_state(random_reads(random.Random(3), 3)))
        fresh_db.db.execute("insert into source_lines (source) values ('x')")  # breaks a column's rule
    assert fresh_db.source_state(SOURCE) is None


def a_round(rng: random.Random, stored: dict[str, Any] | None, pool: dict[str, Read]) -> dict[str, Any]:
    """A round as a file source makes it: the memory restored from what the store gave, the lines of the
    file (some read before, some new, some twice) recalled and kept, the state it ends with."""
    memory = LineMemory.restore(stored)
    for digest in rng.choices(list(pool), k=rng.randrange(0, 40)):
        recalled = memory.recall(digest)
        memory.keep(digest, recalled if recalled is not None else pool[digest])
    return memory.state()


def a_quiet_round(stored: dict[str, Any] | None) -> dict[str, Any]:
    """A round that reads again every line it read before, and nothing else."""
    memory = LineMemory.restore(stored)
    for digest in list(stored[LINES]) if stored is not None else []:
        recalled = memory.recall(digest)
        if recalled is not None:  # (none, when another release wrote them)
            memory.keep(digest, recalled)
    return memory.state()


def rows_of(store: Store, source: str) -> list[tuple[Any, ...]]:
    return store.db.execute(
        "select digest, neighbours, ids, micros from source_lines where source = ? order by digest", [source]
    ).fetchall()


@pytest.mark.parametrize("seed", range(12))
def test_the_rows_written_after_any_rounds_are_those_a_full_rewrite_gives(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only what changed is written (`write_changed_lines`): after any sequence of rounds, quiet or not,
    with the bound cutting lines off, another release starting afresh and another source between, the
    table holds what writing the round's lines whole gives."""
    rng = random.Random(seed)
    monkeypatch.setattr(line_memory, "MAX_RECORDS", rng.choice((30, 200, 10_000)))
    pool = random_reads(rng, 60)
    store = Store.memory()
    for _ in range(10):
        source = rng.choice((SOURCE, SOURCE, "otlp-file:other.jsonl"))
        stored = store.source_state(source)
        if stored is not None and rng.random() < 0.15:
            stored = {**stored, "release": "another"}
        if stored is not None and LINES in stored and rng.random() < 0.3:
            state = a_quiet_round(stored)
        else:
            state = a_round(rng, stored, pool)
        with store.transaction():
            store.set_source_state(source, state)
        whole = Store.memory()
        with whole.transaction():
            whole.set_source_state(source, {**state, LINES: dict(state[LINES])})
        assert rows_of(store, source) == rows_of(whole, source)
        assert store.source_state(source) == whole.source_state(source)


def test_a_quiet_round_writes_no_line(fresh_db: Store) -> None:
    state = a_state(random_reads(random.Random(13), 50))
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, state)
    quiet = a_quiet_round(fresh_db.source_state(SOURCE))
    before = fresh_db.db.conn.total_changes
    with fresh_db.transaction():
        fresh_db.set_source_state(SOURCE, quiet)
    assert fresh_db.db.conn.total_changes - before == 1  # the state's own row, and no line
    assert fresh_db.source_state(SOURCE) == state
