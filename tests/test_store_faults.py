"""Database faults stop a round before it does anything, with a clear error: another application's SQLite file
is left untouched, a damaged page is reported (not a traceback), and a locked database writes no draft."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlite_utils import Database

from rounds_bot.cli.app import main
from rounds_bot.store import Store


@pytest.fixture
def workdir(clean_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_another_applications_sqlite_file_is_refused_and_left_untouched(workdir):
    other = workdir / "rounds.db"
    db = sqlite3.connect(other)
    db.execute("create table customers (id integer primary key, name text)")
    db.execute("insert into customers (name) values ('alice')")
    db.commit()
    db.close()
    before = digest(other)
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "is not a rounds signature database" in err and "customers" in err
    assert digest(other) == before
    assert not (workdir / "rounds.db-wal").exists()
    assert not (workdir / "rounds-out").exists()


def test_a_damaged_page_is_a_clear_error_not_a_traceback(workdir):
    assert run("run", "--demo")[0] == 0
    path = workdir / "rounds.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = 4096
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * page_size
    data[2 * page_size : 3 * page_size] = b"\xa5" * page_size
    path.write_bytes(bytes(data))
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "is damaged" in err and "rounds state restore" in err


def test_a_locked_database_stops_the_round_before_any_draft_is_written(workdir, monkeypatch):
    Store.open(workdir / "rounds.db").close()
    holder = sqlite3.connect(workdir / "rounds.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        monkeypatch.setattr("rounds_bot.store.opening.LOCK_WAIT_MS", 200)
        code, _, err = run("run", "--demo")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 2
    assert "cannot be written now" in err and "another rounds" in err
    assert not (workdir / "rounds-out").exists()


def test_a_read_only_database_stops_the_round_before_any_draft_is_written(workdir, monkeypatch):
    Store.open(workdir / "rounds.db").close()

    class ReadOnly(Database):
        """The database as a read-only file or mount gives it (the tests run as a user who may write)."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            self.execute("PRAGMA query_only = ON")

    monkeypatch.setattr("rounds_bot.store.Database", ReadOnly)
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "cannot be written now: attempt to write a readonly database" in err
    assert "writable" in err
    assert not (workdir / "rounds-out").exists()
