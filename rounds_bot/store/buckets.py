"""Occurrences per signature and five-minute bucket (`occurrence_buckets`): what spikes, charts and quiet
periods are read from. A round adds its counts to the buckets (`add_occurrences`); the reads sum them from a
moment on, or give them whole, for one signature or for many in a few statements (`batches.rows_of`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlite_utils import Database

from rounds_bot.clock import bucket_of, parse_iso
from rounds_bot.store.batches import rows_of, write_many


class OccurrenceBuckets:
    """The Store's reads and writes of `occurrence_buckets` (mixed into `Store`)."""

    db: Database

    def add_occurrences(self, signature_id: str, buckets: dict[str, int]) -> None:
        self.add_occurrences_of([(signature_id, buckets)])

    def add_occurrences_of(self, counted: Iterable[tuple[str, dict[str, int]]]) -> None:
        """`add_occurrences` of each signature's buckets in turn, as one statement run for every bucket (a
        round adds those of thousands of signatures)."""
        write_many(
            self.db,
            "insert into occurrence_buckets (signature_id, bucket_start, count) values (?, ?, ?) "
            "on conflict(signature_id, bucket_start) do update set count = count + excluded.count",
            (
                (signature_id, bucket_start, count)
                for signature_id, buckets in counted
                for bucket_start, count in buckets.items()
            ),
        )

    def count_since(self, signature_id: str, since: datetime) -> int:
        row = self.db.execute(
            "select coalesce(sum(count), 0) from occurrence_buckets "
            "where signature_id = ? and bucket_start >= ?",
            [signature_id, bucket_of(since)],
        ).fetchone()
        return int(row[0])

    def counts_since(self, signature_ids: Iterable[str], since: datetime) -> dict[str, int]:
        """`count_since` of each of `signature_ids` (0 for one without occurrences), read together."""
        ids = list(dict.fromkeys(signature_ids))
        counts = dict.fromkeys(ids, 0)
        sql = (
            "select signature_id, sum(count) from occurrence_buckets "
            "where signature_id in ({ids}) and bucket_start >= ? group by signature_id"
        )
        for row in rows_of(self.db, sql, ids, after=[bucket_of(since)]):
            counts[row["signature_id"]] = int(row["sum(count)"])
        return counts

    def occurrence_counts_of(self, signature_ids: Iterable[str]) -> dict[str, dict[datetime, int]]:
        """`occurrence_counts` of each of `signature_ids`, read together."""
        ids = list(dict.fromkeys(signature_ids))
        counts: dict[str, dict[datetime, int]] = {sid: {} for sid in ids}
        sql = "select signature_id, bucket_start, count from occurrence_buckets where signature_id in ({ids})"
        for row in rows_of(self.db, sql, ids):
            counts[row["signature_id"]][parse_iso(row["bucket_start"])] = int(row["count"])
        return counts

    def occurrence_counts(self, signature_id: str) -> dict[datetime, int]:
        """Occurrences per five-minute bucket, from the first one."""
        rows = self.db.execute(
            "select bucket_start, count from occurrence_buckets where signature_id = ?", [signature_id]
        )
        return {parse_iso(start): int(count) for start, count in rows}
