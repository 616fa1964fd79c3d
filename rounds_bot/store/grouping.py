"""The grouping engine's look-ups in the database: known signatures found by the keys it asks for.

`grouping_keys` files each signature under the keys `grouping.known.lookup_keys` gives its
grouping state (a fingerprint hash, an error code, its templates' skeletons and shelves, the keys
its templates use, its service's vectors); `meta` keeps the next signature and template seq. A
round's engine reads through `StoredSignatures`, so it loads the few signatures its events need
instead of every signature ever seen.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlite_utils import Database

from rounds_bot.grouping.known import lookup_keys
from rounds_bot.grouping.lookup_keys import SEPARATOR
from rounds_bot.grouping.state import SignatureState, states_from_json

_NEXT_SEQ = "grouping_next_seq"
_NEXT_TEMPLATE_SEQ = "grouping_next_template_seq"
#: keys asked for in one statement at most (SQLite's limit on bound parameters is 32,766)
_CHUNK = 500


def create_grouping_keys(db: Database) -> None:
    """Migration: the lookup table, filled from the signatures already saved."""
    db.table("grouping_keys").create({"key": str, "signature_id": str}, pk=("key", "signature_id"))
    db.table("grouping_keys").create_index(["signature_id"])
    for signature_id, text in db.execute("select id, grouping_state from signatures"):
        if text:
            index_grouping_state(db, signature_id, SignatureState.model_validate_json(text))


def index_grouping_state(db: Database, signature_id: str, state: SignatureState | None) -> None:
    """File a signature under its lookup keys (replacing what it was filed under before)."""
    db.execute("delete from grouping_keys where signature_id = ?", [signature_id])
    if state is None:
        return
    db.conn.executemany(
        "insert or ignore into grouping_keys (key, signature_id) values (?, ?)",
        [(key, signature_id) for key in lookup_keys(state)],
    )
    _raise_counter(db, _NEXT_SEQ, state.seq + 1)
    if state.templates:
        _raise_counter(db, _NEXT_TEMPLATE_SEQ, max(t.seq for t in state.templates) + 1)


def _raise_counter(db: Database, key: str, value: int) -> None:
    db.execute(
        "insert into meta (key, value) values (?, ?) on conflict(key) do update "
        "set value = max(cast(value as integer), cast(excluded.value as integer))",
        [key, str(value)],
    )


class StoredSignatures:
    """`grouping.known.KnownSignatures` over the signature database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def counters(self) -> tuple[int, int]:
        rows = dict(
            self._db.execute(
                "select key, value from meta where key in (?, ?)", [_NEXT_SEQ, _NEXT_TEMPLATE_SEQ]
            )
        )
        return int(rows.get(_NEXT_SEQ, 0)), int(rows.get(_NEXT_TEMPLATE_SEQ, 0))

    def find(self, keys: list[str]) -> list[SignatureState]:
        texts: dict[str, str] = {}
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "select s.id, s.grouping_state from signatures s where s.id in "
                f"(select signature_id from grouping_keys where key in ({marks}))",
                chunk,
            )
            texts.update((signature_id, text) for signature_id, text in rows if text)
        return states_from_json(texts.values())

    def learned_keys(self, bucket: str) -> set[str]:
        prefix = f"v:{bucket}{SEPARATOR}"
        rows = self._db.execute(
            "select distinct key from grouping_keys where key >= ? and key < ?",
            [prefix, prefix + "\U0010ffff"],
        )
        return {key[len(prefix) :] for (key,) in rows}

    def exists(self, signature_id: str) -> bool:
        return (
            self._db.execute("select 1 from signatures where id = ?", [signature_id]).fetchone() is not None
        )


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), _CHUNK):
        yield keys[start : start + _CHUNK]
