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


def upsert(db: Database, table: str, row: dict[str, Any], pk: str) -> None:
    """Insert `row` into `table`, or update every other column of the row with its `pk`."""
    db.execute(_statement(table, tuple(row), pk), list(row.values()))


@cache
def _statement(table: str, columns: tuple[str, ...], pk: str) -> str:
    names = ", ".join(_quoted(column) for column in columns)
    marks = ", ".join("?" for _ in columns)
    updates = ", ".join(f"{_quoted(c)} = excluded.{_quoted(c)}" for c in columns if c != pk)
    action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    return f"INSERT INTO {_quoted(table)} ({names}) VALUES ({marks}) ON CONFLICT({_quoted(pk)}) {action}"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
