"""What each source keeps between rounds beside its cursor (`source_states`), and a file source's line memory
(`sources/line_memory.py`) apart from it, a row per line (`source_lines`).

A state is JSON, but the lines a file source remembers (its `LINES`, up to hundreds of thousands) are not
part of that text: made into one document they were the biggest thing a round's commit built (a text of
many megabytes, and as much again while it was made), and the next round parsed all of it before reading a
line. Kept as rows, they are written one at a time in the round's transaction (only those that changed,
when the round restored its memory from them: a quiet round writes none), and read back in one pass of
the rows when a round restores its memory (`StoredLines.items`): neither round holds the memory as one
text, and a round's lookups are a dictionary's, not a query each.

- `source_lines`: `source`, `digest` (the line's digest as its 16 bytes, any other key as its text, as
  `seen.stored_id` keeps an id), `neighbours` (0 or 1), `ids` and `micros` (the packed records, `Packed`);
  an ordinary table with its key indexed: a row is hundreds of bytes, and SQLite advises `WITHOUT ROWID`
  only for rows under about a twentieth of a page (https://www.sqlite.org/withoutrowid.html, section 4);
- `source_states.kept_lines`: how many lines the state holds in `source_lines` (null: its state has none).

A database of the form before holds the lines in the state's JSON (`[neighbours, ids, times]` in base64):
they are moved to rows once, when it is migrated (`move_lines_to_rows`).
"""

from __future__ import annotations

import json
from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from typing import Any

from sqlite_utils import Database

from rounds_bot.sources.line_memory import LINES, KeptLines, Packed, packed_from_text
from rounds_bot.store.seen import stored_id


def create_source_lines(db: Database) -> None:
    db.execute(
        "create table source_lines (source text not null, digest not null, neighbours integer not null, "
        "ids blob not null, micros blob not null, primary key (source, digest))"
    )
    db.execute("alter table source_states add column kept_lines integer")


def move_lines_to_rows(db: Database) -> None:
    """Migration: the line memory of each state of the form before, moved from its JSON to rows. A line
    that is not what the earlier form wrote is left out (a line not remembered is decoded: nothing is
    lost but the shortcut), as is a memory that is not a mapping of lines, which no round could use."""
    create_source_lines(db)
    for source, text in db.execute("select source, state from source_states").fetchall():
        state = json.loads(text)
        if not isinstance(state, dict) or LINES not in state:
            continue
        lines = state.pop(LINES)
        packed = {
            digest: value
            for digest, value in ((digest, packed_from_text(value)) for digest, value in _items(lines))
            if value is not None
        }
        write_lines(db, source, packed)
        db.execute(
            "update source_states set state = ?, kept_lines = ? where source = ?",
            [json.dumps(state, sort_keys=True), len(packed) if isinstance(lines, dict) else None, source],
        )


def _items(lines: Any) -> Iterator[tuple[str, Any]]:
    return iter(lines.items()) if isinstance(lines, dict) else iter(())


def write_lines(db: Database, source: str, lines: Mapping[str, Packed]) -> None:
    """The lines of `source`, replacing those it kept before; written a row at a time from the mapping (no
    list of rows), in the order of their key, so each page of the key's index is written once."""
    db.execute("delete from source_lines where source = ?", [source])
    db.conn.executemany(
        "insert into source_lines (source, digest, neighbours, ids, micros) values (?, ?, ?, ?, ?)",
        _rows(source, lines, sorted(lines)),
    )


def write_changed_lines(db: Database, source: str, lines: KeptLines) -> None:
    """The lines of `source` made what `lines` holds, when they were restored from its rows: the rows of
    the lines it no longer keeps deleted, its fresh lines inserted (in the order of their key), the rest
    left as they are (a line carried is the row it was read from). A quiet round, which keeps what it
    read, writes nothing; the table ends as `write_lines` would leave it."""
    kept = {stored_id(digest) for digest in lines}
    held = db.execute("select digest from source_lines where source = ?", [source])
    gone = [key for (key,) in held if key not in kept]
    db.conn.executemany(
        "delete from source_lines where source = ? and digest = ?", ((source, key) for key in gone)
    )
    db.conn.executemany(
        "insert or replace into source_lines (source, digest, neighbours, ids, micros) "
        "values (?, ?, ?, ?, ?)",
        _rows(source, lines, sorted(lines.fresh)),
    )


def _rows(
    source: str, lines: Mapping[str, Packed], digests: list[str]
) -> Iterator[tuple[str, str | bytes, int, bytes, bytes]]:
    """The `source_lines` rows of `digests`' lines, one at a time (no list of rows), in the order given."""
    for digest in digests:
        neighbours, ids, micros = lines[digest]
        yield source, stored_id(digest), int(neighbours), ids, micros


class StoredLines(Mapping[str, Packed]):
    """The lines `source` kept, as a mapping that reads each when it is asked for (a round asks for its
    file's lines one at a time, and goes through all of them once: `values`)."""

    def __init__(self, db: Database, source: str, count: int) -> None:
        self.db, self.source, self._count = db, source, count

    def get(self, digest: str, default: Any = None) -> Any:
        row = self.db.conn.execute(  # (the connection's own: a round asks once a line)
            "select neighbours, ids, micros from source_lines where source = ? and digest = ?",
            (self.source, stored_id(digest)),
        ).fetchone()
        return default if row is None else (bool(row[0]), row[1], row[2])

    def __getitem__(self, digest: str) -> Packed:
        value: Packed | None = self.get(digest)
        if value is None:
            raise KeyError(digest)
        return value

    def __iter__(self) -> Iterator[str]:
        rows = self.db.execute("select digest from source_lines where source = ?", [self.source])
        return (_digest_of(key) for (key,) in rows)

    def __len__(self) -> int:
        return self._count

    def values(self) -> ValuesView[Packed]:
        return _Values(self)

    def items(self) -> ItemsView[str, Packed]:
        return _Items(self)

    def rows(self) -> Iterator[Packed]:
        """Every line's packed records, read in one pass."""
        found = self.db.execute(
            "select neighbours, ids, micros from source_lines where source = ?", [self.source]
        )
        return ((bool(neighbours), ids, micros) for neighbours, ids, micros in found)


class _Items(ItemsView[str, Packed]):
    """The items of `StoredLines`, read in one pass (how a round restores the memory) rather than one
    query a line."""

    def __init__(self, lines: StoredLines) -> None:
        super().__init__(lines)
        self._lines = lines

    def __iter__(self) -> Iterator[tuple[str, Packed]]:
        found = self._lines.db.execute(
            "select digest, neighbours, ids, micros from source_lines where source = ?", [self._lines.source]
        )
        return ((_digest_of(key), (bool(neighbours), ids, micros)) for key, neighbours, ids, micros in found)


class _Values(ValuesView[Packed]):
    """The values of `StoredLines`, read in one pass rather than one query a line."""

    def __init__(self, lines: StoredLines) -> None:
        super().__init__(lines)
        self._lines = lines

    def __iter__(self) -> Iterator[Packed]:
        return self._lines.rows()


def _digest_of(key: str | bytes) -> str:
    return key.hex() if isinstance(key, bytes) else key


class SourceStates:
    """The Store's reads and writes of `source_states` and `source_lines` (mixed into `Store`)."""

    db: Database

    def source_state(self, source: str) -> dict[str, Any] | None:
        """What `source` kept after the last round (None before its first round); its lines, when it kept
        some, as a mapping read a line at a time (`StoredLines`)."""
        row = self.db.execute(
            "select state, kept_lines from source_states where source = ?", [source]
        ).fetchone()
        if row is None:
            return None
        state, kept_lines = json.loads(row[0]), row[1]
        if not isinstance(state, dict):
            return None
        if kept_lines is not None:
            state[LINES] = StoredLines(self.db, source, kept_lines)
        return state

    def set_source_state(self, source: str, state: dict[str, Any]) -> None:
        """`state` saved for `source`'s next round (call inside `transaction()`); its lines, when they are
        a mapping, as rows."""
        lines = state.get(LINES)
        if not isinstance(lines, Mapping):
            self._save_state(source, state, None)
            return
        if isinstance(lines, KeptLines) and self._holds(lines.carried_from, source):
            write_changed_lines(self.db, source, lines)
        elif not self._holds(lines, source):
            write_lines(self.db, source, lines)  # (the rows it reads are already these)
        self._save_state(source, {key: value for key, value in state.items() if key != LINES}, len(lines))

    def _holds(self, lines: Mapping[str, Packed] | None, source: str) -> bool:
        """Whether `lines` are the rows this database holds for `source`."""
        return isinstance(lines, StoredLines) and lines.db is self.db and lines.source == source

    def _save_state(self, source: str, state: dict[str, Any], kept_lines: int | None) -> None:
        if kept_lines is None:
            self.db.execute("delete from source_lines where source = ?", [source])
        self.db.execute(
            "insert or replace into source_states (source, state, kept_lines) values (?, ?, ?)",
            [source, json.dumps(state, sort_keys=True), kept_lines],
        )
