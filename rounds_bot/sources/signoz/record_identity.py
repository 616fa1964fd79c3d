"""One record counted once among the raw rows a round reads without `clickhouse_sql`.

A collector's retried batch stores a record twice, equal but for the ids the exporter makes as it writes
(`queries.SPAN_IDENTITY`, `queries.LOG_IDENTITY` say what a copy shares). The raw reader keys each row by that
identity. A log record SigNoz cannot answer whole is read with named fields only (`row_pages`), so its copy
may come back once whole and once by name: the named row lacks the attributes rounds does not name, and its
full identity would never equal the whole one's. An identity is therefore split in two: what every read of
the record holds (`shared`), and what only a whole read holds (`rest`, None for a row read by name). Two whole
rows are one record when both parts are equal, as the SQL identity has it; a row read by name is a copy of
any record whose shared part it equals, and is one record with the first whole row that shares it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Fields = tuple[object, ...]


@dataclass(frozen=True)
class RecordIdentity:
    shared: Fields
    rest: Fields | None = ()  # None: the row was read by name, its `rest` unknown


@dataclass
class SeenRecords:
    """The records a read has counted, by identity."""

    _whole: set[tuple[Fields, Fields]] = field(default_factory=set)
    _whole_per_shared: dict[Fields, int] = field(default_factory=dict)
    _named: set[Fields] = field(default_factory=set)

    def first(self, identity: RecordIdentity) -> bool:
        """Whether the row is a record not counted yet (False: a copy of one counted)."""
        if identity.rest is None:
            return self._first_named(identity.shared)
        return self._first_whole(identity.shared, identity.rest)

    def _first_named(self, shared: Fields) -> bool:
        if shared in self._named or self._whole_per_shared.get(shared, 0):
            return False
        self._named.add(shared)
        return True

    def _first_whole(self, shared: Fields, rest: Fields) -> bool:
        if (shared, rest) in self._whole:
            return False
        self._whole.add((shared, rest))
        before = self._whole_per_shared.get(shared, 0)
        self._whole_per_shared[shared] = before + 1
        # the first whole row of a record already read by name is that record: counted then
        return not (before == 0 and shared in self._named)
