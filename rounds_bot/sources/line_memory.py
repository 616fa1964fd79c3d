"""Export lines read before, recognised by their bytes, so a quiet round does not decode them again.

What reading an export line finds depends on its bytes alone: each error record's id is a hash of what the
line says about it, its time is written in the line, and so is whether the line holds log records below
ERROR (the neighbours an error log on a later line may take as its context). So what a line gave can be kept
under a hash of its bytes and stand for decoding it when the same bytes come again:

    memory = LineMemory.restore(window.source_state)   what the last round kept (nothing on a first round)
    read = memory.recall(digest_of(raw))                the line's error records, whether it has neighbours
    memory.keep(digest, read)                           what a line gave, kept for the next round
    PollResult(..., source_state=memory.state())        saved with the round, in its one transaction

It cannot go stale: a line edited in place has other bytes and another hash, and is decoded like any new
line; the state names the format and the release that made it, so another way of computing ids (a new
release) starts afresh. Whether a remembered record was counted is never remembered: the reader asks the
database each round, as it does for a decoded record. A round that fails writes nothing, so its successor
finds what the last good round kept. Memory stays bounded: only the lines of the file as it was last read
are kept, at most `MAX_RECORDS` error records in all, each packed into a few bytes.

A remembered line that is not decoded still holds neighbours for error logs after it: `Deferred` keeps
where those lines are in the file, and the reader reads them back, in file order, just before the next line
it decodes that has log records, so the neighbours are noted in the order a full read notes them.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import sys
from array import array
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat
from pathlib import Path
from typing import IO, Any

from rounds_bot import __version__

#: the layout of the state below; a change starts the memory afresh
FORMAT = 1
#: the key of a state's lines: a mapping of each line's digest to what it gave (`Packed`), which a store may
#: keep apart from the rest of the state and hand back as a mapping that reads a line when it is asked for
LINES = "lines"
#: error records remembered at most (24 bytes each where they are saved); lines past it are decoded
MAX_RECORDS = 500_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_ID_BYTES = 16  # an event id is 32 hex digits (`otlp_build.stable_id`)
#: what a line gave, packed: whether it has log records below ERROR, its records' ids (16 bytes each, most
#: significant first) and their times (8-byte signed microseconds each, least significant first, whatever
#: the machine: the same bytes on any machine a database is moved to)
Packed = tuple[bool, bytes, bytes]


def digest_of(raw: bytes) -> str:
    """The line's identity: SHA-256 (a hash nobody can make two lines share), cut to 128 bits."""
    return hashlib.sha256(raw).hexdigest()[:32]


@dataclass(frozen=True)
class Read:
    """What decoding a line gave: its error records as they were offered (event id as the number its 32 hex
    digits spell, time in microseconds since the epoch, as the events' times are kept), and whether it has
    log records below ERROR."""

    records: tuple[tuple[int, int], ...]
    neighbours: bool

    @classmethod
    def of(cls, offered: list[tuple[int, int]], neighbours: bool) -> Read:
        """What a line gave: its records as offered (id as a number, time in microseconds, `micros_of`)."""
        return cls(tuple(offered), neighbours)

    def packed(self) -> Packed:
        # the ids and the times apart, each spelled by `map` (no generator frame resumed once a record)
        numbers, moments = zip(*self.records, strict=True) if self.records else ((), ())
        ids = b"".join(map(int.to_bytes, numbers, repeat(_ID_BYTES), repeat("big")))  # type: ignore[arg-type]
        micros = array("q", moments)
        return self.neighbours, ids, _little_endian(micros).tobytes()

    @classmethod
    def unpacked(cls, value: Packed) -> Read:
        neighbours, raw_ids, packed_micros = value
        micros = array("q")
        micros.frombytes(packed_micros)
        numbers = [
            int.from_bytes(raw_ids[at : at + _ID_BYTES], "big") for at in range(0, len(raw_ids), _ID_BYTES)
        ]
        return cls(records=tuple(zip(numbers, _little_endian(micros), strict=True)), neighbours=neighbours)


def packed_from_text(value: Any) -> Packed | None:
    """A line as a state of the earlier form kept it in JSON (`[neighbours, ids, times]`, the bytes in
    base64, the times in the byte order of the machine that wrote them), packed; None when it is not one
    (a memory is only ever a shortcut: a line it cannot give is decoded)."""
    if not isinstance(value, list) or len(value) != 3:
        return None
    neighbours, ids, times = value
    if not isinstance(neighbours, int) or not isinstance(ids, str) or not isinstance(times, str):
        return None
    try:
        raw_ids, raw_times = base64.b64decode(ids, validate=True), base64.b64decode(times, validate=True)
    except ValueError:
        return None
    if len(raw_ids) % _ID_BYTES or len(raw_times) != len(raw_ids) // 2:
        return None
    micros = array("q")
    micros.frombytes(raw_times)  # in the order of the machine that wrote them, as this one reads them
    return bool(neighbours), raw_ids, _little_endian(micros).tobytes()


def _little_endian(micros: array[int]) -> array[int]:
    """The times as little-endian bytes hold them, either way (swapping twice gives them back)."""
    if sys.byteorder == "big":
        micros.byteswap()
    return micros


def event_id_of(number: int) -> str:
    """The event id a record's number spells (`Read.records`)."""
    return f"{number:032x}"


def micros_of(moment: datetime) -> int:
    return (moment - EPOCH) // _MICROSECOND


def moment_of(micros: int) -> datetime:
    return EPOCH + timedelta(microseconds=micros)


class KeptLines(dict[str, Packed]):
    """The lines a round keeps (digest to what the line gave), and where they came from: `carried_from`,
    the mapping the round restored (the store's, when it keeps them apart), and `fresh`, the digests of
    the lines that were not in it. A store that holds `carried_from` can then write only what changed:
    the lines it holds but this round did not keep go, the fresh ones come; every other line is the one
    it holds, unchanged (the same bytes gave the same records). A round that restored nothing (a first
    round) notes no fresh line: all its lines are written, and a set of them would only add to what the
    commit holds."""

    def __init__(self, carried_from: Mapping[str, Packed] | None) -> None:
        super().__init__()
        self.carried_from = carried_from
        self.fresh: set[str] = set()


class LineMemory:
    """The lines read before (by digest), and those read this round, kept for the next."""

    def __init__(
        self, remembered: Mapping[str, Packed], carried_from: Mapping[str, Packed] | None = None
    ) -> None:
        self._remembered = remembered
        self._kept = KeptLines(carried_from)
        self._kept_records = 0

    @classmethod
    def restore(cls, state: dict[str, Any] | None) -> LineMemory:
        """The memory a round's state holds; empty when it has none, or one another release wrote. Its lines
        are a mapping (`LINES`): a dictionary, or the store's table. They are read into a dictionary in one
        pass (`items`): a round asks for every line of its file, and one pass costs far less than a query a
        line; what it holds is bounded as the memory is (`MAX_RECORDS`), and the values are the very ones
        the lines kept again hold."""
        mine = state is not None and state.get("format") == FORMAT and state.get("release") == __version__
        lines = state.get(LINES) if state is not None and mine else None
        if not isinstance(lines, Mapping):
            return cls({})
        return cls(dict(lines.items()), carried_from=lines)

    def reads(self) -> Iterator[Read]:
        """Every line remembered, in no particular order."""
        return (Read.unpacked(value) for value in self._remembered.values())

    def recall(self, digest: str) -> Read | None:
        value = self._remembered.get(digest)
        return None if value is None else Read.unpacked(value)

    def keep(self, digest: str, read: Read) -> None:
        """Keep a line read this round, while the bound allows (a line read twice is kept once)."""
        if digest in self._kept or self._kept_records + len(read.records) > MAX_RECORDS:
            return
        # a line remembered is kept as it was saved: the same bytes gave the same records
        remembered = self._remembered.get(digest)
        if remembered is None and self._kept.carried_from is not None:
            self._kept.fresh.add(digest)
        self._kept[digest] = remembered or read.packed()
        self._kept_records += len(read.records)

    def state(self) -> dict[str, Any]:
        """What the next round restores: the lines of the file as this round read it."""
        return {"format": FORMAT, "release": __version__, LINES: self._kept}


class Deferred:
    """Where the remembered lines with neighbours are in the file, to be read back when a later line needs
    them (`take`). Reads the file through one handle, forwards only, closed when the reading ends:

        with Deferred(path, gzipped) as deferred: ...
    """

    def __init__(self, path: Path, gzipped: bool) -> None:
        self.path, self.gzipped = path, gzipped
        self._places: list[tuple[int, int]] = []
        self._files = ExitStack()
        self._handle: IO[bytes] | gzip.GzipFile | None = None

    def __enter__(self) -> Deferred:
        return self

    def __exit__(self, *exc: object) -> None:
        self._places = []
        self._files.close()

    def __bool__(self) -> bool:
        return bool(self._places)

    def add(self, offset: int, length: int) -> None:
        self._places.append((offset, length))

    def take(self) -> Iterator[bytes]:
        """The deferred lines, in file order; then there are none."""
        if self._handle is None:
            if self.gzipped:
                self._handle = self._files.enter_context(gzip.GzipFile(self.path, "rb"))
            else:
                self._handle = self._files.enter_context(self.path.open("rb"))
        handle, places, self._places = self._handle, self._places, []
        for offset, length in places:
            handle.seek(offset)
            yield handle.read(length)
