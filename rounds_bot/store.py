"""The signature database: schema, migrations and queries (SQLite through sqlite-utils).

GitHub is the record of facts; this database is a derived cache that makes rounds cheap. It holds:

- `signatures`: one row per problem, with its grouping state and running counts;
- `occurrence_buckets`: occurrence counts per signature in 5-minute buckets (spikes, triage, the issue table);
- `seen_events`: ids of occurrences already counted, so overlapping windows never count twice;
- `source_groups`: a backend's own group ids mapped to signatures, so a known group costs no detail request;
- `cursors`: how far each source has been read;
- `events`: the append-only event log (IncidentDetected, Updated, Regressed, ...) with idempotency keys;
  a signature's status is derived from it;
- `runs`: scan history; `ledger`: money spent on model calls.

A round writes everything it learned in ONE transaction (`Store.transaction`): a failed round leaves the
database as it was, and the next round re-reads the same window.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from rounds_bot.errors import SchemaTooNewError, StoreError
from rounds_bot.events import STATUS_AFTER, Fact

SCHEMA_VERSION = 2
BUCKET_SECONDS = 300


def _create_v1(db: Database) -> None:
    db["meta"].create({"key": str, "value": str}, pk="key")
    db["signatures"].create(
        {
            "id": str,
            "service": str,
            "title": str,
            "error_type": str,
            "normalized_message": str,
            "fingerprint_hash": str,
            "fingerprint_version": str,
            "first_tier": str,
            "explanation": str,
            "representative": str,  # ErrorEvent JSON, already redacted for display
            "grouping_state": str,  # the grouping engine's SignatureState JSON
            "first_seen": str,
            "last_seen": str,
            "total_count": int,
            "services": str,  # JSON list
            "versions": str,  # JSON list
            "environments": str,  # JSON list
            "related": str,  # JSON list of signature ids
            "issue_ref": str,
            "created_run": str,
        },
        pk="id",
    )
    db["occurrence_buckets"].create(
        {"signature_id": str, "bucket_start": str, "count": int}, pk=("signature_id", "bucket_start")
    )
    # seen_at is the occurrence's own time, so ids are forgotten once no window can reach them
    db["seen_events"].create({"event_id": str, "signature_id": str, "seen_at": str}, pk="event_id")
    db["seen_events"].create_index(["seen_at"])
    db["source_groups"].create({"source_group_id": str, "signature_id": str}, pk="source_group_id")
    db["cursors"].create({"source": str, "position": str}, pk="source")
    db["events"].create(
        {
            "id": int,
            "idempotency_key": str,
            "kind": str,
            "signature_id": str,
            "run_id": str,
            "at": str,
            "payload": str,
        },
        pk="id",
        not_null={"idempotency_key", "kind", "at"},
    )
    db["events"].create_index(["idempotency_key"], unique=True)
    db["events"].create_index(["signature_id"])
    db["runs"].create(
        {
            "id": str,
            "started_at": str,
            "finished_at": str,
            "source": str,
            "status": str,
            "stats": str,
        },
        pk="id",
    )
    db["ledger"].create(
        {
            "id": int,
            "run_id": str,
            "signature_id": str,
            "at": str,
            "usd": float,
            "model": str,
            "note": str,
        },
        pk="id",
    )


def _add_diagnoses_v2(db: Database) -> None:
    """Diagnoses, cached per signature and code revision (the cache key), with every attempt's outcome."""
    db["diagnoses"].create(
        {
            "id": int,
            "cache_key": str,
            "signature_id": str,
            "revision": str,
            "at": str,
            "status": str,
            "trigger": str,
            "cost_usd": float,
            "outcome": str,  # DiagnosisOutcome JSON
        },
        pk="id",
    )
    db["diagnoses"].create_index(["signature_id", "at"])
    db["diagnoses"].create_index(["cache_key"])


# Migration N takes a database at schema version N-1 to version N. Append, never edit.
MIGRATIONS: list[Callable[[Database], None]] = [_create_v1, _add_diagnoses_v2]


def iso(moment: datetime) -> str:
    """Timestamps are stored as ISO-8601 UTC strings, which sort correctly as text."""
    return moment.astimezone(UTC).isoformat()


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def bucket_of(moment: datetime) -> str:
    epoch = int(moment.timestamp())
    return iso(datetime.fromtimestamp(epoch - epoch % BUCKET_SECONDS, UTC))


class Store:
    """An open signature database. Use `Store.open(path)` or `Store.memory()`."""

    def __init__(self, db: Database, where: str) -> None:
        self.db = db
        self.where = where

    # --- opening and migrating ---------------------------------------------------------------
    @classmethod
    def open(cls, path: Path) -> Store:
        path = Path(path)
        if path.parent and not path.parent.exists():
            raise StoreError(
                f"cannot create the signature database {path}: folder {path.parent} does not exist",
                hint="create the folder or set SIGNATURES_DB_PATH to a writable path",
            )
        try:
            db = Database(path)
            db.execute("PRAGMA busy_timeout = 5000")
            if db.journal_mode != "wal":
                db.enable_wal()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the signature database {path}: {exc}",
                hint="check the path is a writable file (SIGNATURES_DB_PATH), or move a corrupt file aside",
            ) from exc
        store = cls(db, str(path))
        store.migrate()
        return store

    @classmethod
    def memory(cls) -> Store:
        store = cls(Database(memory=True), ":memory:")
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
                self.db["meta"].upsert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key")
        except sqlite3.OperationalError as exc:
            raise StoreError(
                f"cannot write the signature database {self.where}: {exc}",
                hint="check that the file and its folder are writable (SIGNATURES_DB_PATH)",
            ) from exc

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
    def signature(self, signature_id: str) -> dict[str, Any] | None:
        rows = list(self.db.query("select * from signatures where id = ?", [signature_id]))
        return rows[0] if rows else None

    def signatures(self) -> list[dict[str, Any]]:
        return list(self.db.query("select * from signatures order by first_seen, id"))

    def unfiled_ids(self) -> list[str]:
        """Signatures recorded without an issue (deferred by a cap or a stop), oldest first."""
        return [
            row[0]
            for row in self.db.execute(
                "select id from signatures where issue_ref is null or issue_ref = '' order by first_seen, id"
            )
        ]

    def diagnosed_neighbours(self, service: str, exclude: str, limit: int) -> list[tuple[dict, str]]:
        """Other signatures of `service` with an ok diagnosis: (signature row, latest ok outcome JSON)."""
        rows = self.db.execute(
            "select s.id, d.outcome from signatures s join diagnoses d on d.signature_id = s.id "
            "where s.service = ? and s.id != ? and d.status = 'ok' "
            "and d.id = (select max(id) from diagnoses where signature_id = s.id and status = 'ok') "
            "order by s.first_seen, s.id limit ?",
            [service, exclude, limit],
        ).fetchall()
        return [(self.signature(sid) or {}, outcome) for sid, outcome in rows]

    def grouping_states(self) -> list[str]:
        return [row[0] for row in self.db.execute("select grouping_state from signatures order by rowid")]

    def seen(self, event_ids: Iterable[str]) -> set[str]:
        ids = list(event_ids)
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self.db.execute(
                    f"select event_id from seen_events where event_id in ({marks})", chunk
                )
            )
        return found

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

    def count_since(self, signature_id: str, since: datetime) -> int:
        row = self.db.execute(
            "select coalesce(sum(count), 0) from occurrence_buckets "
            "where signature_id = ? and bucket_start >= ?",
            [signature_id, bucket_of(since)],
        ).fetchone()
        return int(row[0])

    def latest_diagnosis(self, signature_id: str, *, ok_only: bool = False) -> dict[str, Any] | None:
        status = "and status = 'ok' " if ok_only else ""
        rows = list(
            self.db.query(
                f"select * from diagnoses where signature_id = ? {status}order by at desc, id desc limit 1",
                [signature_id],
            )
        )
        return rows[0] if rows else None

    def pending_diagnoses(self, max_attempts: int) -> set[str]:
        """Signatures whose last diagnosis failed, with fewer than `max_attempts` failures in a row."""
        statuses: dict[str, list[str]] = {}
        for signature_id, status in self.db.execute(
            "select signature_id, status from diagnoses order by id desc"
        ):
            statuses.setdefault(signature_id, []).append(status)
        pending = set()
        for signature_id, newest_first in statuses.items():
            failures = len(list(itertools.takewhile(lambda status: status != "ok", newest_first)))
            if 0 < failures < max_attempts:
                pending.add(signature_id)
        return pending

    def cached_diagnosis(self, cache_key: str) -> dict[str, Any] | None:
        rows = list(
            self.db.query(
                "select * from diagnoses where cache_key = ? and status = 'ok' order by id desc limit 1",
                [cache_key],
            )
        )
        return rows[0] if rows else None

    def runs(self) -> list[dict[str, Any]]:
        return list(self.db.query("select * from runs order by started_at"))

    def spent_since(self, since: datetime) -> float:
        row = self.db.execute(
            "select coalesce(sum(usd), 0) from ledger where at >= ?", [iso(since)]
        ).fetchone()
        return float(row[0])

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
        return cursor.rowcount == 1

    def upsert_signature(self, row: dict[str, Any]) -> None:
        self.db["signatures"].upsert(row, pk="id")

    def add_occurrences(self, signature_id: str, buckets: dict[str, int]) -> None:
        for bucket_start, count in buckets.items():
            self.db.execute(
                "insert into occurrence_buckets (signature_id, bucket_start, count) values (?, ?, ?) "
                "on conflict(signature_id, bucket_start) do update set count = count + excluded.count",
                [signature_id, bucket_start, count],
            )

    def mark_seen(self, occurrences: Iterable[tuple[str, str, datetime]]) -> None:
        """Remember counted occurrences (event id, signature id, event time)."""
        self.db.conn.executemany(
            "insert or ignore into seen_events (event_id, signature_id, seen_at) values (?, ?, ?)",
            [(event_id, signature_id, iso(at)) for event_id, signature_id, at in occurrences],
        )

    def forget_seen_before(self, moment: datetime) -> None:
        """Occurrences older than the next window's start can never be read again: forget their ids."""
        self.db.execute("delete from seen_events where seen_at < ?", [iso(moment)])

    def map_group(self, source_group_id: str, signature_id: str) -> None:
        self.db["source_groups"].upsert(
            {"source_group_id": source_group_id, "signature_id": signature_id}, pk="source_group_id"
        )

    def set_cursor(self, source: str, position: datetime) -> None:
        self.db["cursors"].upsert({"source": source, "position": iso(position)}, pk="source")

    def record_run(self, row: dict[str, Any]) -> None:
        self.db["runs"].upsert(row, pk="id")

    def record_diagnosis(self, row: dict[str, Any]) -> None:
        self.db["diagnoses"].insert(row)

    def book_cost(
        self, *, run_id: str, signature_id: str, usd: float, model: str, note: str, at: datetime
    ) -> None:
        self.db["ledger"].insert(
            {
                "run_id": run_id,
                "signature_id": signature_id,
                "at": iso(at),
                "usd": usd,
                "model": model,
                "note": note,
            }
        )


def utcnow() -> datetime:
    return datetime.now(UTC)
