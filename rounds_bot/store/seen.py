"""The ids of occurrences already counted (`seen_events`), so overlapping windows never count one twice.

A round reads every record of its window and remembers each occurrence it counted until no window can reach
it again: the table holds a row per occurrence of the last hour or so, by far the most rows the database
has. So a row is only what the check needs, in its smallest exact form:

- `event_id`: the id as the round stored it; an id in lowercase hexadecimal (OpenTelemetry's trace, span
  and log record ids and the hashes rounds makes of them) is kept as its bytes, half the size, any other
  id as its text. SQLite never finds a text equal to a blob, so the two forms cannot be confused, and
  each id has exactly one form (`stored_id`);
- `seen_at`: the occurrence's own time in microseconds since the epoch (what forgetting compares);

in a table clustered on the id (`WITHOUT ROWID`: no second copy of it in an index). Forgetting scans the
table once per round, which costs far less than the round's reading of the same records; an index on the
time would double the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta

from sqlite_utils import Database

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
#: ids asked for in one statement at most (SQLite's limit on bound parameters is 32,766)
_CHUNK = 500


def stored_id(event_id: str) -> str | bytes:
    """The form an id is stored in: its bytes when it is lowercase hexadecimal, else its text. (`fromhex`
    also reads upper case and spaces between bytes: an id that does not come back the same stays text.)"""
    try:
        raw = bytes.fromhex(event_id)
    except ValueError:
        return event_id
    return raw if raw and raw.hex() == event_id else event_id


def microseconds(moment: datetime) -> int:
    """`moment` as whole microseconds since the epoch (exact: no float on the way)."""
    return (moment.astimezone(UTC) - _EPOCH) // _MICROSECOND


def create_seen_events(db: Database) -> None:
    db.execute("create table seen_events (event_id primary key, seen_at integer not null) without rowid")


def compact_seen_events(db: Database) -> None:
    """Migration: the ids of the older form (text id, signature id, ISO time, an index on the time) in the
    compact form above. The signature id was never read back."""
    db.execute("alter table seen_events rename to seen_events_before")
    db.execute("drop index if exists idx_seen_events_seen_at")
    create_seen_events(db)
    rows = db.execute("select event_id, seen_at from seen_events_before")  # streamed: memory stays flat
    db.conn.executemany(
        "insert or ignore into seen_events (event_id, seen_at) values (?, ?)",
        ((stored_id(event_id), microseconds(datetime.fromisoformat(at))) for event_id, at in rows),
    )
    db.execute("drop table seen_events_before")


class SeenEvents:
    """The Store's reads and writes of `seen_events` (mixed into `Store`)."""

    db: Database

    def seen(self, event_ids: Iterable[str]) -> set[str]:
        """Those of `event_ids` that were counted already."""
        wanted: dict[str | bytes, str] = {stored_id(event_id): event_id for event_id in event_ids}
        found: set[str] = set()
        for chunk in _chunks(list(wanted)):
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(f"select event_id from seen_events where event_id in ({marks})", chunk)
            found.update(wanted[key] for (key,) in rows)
        return found

    def any_seen(self) -> bool:
        """Whether any occurrence is remembered at all (none before a store's first round)."""
        return bool(self.db.execute("select exists (select 1 from seen_events)").fetchone()[0])

    def mark_seen(self, occurrences: Iterable[tuple[str, str, datetime]]) -> None:
        """Remember counted occurrences (event id, signature id, event time)."""
        self.db.conn.executemany(
            "insert or ignore into seen_events (event_id, seen_at) values (?, ?)",
            ((stored_id(event_id), microseconds(at)) for event_id, _, at in occurrences),
        )

    def mark_seen_stored(self, occurrences: Iterable[tuple[str | bytes, int]]) -> None:
        """`mark_seen` of occurrences already in their stored form: (`stored_id`, `microseconds`).

        A round's ids come in no order, and each inserted into the table lands on any page of it: the page
        cache must hold the whole table or write pages out and read them back in the middle of the
        transaction. So they are first appended to a temporary table (a temporary file, not memory) and
        copied from it in id order, each page of the table touched once: SQLite's sorter orders them within
        the page cache's bound, spilling to temporary files past it. Ordered by id, then by arrival, the
        first of an id given twice is the one kept, as inserting them in order keeps it. One statement's
        atomicity: outside a transaction, all of them are written or none."""
        with self.db.atomic():
            self.db.execute("drop table if exists temp.seen_incoming")
            self.db.execute("create temp table seen_incoming (event_id, seen_at)")
            self.db.conn.executemany("insert into temp.seen_incoming values (?, ?)", occurrences)
            self.db.execute(
                "insert or ignore into seen_events (event_id, seen_at) "
                "select event_id, seen_at from temp.seen_incoming order by event_id, rowid"
            )
            self.db.execute("drop table temp.seen_incoming")

    def forget_seen_before(self, moment: datetime) -> None:
        """Occurrences older than the next window's start can never be read again: forget their ids."""
        self.db.execute("delete from seen_events where seen_at < ?", [microseconds(moment)])


def _chunks(keys: list[str | bytes]) -> Iterator[list[str | bytes]]:
    for start in range(0, len(keys), _CHUNK):
        yield keys[start : start + _CHUNK]
