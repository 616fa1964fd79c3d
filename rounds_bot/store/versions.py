"""When each `service.version` was first seen, per service: what tells a release apart from what ran before.

The round writes the first occurrence of every (service, version) pair it counts (`note_versions`, inside its
transaction; an earlier occurrence read later lowers it). The fix lifecycle reads it back: the versions a
service ran before a merge, and the first newer one after it (`fixing/release.py`), whichever job observes
the merge first. A rebuilt database starts it again empty: the signatures' own version lists stand in for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from sqlite_utils import Database

from rounds_bot.clock import iso, parse_iso
from rounds_bot.store.batches import write_many


def create_versions_seen(db: Database) -> None:
    """Migration: the first occurrence of each service's versions."""
    db.table("versions_seen").create(
        {"service": str, "version": str, "first_seen": str}, pk=("service", "version")
    )


class VersionsSeen:
    """The Store's reads and writes of `versions_seen` (mixed into `Store`)."""

    db: Database

    def note_versions(self, first_seen: Mapping[tuple[str, str], datetime]) -> None:
        """(service, version) -> its first occurrence in what was just counted; the earliest is kept."""
        self.note_versions_of([first_seen])

    def note_versions_of(self, counted: Iterable[Mapping[tuple[str, str], datetime]]) -> None:
        """`note_versions` of each in turn, as one statement run for every pair (a round notes those of
        thousands of signatures)."""
        write_many(
            self.db,
            "insert into versions_seen (service, version, first_seen) values (?, ?, ?) on conflict"
            "(service, version) do update set first_seen = min(first_seen, excluded.first_seen)",
            (
                (service, version, iso(moment))
                for first_seen in counted
                for (service, version), moment in first_seen.items()
            ),
        )

    def versions_seen(self, service: str) -> dict[str, datetime]:
        """A service's versions and when each was first seen."""
        rows = self.db.execute("select version, first_seen from versions_seen where service = ?", [service])
        return {str(version): parse_iso(first) for version, first in rows}
