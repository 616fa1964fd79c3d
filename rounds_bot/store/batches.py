"""Rows of many signatures (or other keys) read, or written, with a few statements instead of one per key:
a round reads what it needs of thousands of signatures at once, and writes what it learned of them so."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlite_utils import Database

#: keys bound in one statement at most (SQLite's limit on bound parameters is 32,766)
CHUNK = 500


def rows_of(
    db: Database, sql: str, keys: Iterable[Any], *, before: Sequence[Any] = (), after: Sequence[Any] = ()
) -> Iterator[dict[str, Any]]:
    """The rows of `sql` for every key, as dictionaries: `sql` names the keys' place as `{ids}`, and
    `before` and `after` are the parameters bound before and after them. Rows come a chunk of keys at a
    time, in each chunk in the order `sql` gives them."""
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), CHUNK):
        chunk = unique[start : start + CHUNK]
        yield from db.query(sql.format(ids=",".join("?" * len(chunk))), [*before, *chunk, *after])


def write_many(db: Database, sql: str, rows: Iterable[Sequence[Any]]) -> None:
    """`db.execute(sql, row)` for every row, as one statement run for each: inside a transaction it is part
    of it; outside one, it is committed (or, failing, rolled back) as `db.execute` would have done."""
    was_in_transaction = db.conn.in_transaction
    try:
        db.conn.executemany(sql, rows)
    except Exception:  # as `db.execute` does: any failure, a row generator's own included
        if not was_in_transaction and db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    if not was_in_transaction and db.conn.in_transaction:
        db.conn.execute("COMMIT")
