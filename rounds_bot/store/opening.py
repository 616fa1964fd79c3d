"""Checks before a signature database is used: that it is SQLite, that it is rounds', that it is sound, and
that it can be written now.

Each failure is a StoreError that names the file, what is wrong and what to do, raised before the round
reads, files or writes anything, and says what really happened: a path that is a folder, a read-only
folder or file system and a full disk are said as such (SQLite reports them as "unable to open database
file" or "disk I/O error"), never as a damaged database, which is reported only when SQLite says so.
Another application's database is never taken over (no tables added, WAL not switched on), a corrupt page
is found at once instead of as a traceback mid-round, and a read-only or locked database stops the round
before it writes an issue draft it could not record.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from rounds_bot.errors import StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"
#: How long opening waits for another rounds to release the write lock.
LOCK_WAIT_MS = 5_000
_MOVE_ASIDE = "move the file aside (rounds rebuilds the database from its issues: `rounds db rebuild`)"


#: less free space than this on the database's disk, when SQLite fails to write, is a full disk
FULL_DISK_BYTES = 256 * 1024
_NOT_DAMAGED = "the database itself is not damaged"


def check_path(path: Path) -> None:
    """The path must name a file (or nothing yet), not a folder."""
    if path.is_dir():
        raise StoreError(
            f"the signature database path {path} is a folder, not a file",
            hint=f"set SIGNATURES_DB_PATH to a file, e.g. {path / 'rounds.db'}",
        )


def check_file(path: Path) -> None:
    """An existing file must be an SQLite database."""
    check_path(path)
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(
            f"the signature database {path} cannot be read: {exc.strerror or exc}",
            hint="make the file readable by the user that runs rounds (SIGNATURES_DB_PATH)",
        ) from exc
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
        raise sqlite_problem(exc, path, damaged_otherwise=True) from exc
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    if problems:
        raise _corrupt(path, "; ".join(problems[:3]))


def sqlite_problem(exc: sqlite3.Error, path: Path, *, damaged_otherwise: bool = False) -> StoreError:
    """What an SQLite error opening or writing `path` means, by its result code (sqlite.org/rescode.html):
    damage only when SQLite says so (SQLITE_CORRUPT, SQLITE_NOTADB), or when nothing else explains an error
    reading the pages and `damaged_otherwise`; a read-only place or a full disk as such."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return _corrupt(path, str(exc))
    storage = storage_problem(path, str(exc))
    if storage is not None:
        return storage
    if name.startswith("SQLITE_FULL"):
        return _full(path, str(exc))
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(
            f"the signature database {path} cannot be written now: {exc}",
            hint="another rounds is using it; run again when it is done",
        )
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH", "SQLITE_IOERR")):
        return StoreError(
            f"the signature database {path} cannot be opened for writing: {exc}",
            hint="check that the file and its folder are writable by the user that runs rounds and that its "
            f"disk has room (SIGNATURES_DB_PATH); {_NOT_DAMAGED}",
        )
    if damaged_otherwise:
        return _corrupt(path, str(exc))
    return StoreError(
        f"cannot open the signature database {path}: {exc}",
        hint="check the path is a writable file (SIGNATURES_DB_PATH)",
    )


def storage_problem(path: Path, detail: str) -> StoreError | None:
    """A read-only folder, file or file system, or a full disk, where the database is; None when neither."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    read_only = bool(stats.f_flag & os.ST_RDONLY)
    if read_only or not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        where = "its file system is mounted read-only" if read_only else "the file or its folder is read-only"
        return StoreError(
            f"the signature database {path} cannot be written: {where} ({detail})",
            hint="make the file and its folder writable by the user that runs rounds, or set "
            f"SIGNATURES_DB_PATH to a writable place; {_NOT_DAMAGED}",
        )
    if stats.f_bavail * stats.f_frsize < FULL_DISK_BYTES:
        return _full(path, detail)
    return None


def _full(path: Path, detail: str) -> StoreError:
    return StoreError(
        f"the signature database {path} cannot be written: its disk is full ({detail})",
        hint=f"free some space on that disk and run again; {_NOT_DAMAGED}",
    )


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
        storage = None if locked else storage_problem(path, str(exc))
        if storage is not None:
            raise storage from exc
        raise StoreError(
            f"the signature database {path} cannot be written now: {exc}",
            hint="another rounds is using it; run again when it is done"
            if locked
            else "make the file and its folder writable by the user that runs rounds (SIGNATURES_DB_PATH)",
        ) from exc
