"""Checks before a signature database is used: that it is SQLite, that it is rounds', that it is sound, and
that it can be written now.

Each failure is a StoreError that names the file, what is wrong and what to do, raised before the round
reads, files or writes anything: another application's database is never taken over (no tables added, WAL
not switched on), a corrupt page is found at once instead of as a traceback mid-round, and a read-only or
locked database stops the round before it writes an issue draft it could not record.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database

from rounds_bot.errors import StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long opening waits for another rounds to release the write lock.
LOCK_WAIT_MS = 5_000
_MOVE_ASIDE = "move the file aside (rounds rebuilds the database from its issues: `rounds db rebuild`)"


def check_file(path: Path) -> None:
    """An existing file must be an SQLite database."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_MAGIC))
    if header != SQLITE_MAGIC:
        raise StoreError(
            f"{path} is not a signature database: it is not an SQLite file",
            hint=f"set SIGNATURES_DB_PATH to rounds' database, or {_MOVE_ASIDE}",
        )


#: The GitHub tracker's journal keeps its own tables in the same file (`github/journal.py`); a file holding
#: only those is rounds' database whose store was not created yet (an older rounds opened the journal first).
JOURNAL_TABLE_PREFIX = "github_"


def check_owner(db: Database, path: Path) -> None:
    """A database with tables must be rounds' (it has its `meta` table and schema version)."""
    tables = set(db.table_names())
    if not tables or ("meta" in tables and _has_version(db)):
        return
    if all(table.startswith(JOURNAL_TABLE_PREFIX) for table in tables):
        return
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    raise StoreError(
        f"{path} is not a rounds signature database (it holds other tables: {shown}); "
        "rounds leaves it untouched",
        hint="set SIGNATURES_DB_PATH to a new file or to rounds' own database",
    )


def _has_version(db: Database) -> bool:
    try:
        row = db.execute("select value from meta where key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError:
        return False
    return row is not None


def check_health(db: Database, path: Path) -> None:
    """SQLite's quick check: a damaged page is reported now, with what to do."""
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise _corrupt(path, str(exc)) from exc
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    if problems:
        raise _corrupt(path, "; ".join(problems[:3]))


def _corrupt(path: Path, detail: str) -> StoreError:
    return StoreError(
        f"the signature database {path} is damaged: {detail}",
        hint=f"restore a saved copy (`rounds state restore`) or {_MOVE_ASIDE}",
    )


def check_writable(db: Database, path: Path) -> None:
    """Take the write lock and write nothing: a read-only or locked database stops the round here."""
    connection = db.conn
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT_MS)}")
        connection.execute("BEGIN IMMEDIATE")
        try:
            if "meta" in db.table_names():
                connection.execute("update meta set value = value where key = 'schema_version'")
        finally:
            connection.execute("ROLLBACK")
            connection.execute("PRAGMA busy_timeout = 5000")
    except sqlite3.OperationalError as exc:
        locked = "locked" in str(exc) or "busy" in str(exc)
        raise StoreError(
            f"the signature database {path} cannot be written now: {exc}",
            hint="another rounds is using it; run again when it is done"
            if locked
            else "make the file and its folder writable by the user that runs rounds (SIGNATURES_DB_PATH)",
        ) from exc
