"""The signature database: opening, migrating, queries (SQLite through sqlite-utils).

GitHub is the record of facts; this database is a derived cache that makes rounds cheap. It holds:

- `signatures`: one row per problem, with its grouping state and running counts;
- `occurrence_buckets`: occurrence counts per signature in 5-minute buckets (spikes, triage, the issue table;
  `store/buckets.py`);
- `seen_events`: ids of occurrences already counted, so overlapping windows never count twice;
- `source_groups`: a backend's own group ids mapped to signatures, so a known group costs no detail request;
- `cursors`: how far each source has been read; `source_states`: what it keeps beside for its next round
  (a file source's line memory a row per line, `store/source_states.py`);
- `events`: the append-only event log (IncidentDetected, Updated, Regressed, ...) with idempotency keys;
  a signature's status is derived from it;
- `runs`: scan history; `ledger`: money spent on model calls;
- `versions_seen`: when each service's `service.version` was first seen (the fix lifecycle's releases).

A signature's row also keeps what its cascade was (`store/cascades.py`), so a later update still names it.

A round writes everything it learned in ONE transaction (`Store.transaction`): a failed round leaves the
database as it was, and the next round re-reads the same window.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any

# before anything imports sqlite-utils: imports it without numpy (`store/library.py`)
from rounds_bot.store import library  # noqa: F401

# isort: split
from sqlite_utils import Database

from rounds_bot.clock import bucket_of, iso, parse_iso
from rounds_bot.diagnosis.model import DiagnosisOutcome
from rounds_bot.errors import SchemaTooNewError, StoreError
from rounds_bot.events import STATUS_AFTER, Fact
from rounds_bot.grouping.state import SignatureState, states_from_json
from rounds_bot.lifecycle import LIFECYCLE_FACTS
from rounds_bot.signature import Signature
from rounds_bot.store.batches import rows_of
from rounds_bot.store.buckets import OccurrenceBuckets
from rounds_bot.store.cascades import CascadeLinks, CascadeLinksStore
from rounds_bot.store.derived import DerivedTables
from rounds_bot.store.grouping import (
    StoredSignatures,
    index_grouping_state,
    index_grouping_states,
    nothing_to_look_up,
)
from rounds_bot.store.history import HistoryQueries
from rounds_bot.store.opening import (
    check_file,
    check_health,
    check_owner,
    check_writable,
    sqlite_problem,
    storage_problem,
)
from rounds_bot.store.records import (
    Booking,
    DiagnosisRecord,
    Logged,
    RunRecord,
    diagnosis_row,
    run_row,
)
from rounds_bot.store.schema import MIGRATIONS, SCHEMA_VERSION
from rounds_bot.store.seen import SeenEvents
from rounds_bot.store.signatures import from_row, to_row
from rounds_bot.store.source_states import SourceStates
from rounds_bot.store.upsert import upsert, upsert_many
from rounds_bot.store.versions import VersionsSeen

#: signatures `Store.save_many` writes with one statement per kind of row (their rows are made together)
SAVE_BATCH = 500


#: whether sqlite-utils' plugins may prepare the database's connection: no, the database is rounds' own and
#: its queries use SQLite's functions alone; finding installed plugins reads every installed package's entry
#: points, in every process that opens a store (about 15 ms where the test extra is installed)
PLUGINS = False


class Store(
    HistoryQueries,
    DerivedTables,
    VersionsSeen,
    CascadeLinksStore,
    SeenEvents,
    OccurrenceBuckets,
    SourceStates,
):
    """An open signature database. Use `Store.open(path)` or `Store.memory()`."""

    def __init__(self, db: Database, where: str) -> None:
        self.db = db
        self.where = where
        #: inside `derived_once`: the signatures whose derived rows wait for a refresh, in the order
        #: of their first lifecycle fact, each with the number of its latest
        self._stale_derived: dict[str, int] | None = None

    # --- opening and migrating ---------------------------------------------------------------
    @classmethod
    def open(cls, path: Path) -> Store:
        path = Path(path)
        if path.parent and not path.parent.exists():
            raise StoreError(
                f"cannot create the signature database {path}: folder {path.parent} does not exist",
                hint="create the folder or set SIGNATURES_DB_PATH to a writable path",
            )
        check_file(path)
        try:
            db = Database(path, execute_plugins=PLUGINS)
            db.execute("PRAGMA busy_timeout = 5000")
            check_health(db, path)
            check_owner(db, path)
            if db.journal_mode != "wal":
                db.enable_wal()
        except sqlite3.DatabaseError as exc:
            raise sqlite_problem(exc, path) from exc
        store = cls(db, str(path))
        store.migrate()
        check_writable(db, path)
        return store

    @classmethod
    def memory(cls) -> Store:
        store = cls(Database(memory=True, execute_plugins=PLUGINS), ":memory:")
        store.migrate()
        return store

    def close(self) -> None:
        self.db.close()

    def schema_version(self) -> int:
        if "meta" not in self.db.table_names():
            return 0
        row = self.db.execute("select value from meta where key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    def migrate(self) -> None:
        """Bring the schema up to date in one transaction; refuse a database from a newer rounds."""
        try:
            current = self.schema_version()
            if current > SCHEMA_VERSION:
                raise SchemaTooNewError(
                    f"the signature database {self.where} has schema version {current}, "
                    f"but this rounds knows versions up to {SCHEMA_VERSION}",
                    hint="upgrade rounds (pip install -U rounds-bot) or point SIGNATURES_DB_PATH elsewhere",
                )
            if current == SCHEMA_VERSION:
                return
            with self.db.atomic():
                for version in range(current + 1, SCHEMA_VERSION + 1):
                    MIGRATIONS[version - 1](self.db)
                self.db.table("meta").upsert(
                    {"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key"
                )
        except sqlite3.OperationalError as exc:
            storage = storage_problem(Path(self.where), str(exc)) if self.where != ":memory:" else None
            raise storage or StoreError(
                f"cannot write the signature database {self.where}: {exc}",
                hint="check that the file and its folder are writable (SIGNATURES_DB_PATH)",
            ) from exc

    def is_empty(self) -> bool:
        """Nothing recorded yet: no signature, fact, run, diagnosis or cost."""
        tables = ("signatures", "events", "runs", "diagnoses", "ledger", "seen_events")
        return all(self.db.execute(f"select count(*) from {t}").fetchone()[0] == 0 for t in tables)

    def integrity_ok(self) -> bool:
        row = self.db.execute("PRAGMA integrity_check").fetchone()
        return bool(row) and row[0] == "ok"

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """All writes of a round go through here: everything or nothing."""
        try:
            with self.db.atomic():
                yield self
        except sqlite3.Error as exc:
            raise StoreError(
                f"the signature database {self.where} could not be written: {exc}",
                hint="nothing from this round was saved; fix the cause and run again",
            ) from exc

    # --- reads ------------------------------------------------------------------------------
    def signature(self, signature_id: str) -> Signature | None:
        rows = list(self.db.query("select * from signatures where id = ?", [signature_id]))
        return from_row(rows[0]) if rows else None

    def signatures_of(self, signature_ids: Iterable[str]) -> dict[str, Signature]:
        """The known ones of `signature_ids`, by id, read together (a round reads thousands)."""
        return {
            row["id"]: from_row(row)
            for row in rows_of(self.db, "select * from signatures where id in ({ids})", signature_ids)
        }

    def issue_refs(self, signature_ids: Iterable[str]) -> dict[str, str | None]:
        """The issue of each known one of `signature_ids` (None when it has none yet), read together."""
        sql = "select id, issue_ref from signatures where id in ({ids})"
        return {row["id"]: row["issue_ref"] or None for row in rows_of(self.db, sql, signature_ids)}

    def signatures(self) -> list[Signature]:
        """Every signature, oldest first."""
        return [from_row(row) for row in self.db.query("select * from signatures order by first_seen, id")]

    def unfiled_ids(self) -> list[str]:
        """Signatures recorded without an issue (deferred by a cap or a stop), oldest first."""
        return [
            row[0]
            for row in self.db.execute(
                "select id from signatures where issue_ref is null or issue_ref = '' order by first_seen, id"
            )
        ]

    def diagnosed_neighbours(
        self, service: str, exclude: str, limit: int
    ) -> list[tuple[Signature, DiagnosisOutcome]]:
        """Other signatures of `service` with an ok diagnosis, each with its latest ok outcome."""
        rows = self.db.execute(
            "select s.id, d.outcome from signatures s join diagnoses d on d.signature_id = s.id "
            "where s.service = ? and s.id != ? and d.status = 'ok' "
            "and d.id = (select max(id) from diagnoses where signature_id = s.id and status = 'ok') "
            "order by s.first_seen, s.id limit ?",
            [service, exclude, limit],
        ).fetchall()
        found = [(self.signature(sid), DiagnosisOutcome.model_validate_json(text)) for sid, text in rows]
        return [(signature, outcome) for signature, outcome in found if signature is not None]

    def grouping_lookup(self, *, unchanged_while_used: bool = False) -> StoredSignatures:
        """The known signatures as a round's grouping engine looks them up (one event at a time).

        `unchanged_while_used`: the caller writes nothing to the store while it uses the look-up; the store
        is then asked once whether it holds anything to look up, and an empty one answers without queries."""
        nothing_stored = unchanged_while_used and self.holds_nothing_to_look_up()
        return StoredSignatures(self.db, nothing_stored=nothing_stored)

    def holds_nothing_to_look_up(self) -> bool:
        """No signature, lookup key or vector stored: grouping can find no known signature (a first round)."""
        return nothing_to_look_up(self.db)

    def grouping_states(self) -> list[SignatureState]:
        """Every signature's grouping state, in the order the signatures were created."""
        texts = self.db.execute("select grouping_state from signatures order by rowid")
        return states_from_json(text for (text,) in texts if text)

    def counted_through(self) -> dict[str, datetime]:
        """Signatures rebuilt from their issues, each with the moment up to which its total is counted."""
        rows = self.db.execute("select id, counted_through from signatures where counted_through is not null")
        return {signature_id: parse_iso(moment) for signature_id, moment in rows}

    def group_map(self) -> dict[str, str]:
        return {
            row[0]: row[1]
            for row in self.db.execute("select source_group_id, signature_id from source_groups")
        }

    def cursor(self, source: str) -> datetime | None:
        row = self.db.execute("select position from cursors where source = ?", [source]).fetchone()
        return parse_iso(row[0]) if row else None

    def status(self, signature_id: str) -> str:
        """Derived from the event log: the latest status-changing event wins."""
        kinds = ",".join(f"'{kind}'" for kind in STATUS_AFTER)
        row = self.db.execute(
            f"select kind from events where signature_id = ? and kind in ({kinds}) order by id desc limit 1",
            [signature_id],
        ).fetchone()
        return STATUS_AFTER[row[0]] if row else "unknown"

    def events_of(self, signature_id: str) -> list[dict[str, Any]]:
        return list(self.db.query("select * from events where signature_id = ? order by id", [signature_id]))

    def find_signature_id(self, reference: str) -> str | None:
        """The signature a person means: its id, or its issue (`#12` or `12`)."""
        row = self.db.execute(
            "select id from signatures where id = ? or issue_ref = ? or issue_ref = ?",
            [reference, reference, f"#{reference.lstrip('#')}"],
        ).fetchone()
        return str(row[0]) if row else None

    # --- writes (call inside `transaction()`) -------------------------------------------------
    def append_event(
        self,
        kind: Fact,
        key: str,
        *,
        signature_id: str | None,
        run_id: str,
        at: datetime,
        payload: dict[str, Any] | None = None,
    ) -> bool:
        """Append to the event log once per idempotency key; returns False when it was already there."""
        cursor = self.db.execute(
            "insert or ignore into events (idempotency_key, kind, signature_id, run_id, at, payload) "
            "values (?, ?, ?, ?, ?, ?)",
            [key, kind, signature_id, run_id, iso(at), json.dumps(payload or {}, sort_keys=True)],
        )
        if cursor.rowcount == 1 and signature_id and kind in LIFECYCLE_FACTS:
            if self._stale_derived is None:
                self.refresh_derived(
                    signature_id
                )  # the derived tables follow the log in the same transaction
            else:
                self._stale_derived[signature_id] = cursor.lastrowid or 0  # the latest fact's row
        return cursor.rowcount == 1

    @contextmanager
    def derived_once(self) -> Iterator[None]:
        """Lifecycle facts appended inside refresh each signature's derived rows once, on leaving (call
        inside `transaction()`), to the rows a refresh per fact leaves: a refresh folds all of a
        signature's facts; incidents are written in the order of each signature's first fact (the order
        their rows were added), fixes in the order of its latest (the order they were last written)."""
        self._stale_derived = {}
        try:
            yield
            stale = self._stale_derived
            self.refresh_derived_of(list(stale), sorted(stale, key=stale.__getitem__))
        finally:
            self._stale_derived = None

    def save(self, signature: Signature) -> None:
        """Insert or replace the signature (and file it under its grouping look-up keys)."""
        upsert(self.db, "signatures", to_row(signature), pk="id")
        index_grouping_state(self.db, signature.id, signature.grouping_state)

    def save_many(self, signatures: Iterable[Signature]) -> None:
        """`save` of each, in order, with a few statements for every `SAVE_BATCH` of them (a round saves
        thousands: their rows, a few KB each, are made a batch at a time, so memory does not grow with
        them)."""
        each = iter(signatures)
        while batch := list(islice(each, SAVE_BATCH)):
            upsert_many(self.db, "signatures", [to_row(signature) for signature in batch], pk="id")
            index_grouping_states(self.db, [(signature.id, signature.grouping_state) for signature in batch])

    def map_group(self, source_group_id: str, signature_id: str) -> None:
        upsert(
            self.db,
            "source_groups",
            {"source_group_id": source_group_id, "signature_id": signature_id},
            pk="source_group_id",
        )

    def set_cursor(self, source: str, position: datetime) -> None:
        self.db.table("cursors").upsert({"source": source, "position": iso(position)}, pk="source")

    def record_run(self, run: RunRecord) -> None:
        self.db.table("runs").upsert(run_row(run), pk="id")

    def record_diagnosis(self, record: DiagnosisRecord) -> None:
        self.db.table("diagnoses").insert(diagnosis_row(record))

    def set_meta(self, key: str, value: str) -> None:
        self.db.table("meta").upsert({"key": key, "value": value}, pk="key")

    def book_cost(
        self, *, run_id: str, signature_id: str, usd: float, model: str, note: str, at: datetime
    ) -> None:
        self.db.table("ledger").insert(
            {
                "run_id": run_id,
                "signature_id": signature_id,
                "at": iso(at),
                "usd": usd,
                "model": model,
                "note": note,
            }
        )


def remove_database(path: Path) -> None:
    """Delete a database file with its write-ahead log and shared-memory files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


__all__ = [
    "SCHEMA_VERSION",
    "Booking",
    "CascadeLinks",
    "DiagnosisRecord",
    "Logged",
    "RunRecord",
    "Store",
    "bucket_of",
    "iso",
    "parse_iso",
    "remove_database",
]
