"""The occurrences a round counted, for its commit to remember (`Store.mark_seen_stored`), so no later round
counts them again: each one's event id, the signature it was counted in and its moment, in the order
counted.

    counted = Counted()
    counted.append(event_id, signature_id, moment)       as the grouping step counts each occurrence
    store.mark_seen_stored(counted.stored())             in the commit's one transaction

Each is kept as `seen_events` stores it (the id in its stored form, `store.seen.stored_id`; the moment in
microseconds since the epoch), so the commit writes them without converting a row.

A round may count a million; past `IN_MEMORY` they wait in a temporary file (anonymous, gone when it is
closed), pickled `IN_MEMORY` at a time, so the round's memory does not grow with them. (A batch is written
and read back whole, in order: nothing is looked up among them, so a file of pickled batches serves, at a
fraction of what inserting each one into a temporary database cost.) The signature database is not touched
before the commit: a round that fails leaves nothing of them behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import compress
from operator import itemgetter

from rounds_bot.round.spilled import SpilledBatches
from rounds_bot.store.seen import microseconds, stored_id

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

#: an occurrence as kept: event id (stored form), signature id, moment in microseconds since the epoch
_Row = tuple[str | bytes, str, int]
_id_and_moment = itemgetter(0, 2)
_moment = itemgetter(2)


class Counted:
    """The round's counted occurrences, in the order counted; read back (as often as needed) as (event id,
    signature id, moment in UTC) tuples: the moment to the microsecond, the precision it is stored with."""

    IN_MEMORY = 20_000

    def __init__(self) -> None:
        self._rows: list[_Row] = []
        self._spilled: SpilledBatches[_Row] = SpilledBatches("rounds-counted-")

    def append(self, event_id: str, signature_id: str, moment: datetime) -> None:
        # a moment in UTC (the usual) needs no conversion: `microseconds` gives the same number
        at = (moment - _EPOCH) // _MICROSECOND if moment.tzinfo is UTC else microseconds(moment)
        self._rows.append((stored_id(event_id), signature_id, at))
        if len(self._rows) >= self.IN_MEMORY:
            self._flush()

    def append_at(self, event_id: str, signature_id: str, micros: int) -> None:
        """`append` of an occurrence whose moment in UTC is given as microseconds since the epoch (what the
        tally of it gave, `Tally.add`)."""
        self._rows.append((stored_id(event_id), signature_id, micros))
        if len(self._rows) >= self.IN_MEMORY:
            self._flush()

    def __len__(self) -> int:
        return len(self._spilled) + len(self._rows)

    def __iter__(self) -> Iterator[tuple[str, str, datetime]]:
        return ((_event_id(key), sid, _EPOCH + timedelta(microseconds=at)) for key, sid, at in self._kept())

    def stored(self, since: datetime | None = None) -> Iterator[tuple[str | bytes, int]]:
        """Each occurrence as `seen_events` keeps it, (stored id, microseconds), in the order counted; with
        `since`, only those at or after it (the ones a commit that forgets the older ones keeps)."""
        at_least = None if since is None else microseconds(since)
        for batch in self._spilled:
            yield from _stored(batch, at_least)
        yield from _stored(self._rows, at_least)

    def signature_of(self) -> dict[str, str]:
        """Each event id counted, with the signature it was counted in."""
        return {_event_id(key): signature_id for key, signature_id, _ in self._kept()}

    def close(self) -> None:
        self._spilled.close()

    def _kept(self) -> Iterator[_Row]:
        for batch in self._spilled:
            yield from batch
        yield from self._rows

    def _flush(self) -> None:
        self._spilled.write(self._rows)
        self._rows = []


def _stored(batch: list[_Row], at_least: int | None) -> Iterator[tuple[str | bytes, int]]:
    """A batch's occurrences as stored, those at or after `at_least` microseconds only (all when None): a
    batch with none older (a round's usual one) is given whole once its oldest is found, one with some is
    picked from; neither costs a Python call per row."""
    if at_least is None or min(map(_moment, batch), default=at_least) >= at_least:
        return map(_id_and_moment, batch)
    return compress(map(_id_and_moment, batch), map(at_least.__le__, map(_moment, batch)))


def _event_id(key: str | bytes) -> str:
    """The id as it was counted, from its stored form (bytes are the id's lowercase hexadecimal digits)."""
    return key.hex() if isinstance(key, bytes) else key
