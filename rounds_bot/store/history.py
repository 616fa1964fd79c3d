"""The Store's reads of what happened: diagnosis attempts, runs, money spent and the event log (mixed into
`Store`; `records.py` turns their rows into typed records)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import datetime

from sqlite_utils import Database

from rounds_bot.clock import iso
from rounds_bot.store.batches import rows_of
from rounds_bot.store.records import (
    Booking,
    DiagnosisRecord,
    Logged,
    RunRecord,
    booking,
    diagnosis_record,
    logged,
    run_record,
)


class HistoryQueries:
    """Reads of the `diagnoses`, `runs`, `ledger`, `events` and `meta` tables."""

    db: Database

    def latest_diagnosis(self, signature_id: str, *, ok_only: bool = False) -> DiagnosisRecord | None:
        status = "and status = 'ok' " if ok_only else ""
        rows = list(
            self.db.query(
                f"select * from diagnoses where signature_id = ? {status}order by at desc, id desc limit 1",
                [signature_id],
            )
        )
        return diagnosis_record(rows[0]) if rows else None

    def latest_diagnoses(
        self, signature_ids: Iterable[str], *, ok_only: bool = False
    ) -> dict[str, DiagnosisRecord]:
        """`latest_diagnosis` of each of `signature_ids` that has one, read together."""
        status = "and status = 'ok' " if ok_only else ""
        sql = f"select * from diagnoses where signature_id in ({{ids}}) {status}order by at desc, id desc"
        found: dict[str, DiagnosisRecord] = {}
        for row in rows_of(self.db, sql, signature_ids):
            if row["signature_id"] not in found:
                found[row["signature_id"]] = diagnosis_record(row)
        return found

    def latest_good_diagnoses(self, signature_ids: Iterable[str]) -> dict[str, DiagnosisRecord]:
        """Each signature's latest ok diagnosis record, for those that have one with a diagnosis."""
        ids = list(signature_ids)
        latest = self.latest_diagnoses(ids, ok_only=True)
        return {
            sid: latest[sid] for sid in ids if sid in latest and latest[sid].outcome.diagnosis is not None
        }

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

    def cached_diagnosis(self, cache_key: str) -> DiagnosisRecord | None:
        rows = list(
            self.db.query(
                "select * from diagnoses where cache_key = ? and status = 'ok' order by id desc limit 1",
                [cache_key],
            )
        )
        return diagnosis_record(rows[0]) if rows else None

    def runs(self) -> list[RunRecord]:
        """The run history, oldest first."""
        return [run_record(row) for row in self.db.query("select * from runs order by started_at")]

    def recent_runs(self, limit: int) -> list[RunRecord]:
        """The newest `limit` runs, oldest first."""
        rows = self.db.query("select * from runs order by started_at desc limit ?", [limit])
        return [run_record(row) for row in reversed(list(rows))]

    # --- the event log ---------------------------------------------------------------------
    def fact(self, key: str) -> Logged | None:
        """The fact logged under an idempotency key."""
        rows = list(self.db.query("select * from events where idempotency_key = ?", [key]))
        return logged(rows[0]) if rows else None

    def latest_facts(self, kinds: Iterable[str], *, per_signature: bool = True) -> list[Logged]:
        """The newest fact among `kinds`, per signature (or overall)."""
        wanted = list(kinds)
        marks = ",".join("?" * len(wanted))
        if per_signature:
            sql = (
                f"select e.* from events e join (select signature_id, max(id) as id from events "
                f"where kind in ({marks}) and signature_id is not null group by signature_id) last "
                "on e.id = last.id"
            )
        else:
            sql = f"select * from events where kind in ({marks}) order by id desc limit 1"
        return [logged(row) for row in self.db.query(sql, wanted)]

    def unanswered(self, kind: str, *, asked: str, answered: str) -> list[Logged]:
        """Facts of `kind` keyed `{asked}{x}` with no fact keyed `{answered}{x}`, oldest first."""
        rows = self.db.query(
            "select h.* from events h where h.kind = ? and h.idempotency_key like ? and not exists "
            "(select 1 from events r where r.idempotency_key = ? || substr(h.idempotency_key, ?)) "
            "order by h.id",
            [kind, f"{asked}%", answered, len(asked) + 1],
        )
        return [logged(row) for row in rows]

    def meta(self, key: str) -> str | None:
        row = self.db.execute("select value from meta where key = ?", [key]).fetchone()
        return str(row[0]) if row else None

    def bookings(self, signature_id: str) -> list[Booking]:
        """The model calls paid for a signature, oldest first."""
        rows = self.db.query("select * from ledger where signature_id = ? order by at, id", [signature_id])
        return [booking(row) for row in rows]

    def bookings_of(self, signature_ids: Iterable[str]) -> dict[str, list[Booking]]:
        """`bookings` of each of `signature_ids`, read together."""
        ids = list(dict.fromkeys(signature_ids))
        found: dict[str, list[Booking]] = {sid: [] for sid in ids}
        sql = "select * from ledger where signature_id in ({ids}) order by at, id"
        for row in rows_of(self.db, sql, ids):
            found[row["signature_id"]].append(booking(row))
        return found

    def spent_since(self, since: datetime) -> float:
        row = self.db.execute(
            "select coalesce(sum(usd), 0) from ledger where at >= ?", [iso(since)]
        ).fetchone()
        return float(row[0])
