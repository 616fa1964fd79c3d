"""Insert-or-update of one row by its primary key, as one prepared statement.

What `sqlite_utils.Table.upsert` writes (`INSERT ... ON CONFLICT(pk) DO UPDATE SET` every other
column), without looking up the table's columns on every call: a round saves a row per
signature, and that look-up cost more than the write. Rows hold plain values (text, numbers,
None) only; the tables exist (the migrations made them).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlite_utils import Database

from rounds_bot.store.batches import write_many


def upsert(db: Database, table: str, row: dict[str, Any], pk: str) -> None:
    """Insert `row` into `table`, or update every other column of the row with its `pk`."""
    db.execute(_statement(table, tuple(row), pk), list(row.values()))


def upsert_many(db: Database, table: str, rows: list[dict[str, Any]], pk: str) -> None:
    """`upsert` of each of `rows`, in order (a row whose `pk` came before updates it), as one statement
    run for every row when they all have the same columns."""
    columns = tuple(rows[0]) if rows else ()
    if any(tuple(row) != columns for row in rows):
        for row in rows:
            upsert(db, table, row, pk)
        return
    if rows:
        write_many(db, _statement(table, columns, pk), [tuple(row.values()) for row in rows])


@cache
def _statement(table: str, columns: tuple[str, ...], pk: str) -> str:
    names = ", ".join(_quoted(column) for column in columns)
    marks = ", ".join("?" for _ in columns)
    updates = ", ".join(f"{_quoted(c)} = excluded.{_quoted(c)}" for c in columns if c != pk)
    action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    return f"INSERT INTO {_quoted(table)} ({names}) VALUES ({marks}) ON CONFLICT({_quoted(pk)}) {action}"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
