"""The grouping engine's look-ups in the database: known signatures found by the keys it asks for.

`grouping_keys` files each signature under the keys `grouping.known.lookup_keys` gives its
grouping state (a fingerprint hash, an error code, its templates' skeletons and shelves, the keys
its templates use, its service's vectors); `grouping_vectors` holds each similarity vector with
what tier 3 weighs besides (seq, frames, crash site), so a service's vectors are read without
reading its signatures; `meta` keeps the next signature and template seq. A round's engine reads
through `StoredSignatures`, so it loads the few signatures its events need instead of every
signature ever seen.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlite_utils import Database

from rounds_bot.grouping.known import StoredVector, lookup_keys, stored_vector
from rounds_bot.grouping.lookup_keys import SEPARATOR
from rounds_bot.grouping.state import SignatureState, states_from_json
from rounds_bot.store.batches import write_many

_NEXT_SEQ = "grouping_next_seq"
_NEXT_TEMPLATE_SEQ = "grouping_next_template_seq"
#: keys asked for in one statement at most (SQLite's limit on bound parameters is 32,766)
_CHUNK = 500


def create_grouping_keys(db: Database) -> None:
    """Migration: the lookup table, filled from the signatures already saved."""
    db.table("grouping_keys").create({"key": str, "signature_id": str}, pk=("key", "signature_id"))
    db.table("grouping_keys").create_index(["signature_id"])
    for signature_id, state in _saved_states(db):
        _file_keys(db, signature_id, state)


def create_grouping_vectors(db: Database) -> None:
    """Migration: the similarity vectors apart, filled from the signatures already saved."""
    db.table("grouping_vectors").create(
        {
            "signature_id": str,
            "service": str,
            "seq": int,
            "packed": str,
            "with_frames": int,
            "crash_site": str,
        },
        pk="signature_id",
    )
    db.table("grouping_vectors").create_index(["service"])
    for signature_id, state in _saved_states(db):
        _file_vector(db, signature_id, state)


def _saved_states(db: Database) -> Iterator[tuple[str, SignatureState]]:
    for signature_id, text in db.execute("select id, grouping_state from signatures").fetchall():
        if text:
            yield signature_id, SignatureState.model_validate_json(text)


def index_grouping_state(db: Database, signature_id: str, state: SignatureState | None) -> None:
    """File a signature under its lookup keys and its vector (replacing what was filed before)."""
    db.execute("delete from grouping_keys where signature_id = ?", [signature_id])
    db.execute("delete from grouping_vectors where signature_id = ?", [signature_id])
    if state is not None:
        _file_keys(db, signature_id, state)
        _file_vector(db, signature_id, state)


def index_grouping_states(db: Database, states: list[tuple[str, SignatureState | None]]) -> None:
    """`index_grouping_state` of each (signature id, state) in order, with a statement per kind of row for
    all of them (a round files thousands): what filing them one by one leaves, the last state of a
    signature given twice filed for it."""
    latest = dict(states)  # a signature given twice: its last state, in the place it was first given
    ids = [(signature_id,) for signature_id in latest]
    write_many(db, "delete from grouping_keys where signature_id = ?", ids)
    write_many(db, "delete from grouping_vectors where signature_id = ?", ids)
    filed = [(signature_id, state) for signature_id, state in latest.items() if state is not None]
    write_many(
        db,
        "insert or ignore into grouping_keys (key, signature_id) values (?, ?)",
        [(key, signature_id) for signature_id, state in filed for key in lookup_keys(state)],
    )
    every = [state for _, state in states if state is not None]  # each raised the counters when filed
    if every:
        _raise_counter(db, _NEXT_SEQ, max(state.seq for state in every) + 1)
    template_seqs = [t.seq for state in every for t in state.templates]
    if template_seqs:
        _raise_counter(db, _NEXT_TEMPLATE_SEQ, max(template_seqs) + 1)
    write_many(
        db,
        "insert or replace into grouping_vectors "
        "(signature_id, service, seq, packed, with_frames, crash_site) values (?, ?, ?, ?, ?, ?)",
        [_vector_row(signature_id, state) for signature_id, state in filed if state.similarity is not None],
    )


def _file_vector(db: Database, signature_id: str, state: SignatureState) -> None:
    if state.similarity is None:
        return
    db.execute(
        "insert or replace into grouping_vectors "
        "(signature_id, service, seq, packed, with_frames, crash_site) values (?, ?, ?, ?, ?, ?)",
        _vector_row(signature_id, state),
    )


def _vector_row(signature_id: str, state: SignatureState) -> tuple[str, str, int, str, int, str | None]:
    stored = stored_vector(state)
    return signature_id, state.service, stored.seq, stored.packed, int(stored.with_frames), stored.crash_site


def _file_keys(db: Database, signature_id: str, state: SignatureState) -> None:
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


def nothing_to_look_up(db: Database) -> bool:
    """Whether the database holds nothing `StoredSignatures` could find: no signature (their grouping
    states, templates included), no lookup key and no vector. The counters in `meta` are not asked: they
    are read as they are."""
    row = db.execute(
        "select exists(select 1 from signatures) or exists(select 1 from grouping_keys) "
        "or exists(select 1 from grouping_vectors)"
    ).fetchone()
    return not row[0]


class StoredSignatures:
    """`grouping.known.KnownSignatures` over the signature database.

    `nothing_stored`: the caller found `nothing_to_look_up` when it opened the look-up, and the tables it
    reads do not change while it is in use; each look-up then gives its empty answer without a query (a
    first round asks for the keys of every event it groups, and none can be found)."""

    def __init__(self, db: Database, *, nothing_stored: bool = False) -> None:
        self._db = db
        self._nothing_stored = nothing_stored

    def holds_nothing(self) -> bool:
        return self._nothing_stored

    def counters(self) -> tuple[int, int]:
        rows = dict(
            self._db.execute(
                "select key, value from meta where key in (?, ?)", [_NEXT_SEQ, _NEXT_TEMPLATE_SEQ]
            )
        )
        return int(rows.get(_NEXT_SEQ, 0)), int(rows.get(_NEXT_TEMPLATE_SEQ, 0))

    def find(self, keys: list[str]) -> list[SignatureState]:
        if self._nothing_stored:
            return []
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
        if self._nothing_stored:
            return set()
        prefix = f"v:{bucket}{SEPARATOR}"
        rows = self._db.execute(
            "select distinct key from grouping_keys where key >= ? and key < ?",
            [prefix, prefix + "\U0010ffff"],
        )
        return {key[len(prefix) :] for (key,) in rows}

    def vectors(self, service: str) -> list[StoredVector]:
        if self._nothing_stored:
            return []
        rows = self._db.execute(
            "select signature_id, seq, packed, with_frames, crash_site from grouping_vectors "
            "where service = ?",
            [service],
        )
        return [StoredVector(sid, seq, packed, bool(frames), site) for sid, seq, packed, frames, site in rows]

    def by_id(self, signature_id: str) -> SignatureState | None:
        if self._nothing_stored:
            return None
        row = self._db.execute(
            "select grouping_state from signatures where id = ?", [signature_id]
        ).fetchone()
        return SignatureState.model_validate_json(row[0]) if row and row[0] else None

    def exists(self, signature_id: str) -> bool:
        if self._nothing_stored:
            return False
        return (
            self._db.execute("select 1 from signatures where id = ?", [signature_id]).fetchone() is not None
        )


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), _CHUNK):
        yield keys[start : start + _CHUNK]
