"""Tables derived from the event log alone, and the reads the fix lifecycle makes.

- `incidents`: a row per signature: its status, issue, regressions and latest fix (`lifecycle.fold_incident`);
- `fixes`: a row per pull request rounds opened, with its status and measured rates (`lifecycle.fold_fixes`).

Appending a lifecycle fact refreshes its signature's rows in the same transaction (`Store.append_event`), and
`Store.replay()` drops both tables' rows and folds the whole log again: nothing in them is known otherwise, so
replaying gives the same tables, however often it runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from rounds_bot.clock import bucket_of, iso
from rounds_bot.lifecycle import LIFECYCLE_FACTS, FixRecord, IncidentRecord, fold_fixes, fold_incident
from rounds_bot.store.batches import rows_of
from rounds_bot.store.records import Logged, logged
from rounds_bot.store.upsert import upsert, upsert_many

DERIVED_TABLES = ("incidents", "fixes")


def create_derived_tables(db: Database) -> None:
    """Migration: the derived tables, filled from the log already there."""
    db.table("incidents").create(
        {"signature_id": str, "status": str, "issue": str, "fix_pr": int, "fix_status": str, "record": str},
        pk="signature_id",
    )
    db.table("fixes").create(
        {"pr_number": int, "signature_id": str, "status": str, "proposed_at": str, "record": str},
        pk="pr_number",
    )
    db.table("fixes").create_index(["signature_id"])
    rebuild(db)


def rebuild(db: Database) -> None:
    """Every derived row, from the event log alone."""
    for table in DERIVED_TABLES:
        db.execute(f"delete from {table}")
    signature_ids = [
        row[0]
        for row in db.execute(
            "select signature_id from events where signature_id is not null group by signature_id "
            "order by min(id)"
        )
    ]
    for signature_id in signature_ids:
        refresh(db, signature_id)


def refresh(db: Database, signature_id: str) -> None:
    """One signature's derived rows, folded again from its facts."""
    facts = _facts(db, signature_id)
    _refresh_incident(db, signature_id, facts)
    _refresh_fixes(db, signature_id, facts)


#: signatures whose facts are read and folded together at most: a round may refresh thousands, and their
#: facts read all at once would be held all at once
REFRESH_BATCH = 500


def refresh_many(db: Database, incidents_order: list[str], fixes_order: list[str]) -> None:
    """Signatures' derived rows folded again from their facts, once each: incidents in one order, fixes
    in another (the same signatures); the facts are read `REFRESH_BATCH` signatures at a time.

    A signature has fixes only once a fix was proposed for it, so most have none: their fixes are
    folded again only when their facts now make one or the table holds one of theirs (the rows a
    refresh would delete), and the others' facts are not read a second time. Skipping one changes
    nothing: it has no row to delete, and it gets none while the others are refreshed (an upsert
    writes the row under the signature it folds)."""
    with_fixes: set[str] = set()
    for batch in _batches(incidents_order):
        facts = _facts_of(db, batch)
        upsert_many(db, "incidents", [_incident_row(sid, facts[sid]) for sid in batch], pk="signature_id")
        with_fixes.update(sid for sid in batch if fold_fixes(facts[sid]))
    with_fixes.update(_with_fix_rows(db, fixes_order))
    for batch in _batches([sid for sid in fixes_order if sid in with_fixes]):
        facts = _facts_of(db, batch)
        for signature_id in batch:
            _refresh_fixes(db, signature_id, facts[signature_id])


def _with_fix_rows(db: Database, signature_ids: list[str]) -> set[str]:
    """Those of `signature_ids` that have a row in `fixes`."""
    sql = "select distinct signature_id from fixes where signature_id in ({ids})"
    return {row["signature_id"] for row in rows_of(db, sql, signature_ids)}


def _batches(signature_ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(signature_ids), REFRESH_BATCH):
        yield signature_ids[start : start + REFRESH_BATCH]


def _refresh_incident(db: Database, signature_id: str, facts: list[Logged]) -> None:
    upsert(db, "incidents", _incident_row(signature_id, facts), pk="signature_id")


def _incident_row(signature_id: str, facts: list[Logged]) -> dict[str, Any]:
    incident = fold_incident(signature_id, facts)
    return {
        "signature_id": signature_id,
        "status": incident.status,
        "issue": incident.issue,
        "fix_pr": incident.fix_pr,
        "fix_status": incident.fix_status,
        "record": incident.model_dump_json(),
    }


def _refresh_fixes(db: Database, signature_id: str, facts: list[Logged]) -> None:
    db.execute("delete from fixes where signature_id = ?", [signature_id])
    for fix in fold_fixes(facts):
        upsert(
            db,
            "fixes",
            {
                "pr_number": fix.pr_number,
                "signature_id": signature_id,
                "status": fix.status,
                "proposed_at": fix.proposed_at,
                "record": fix.model_dump_json(),
            },
            pk="pr_number",
        )


def _facts(db: Database, signature_id: str) -> list[Logged]:
    kinds = sorted(LIFECYCLE_FACTS)
    marks = ",".join("?" * len(kinds))
    rows = db.query(
        f"select * from events where signature_id = ? and kind in ({marks}) order by id",
        [signature_id, *kinds],
    )
    return [logged(row) for row in rows]


def _facts_of(db: Database, signature_ids: list[str]) -> dict[str, list[Logged]]:
    """`_facts` of each signature, read together."""
    kinds = sorted(LIFECYCLE_FACTS)
    marks = ",".join("?" * len(kinds))
    found: dict[str, list[Logged]] = {signature_id: [] for signature_id in signature_ids}
    sql = f"select * from events where signature_id in ({{ids}}) and kind in ({marks}) order by id"
    for row in rows_of(db, sql, signature_ids, after=kinds):
        found[row["signature_id"]].append(logged(row))
    return found


class DerivedTables:
    """The Store's methods for the derived tables and the fix lifecycle's reads (mixed into `Store`)."""

    db: Database

    def refresh_derived(self, signature_id: str) -> None:
        refresh(self.db, signature_id)

    def refresh_derived_of(self, incidents_order: list[str], fixes_order: list[str]) -> None:
        refresh_many(self.db, incidents_order, fixes_order)

    def replay(self) -> None:
        """Rebuild `incidents` and `fixes` from the event log, in one transaction."""
        with self.db.atomic():
            rebuild(self.db)

    def derived_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Every derived row, in key order: what a replay must give again."""
        keys = {"incidents": "signature_id", "fixes": "pr_number"}
        return {table: list(self.db.query(f"select * from {table} order by {keys[table]}")) for table in keys}

    def fix_records(self, signature_id: str | None = None) -> list[FixRecord]:
        """Fixes rounds proposed (for one signature), oldest first."""
        where, arguments = ("where signature_id = ? ", [signature_id]) if signature_id else ("", [])
        rows = self.db.execute(f"select record from fixes {where}order by proposed_at, pr_number", arguments)
        return [FixRecord.model_validate_json(text) for (text,) in rows]

    def incident_records(self) -> list[IncidentRecord]:
        """Every signature's derived incident, in signature order."""
        rows = self.db.execute("select record from incidents order by signature_id")
        return [IncidentRecord.model_validate_json(text) for (text,) in rows]

    def fix_records_of(self, signature_ids: Iterable[str]) -> dict[str, list[FixRecord]]:
        """`fix_records` of each of `signature_ids`, read together."""
        ids = list(dict.fromkeys(signature_ids))
        found: dict[str, list[FixRecord]] = {sid: [] for sid in ids}
        sql = (
            "select signature_id, record from fixes where signature_id in ({ids}) "
            "order by proposed_at, pr_number"
        )
        for row in rows_of(self.db, sql, ids):
            found[row["signature_id"]].append(FixRecord.model_validate_json(row["record"]))
        return found

    def incidents_of(self, signature_ids: Iterable[str]) -> dict[str, IncidentRecord]:
        """`incident` of each of `signature_ids` that has one, read together."""
        sql = "select signature_id, record from incidents where signature_id in ({ids})"
        return {
            row["signature_id"]: IncidentRecord.model_validate_json(row["record"])
            for row in rows_of(self.db, sql, signature_ids)
        }

    def incident(self, signature_id: str) -> IncidentRecord | None:
        row = self.db.execute(
            "select record from incidents where signature_id = ?", [signature_id]
        ).fetchone()
        return IncidentRecord.model_validate_json(row[0]) if row else None

    def count_between(self, signature_id: str, start: datetime, end: datetime) -> int:
        """Occurrences in the five-minute buckets from the one holding `start` to the one before `end`'s."""
        row = self.db.execute(
            "select coalesce(sum(count), 0) from occurrence_buckets "
            "where signature_id = ? and bucket_start >= ? and bucket_start < ?",
            [signature_id, bucket_of(start), bucket_of(end)],
        ).fetchone()
        return int(row[0])

    def facts(self, kinds: Iterable[str], *, since: datetime | None = None) -> list[Logged]:
        """Facts of `kinds` (logged at or after `since`), oldest first."""
        wanted = sorted(kinds)
        marks = ",".join("?" * len(wanted))
        after = "and at >= ? " if since is not None else ""
        arguments: list[Any] = [*wanted, *([iso(since)] if since is not None else [])]
        rows = self.db.query(f"select * from events where kind in ({marks}) {after}order by id", arguments)
        return [logged(row) for row in rows]
