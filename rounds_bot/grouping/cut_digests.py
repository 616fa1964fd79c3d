"""The lookup hashes of a trace, kept by the digest of its text with the message cut out.

A round places an occurrence of a problem it tallies already by its trace's lookup hashes alone
(`GroupingEngine.place_each`). Those hashes are a function of the trace's reading (its runtime, notes,
exception types, relations and frames) and its service, never of its message, values, environment or
version (`fingerprint.with_view`). When the event's message can be cut out of its trace (`trace_cut`), the
reading is the cut text's with the message put back into one value, so it is a function of the cut text,
or for a dump read as Go of the cut text's dump key (`go_key`: the dumps of one key read alike), as
`trace_memo` keeps it. So the hashes are kept here per cut text's digest (a 128-bit BLAKE2b of that text
or dump key: the same few bytes for a trace of any length), service and whether earlier versions' hashes
are worked out, with what decides whether an occurrence's message may stand in that text at all (the
runtime and the placeholder line's votes, `Cut.agrees`, asked of every occurrence). A repeat is placed by
cutting its message out and hashing what is left: it is neither parsed nor are its frames read again,
however many distinct traces a round holds (the memos of parsed traces are bounded by bytes, and a round
of many problems outgrows them).

Why an entry cannot go stale: it is keyed on everything its value depends on (the cut text or dump key,
through a digest whose collisions are never met in practice, the service and the versions' flag), its
value is worked out from an occurrence of that very key by the same reading grouping gives it, and the
reading of a key never changes. A Go reading is kept under the dump key only when the text read as Go, as
`trace_memo` keeps it; any other under the text, so a text's key is looked up the same two ways.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo
from rounds_bot.grouping.stacktrace import LineVotes, Runtime
from rounds_bot.grouping.stacktrace.go_key import DumpKey
from rounds_bot.grouping.trace_cut import PLACEHOLDER, Cut

#: entries kept before the memo is cleared, and the bytes they may hold: an entry of six hashes (a trace's
#: usual number with earlier versions') is about 800 bytes, so a round of some 18,000 distinct traces keeps
#: them all
MEMO_LIMIT = 32_768
BUDGET = 14 * MB
#: what an entry holds beside its digests: the key's digest and tuple, the entry and the dict slot
_ENTRY_SIZE = OVERHEAD + 64
#: what a lookup hash holds: 40 hexadecimal digits in a string object
_DIGEST_SIZE = 90

#: a digest of a cut text or dump key, the service, and whether earlier versions' hashes are worked out
_Key = tuple[bytes, str, bool]


@dataclass(frozen=True, slots=True)
class CutPlace:
    """What placing a repeat of a cut text needs: whether its message may stand in the text (the runtime
    and the placeholder line's votes the reading gave, `Cut.agrees`), and the lookup hashes (None: the
    reading gives no trace fingerprint, so such an event is placed by its full assignment)."""

    runtime: Runtime
    votes: LineVotes
    digests: tuple[str, ...] | None
    #: how many of `digests`, first, are earlier versions' (`Fingerprint.legacy_hashes`): a signature found
    #: by one of them is registered under the rest (`found_earlier`)
    earlier: int = 0


class CutDigests:
    """Lookup hashes by cut text (see the module docstring); bounded, cleared whole when full."""

    def __init__(self) -> None:
        self._memo: BoundedMemo[_Key, CutPlace | None] = BoundedMemo(MEMO_LIMIT, BUDGET, _size)
        #: occurrences placed from an entry (what a bench reports)
        self.hits = 0

    def get(self, found: Cut, service: str, previous_versions: bool) -> CutPlace | Missing | None:
        """The entry of a cut text (None: its occurrences are read whole, or their reading gives no trace
        fingerprint), or `MISSING`."""
        # the memo's dict looked up directly: asked once per occurrence with a trace
        entry: Callable[..., CutPlace | Missing | None] = self._memo.get
        dump = found.dump
        if dump is not None:
            known = entry((_dump_digest(dump), service, previous_versions), MISSING)
            if known is not MISSING:
                self.hits += 1
                return known  # (only Go readings are kept under a dump key)
        known = entry((_text_digest(found), service, previous_versions), MISSING)
        if known is not MISSING:
            self.hits += 1
        return known

    def put(self, found: Cut, service: str, previous_versions: bool, place: CutPlace | None) -> None:
        """Keep the entry of a cut text: under its dump key when its reading is Go's, else its text."""
        dump = found.dump if place is not None and place.runtime == "go" else None
        digest = _dump_digest(dump) if dump is not None else _text_digest(found)
        self._memo.put((digest, service, previous_versions), place)


class Missing(Enum):
    """No entry for a cut text yet."""

    MISSING = "missing"


MISSING = Missing.MISSING


#: the placeholder as UTF-8
_PLACEHOLDER_BYTES = PLACEHOLDER.encode()


def _text_digest(found: Cut) -> bytes:
    """The digest of the cut text's UTF-8 bytes. Those of an ASCII source are its bytes around the
    message with the placeholder's between them, hashed from one encoding of the source, without putting
    the cut text together (which would copy it at two bytes a character, for the placeholder's sake)."""
    source = found.source
    if not source.isascii():
        text = found.text.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(text, digest_size=16, person=b"text").digest()
    data = memoryview(source.encode("ascii"))
    hashed = hashlib.blake2b(data[: found.start], digest_size=16, person=b"text")
    hashed.update(_PLACEHOLDER_BYTES)
    hashed.update(data[found.end :])
    return hashed.digest()


def _dump_digest(dump: DumpKey) -> bytes:
    """The digest of a dump key, by its `marshal` bytes: a tuple of strings and Nones written so that it reads
    back as the same tuple (no two keys give the same bytes), in the format's version 0, whose bytes are the
    values' alone (no references to objects written before, no mark of an interned string), so equal keys
    give the same bytes. Three times quicker than writing out its `repr`."""
    return hashlib.blake2b(marshal.dumps(dump, 0), digest_size=16, person=b"dump").digest()


def _size(key: _Key, place: CutPlace | None) -> int:
    digests = place.digests if place is not None and place.digests is not None else ()
    return _ENTRY_SIZE + len(key[1]) + _DIGEST_SIZE * len(digests)
