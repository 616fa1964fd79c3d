"""A signature's varied samples this round: the first an object, the others packed or in the round's file."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterator
from typing import Protocol, overload

import lz4.frame

from rounds_bot.models import ErrorEvent, sharing_fields_set
from rounds_bot.tally.list_like import ListLike

SAMPLES_PER_SIGNATURE = 5


class SampleKeeper(Protocol):
    """Where a round's samples past each signature's first wait (`round.spilled.SpilledBlobs`): a blob given
    is read back as it was, by the number `put` answered."""

    def put(self, blob: bytes) -> int: ...

    def get(self, number: int) -> bytes: ...


class Samples(ListLike[ErrorEvent]):
    """A signature's samples: up to `SAMPLES_PER_SIGNATURE` events that differ from each other (another
    service, version or message), in the order offered. The first stays an object (it is the signature's
    representative, `Signature.first`, read at once), its set of given fields shared (`sharing_fields_set`).
    The others are read only if the signature is diagnosed: given a `SampleKeeper` (a round's), each is
    pickled, compressed and handed to it as it is kept, so a round's memory does not hold them (a round of
    20,000 signatures held 80 MB of them); without one, they are kept pickled and compressed once the set is
    full (similar events of one signature compress to a fifth). Either way they are read back as given.
    What tells a new sample from those kept: the first's own fields, and a digest of each other's
    (`_kind_digest`), not their messages, which a round of 20,000 signatures held 17 MB of."""

    __slots__ = ("_digests", "_first", "_keeper", "_kept", "_packed", "_rest")

    def __init__(self, keeper: SampleKeeper | None = None) -> None:
        self._first: ErrorEvent | None = None
        self._digests = b""  # `_kind_digest` of each sample after the first, one after the other
        self._rest: list[ErrorEvent] | None = None  # made for the second sample (without a keeper)
        self._packed: bytes | None = None
        self._keeper = keeper
        self._kept: tuple[int, ...] = ()  # the keeper's number of each sample after the first

    def offer(self, event: ErrorEvent) -> None:
        """Keep `event` if there is room and no sample is like it."""
        digests = self._digests
        if len(digests) >= _DIGESTS_FULL:
            return
        first = self._first
        if first is None:
            self._first = sharing_fields_set(event)
            return
        if (
            event.message == first.message
            and event.service == first.service
            and event.service_version == first.service_version
        ):
            return
        digest = _kind_digest(event)
        if _digested(digests, digest):
            return
        self._digests = digests = digests + digest
        if self._keeper is not None:
            self._kept = (*self._kept, self._keeper.put(_packed([event])))
            return
        if self._rest is None:
            self._rest = []
        self._rest.append(event)
        if len(self) == SAMPLES_PER_SIGNATURE:  # full: no sample is added any more
            self._packed = _packed(self._rest)
            self._rest = None

    def _events(self) -> list[ErrorEvent]:
        if self._first is None:
            return []
        if self._keeper is not None:
            return [self._first, *(_unpacked(self._keeper.get(number))[0] for number in self._kept)]
        if self._packed is None:
            return [self._first, *(self._rest or ())]
        return [self._first, *_unpacked(self._packed)]

    def __len__(self) -> int:
        return 0 if self._first is None else 1 + len(self._digests) // _KIND_DIGEST_SIZE

    def __iter__(self) -> Iterator[ErrorEvent]:
        return iter(self._events())

    @overload
    def __getitem__(self, index: int) -> ErrorEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[ErrorEvent]: ...
    def __getitem__(self, index: int | slice) -> ErrorEvent | list[ErrorEvent]:
        if index == 0 and self._first is not None:
            return self._first
        return self._events()[index]


#: bytes of a sample's kind digest. Two different kinds share a digest with a chance of about 2**-128 for a
#: pair (BLAKE2b's output is indistinguishable from random, RFC 7693 section 1; a keyless 16-byte digest
#: resists collisions to about 2**64 work, a birthday search): among the ten pairs of a signature's five
#: samples, one in 10**37. A collision would only leave out a sample, never count or group differently.
_KIND_DIGEST_SIZE = 16
#: the digests of a full set of samples (those after the first)
_DIGESTS_FULL = _KIND_DIGEST_SIZE * (SAMPLES_PER_SIGNATURE - 1)


def _kind_digest(event: ErrorEvent) -> bytes:
    """A digest of what makes a sample differ from others: its service, version and message, written as
    the tuple's `repr`, which tells them apart unambiguously (each string quoted with its quotes and
    backslashes escaped, None apart from "'None'"; `ast.literal_eval` reads the tuple back); encoded
    "surrogatepass", as `repr` keeps a lone surrogate a message read from JSON may hold."""
    kind = repr((event.service, event.service_version, event.message))
    return hashlib.blake2b(kind.encode("utf-8", "surrogatepass"), digest_size=_KIND_DIGEST_SIZE).digest()


def _digested(digests: bytes, digest: bytes) -> bool:
    """Whether `digest` is one of those `digests` holds one after the other (compared at their places)."""
    size = _KIND_DIGEST_SIZE
    return any(digests[start : start + size] == digest for start in range(0, len(digests), size))


def _packed(events: list[ErrorEvent]) -> bytes:
    return bytes(lz4.frame.compress(pickle.dumps(events, pickle.HIGHEST_PROTOCOL)))


def _unpacked(blob: bytes) -> list[ErrorEvent]:
    events: list[ErrorEvent] = pickle.loads(lz4.frame.decompress(blob))  # packed by `_packed`, this round
    return events
