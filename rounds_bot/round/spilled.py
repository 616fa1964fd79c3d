"""Batches of rows a round keeps past what it holds in memory: pickled one batch at a time into a temporary
file (anonymous, gone when it is closed), read back whole, in the order written.

    spilled = SpilledBatches("rounds-counted-")
    spilled.write(rows)                  a batch, as the round's memory fills
    for batch in spilled: ...            every batch, in order (as often as needed)
    spilled.close()

Nothing is looked up among the rows, only read through in order: a file of pickled batches serves, at a
fraction of what inserting each row into a temporary database costs.

Blobs a round reads back one by one, few of them, if at all (`SpilledBlobs`: the samples of its signatures
past each one's first, `tally.Samples`), wait in a file of their own, each found by the number it was given:

    blobs = SpilledBlobs("rounds-samples-")
    number = blobs.put(blob)
    blobs.get(number) == blob
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from collections.abc import Iterator
from typing import IO, Generic, TypeVar

_T = TypeVar("_T")


class SpilledBatches(Generic[_T]):
    """Lists of rows written to a temporary file, read back (as often as needed) in the order written."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._file: IO[bytes] | None = None
        #: the length of each batch written, in the order written (one after the other from the file's start)
        self._lengths: list[int] = []
        self._rows = 0

    def write(self, batch: list[_T]) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix=self._prefix)  # noqa: SIM115 (closed by close())
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        self._file.seek(0, 2)  # after the batches written (a pass may have read from anywhere)
        self._file.write(data)
        self._lengths.append(len(data))
        self._rows += len(batch)

    def __len__(self) -> int:
        """The rows written, in all batches."""
        return self._rows

    def __iter__(self) -> Iterator[list[_T]]:
        """The batches in the file, in the order written, one at a time (each read when the one before has
        been gone through: a pass holds one batch; the batches written meanwhile are read too)."""
        offset = index = 0
        while index < len(self._lengths):
            assert self._file is not None
            length = self._lengths[index]
            self._file.seek(offset)
            batch: list[_T] = pickle.loads(self._file.read(length))  # this object's own file
            offset += length
            index += 1
            yield batch

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._lengths = []


class SpilledBlobs:
    """Byte strings written one after the other to a temporary file (anonymous: gone when this object is, or
    closed), each read back by its number (the order it was put in, from 0): 16 bytes of memory each."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._file: IO[bytes] | None = None
        self._starts = array("q")  # where each blob starts in the file, in the order put
        self._lengths = array("q")
        self._end = 0

    def put(self, blob: bytes) -> int:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix=self._prefix)  # noqa: SIM115 (closed by close())
        self._file.seek(self._end)  # after the blobs put (a `get` may have read from anywhere)
        self._file.write(blob)
        self._starts.append(self._end)
        self._lengths.append(len(blob))
        self._end += len(blob)
        return len(self._starts) - 1

    def get(self, number: int) -> bytes:
        if self._file is None or not 0 <= number < len(self._starts):
            raise IndexError(f"blob {number} is not kept")
        self._file.seek(self._starts[number])
        return self._file.read(self._lengths[number])

    def __len__(self) -> int:
        return len(self._starts)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
