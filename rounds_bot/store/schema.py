"""The signature database's tables, and the migrations that build them (append, never edit)."""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database

from rounds_bot.store.cascades import add_cascade_column
from rounds_bot.store.derived import create_derived_tables
from rounds_bot.store.grouping import create_grouping_keys, create_grouping_vectors
from rounds_bot.store.seen import compact_seen_events
from rounds_bot.store.source_states import move_lines_to_rows
from rounds_bot.store.versions import create_versions_seen


def _create_v1(db: Database) -> None:
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("signatures").create(
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
    db.table("occurrence_buckets").create(
        {"signature_id": str, "bucket_start": str, "count": int}, pk=("signature_id", "bucket_start")
    )
    # seen_at is the occurrence's own time, so ids are forgotten once no window can reach them
    db.table("seen_events").create({"event_id": str, "signature_id": str, "seen_at": str}, pk="event_id")
    db.table("seen_events").create_index(["seen_at"])
    db.table("source_groups").create({"source_group_id": str, "signature_id": str}, pk="source_group_id")
    db.table("cursors").create({"source": str, "position": str}, pk="source")
    db.table("events").create(
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
    db.table("events").create_index(["idempotency_key"], unique=True)
    db.table("events").create_index(["signature_id"])
    db.table("runs").create(
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
    db.table("ledger").create(
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
    db.table("diagnoses").create(
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
    db.table("diagnoses").create_index(["signature_id", "at"])
    db.table("diagnoses").create_index(["cache_key"])


def _add_counted_through_v6(db: Database) -> None:
    """A signature rebuilt from its issue knows its total but not which occurrences made it: up to when."""
    db.table("signatures").add_column("counted_through", str)
    # every round reads the few rebuilt signatures: an index of those alone, not a scan of them all
    db.execute(
        "create index signatures_counted_through on signatures(counted_through) "
        "where counted_through is not null"
    )


def create_source_states(db: Database) -> None:
    """What a source keeps between rounds beside its cursor (SigNoz: each stream's cursor and what it
    counted of the minutes it re-reads), as JSON; written with the cursor, in the round's transaction."""
    db.table("source_states").create({"source": str, "state": str}, pk="source")


def _compact_v10(db: Database) -> None:
    """The tables with a row per occurrence or per key, smaller: the ids of counted occurrences in their
    compact form (`store/seen.py`), and the occurrence counts and grouping look-up keys clustered on their
    primary key (`WITHOUT ROWID`), which held every key twice (the table and its key's index)."""
    compact_seen_events(db)
    buckets = {"signature_id": "TEXT", "bucket_start": "TEXT", "count": "INTEGER"}
    _cluster_on_key(db, "occurrence_buckets", buckets, ("signature_id", "bucket_start"))
    _cluster_on_key(db, "grouping_keys", {"key": "TEXT", "signature_id": "TEXT"}, ("key", "signature_id"))
    db.execute('create index "idx_grouping_keys_signature_id" on "grouping_keys" ("signature_id")')


def _cluster_on_key(db: Database, table: str, columns: dict[str, str], key: tuple[str, ...]) -> None:
    """`table` rebuilt as a `WITHOUT ROWID` table with the same columns and rows (its indexes go with the
    old table: the caller makes them again)."""
    names = ", ".join(f'"{name}"' for name in columns)
    declared = ", ".join(f'"{name}" {kind}' for name, kind in columns.items())
    primary = ", ".join(f'"{name}"' for name in key)
    db.execute(f'alter table "{table}" rename to "{table}_before"')
    db.execute(f'create table "{table}" ({declared}, primary key ({primary})) without rowid')
    db.execute(f'insert into "{table}" ({names}) select {names} from "{table}_before"')
    db.execute(f'drop table "{table}_before"')


# Migration N takes a database at schema version N-1 to version N. Append, never edit.
MIGRATIONS: list[Callable[[Database], None]] = [
    _create_v1,
    _add_diagnoses_v2,
    create_derived_tables,
    create_grouping_keys,
    create_grouping_vectors,
    _add_counted_through_v6,
    create_versions_seen,
    create_source_states,
    add_cascade_column,
    _compact_v10,
    move_lines_to_rows,
]
SCHEMA_VERSION = len(MIGRATIONS)
