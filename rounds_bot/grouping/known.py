"""Known signatures the engine has not loaded yet: looked up by what an event needs, when it needs it.

A round's engine starts with nothing in memory and asks a `KnownSignatures` (the signature
database) for the signatures its events point at: a fingerprint hash, an error code, the
templates that could match a skeleton; for tier 3 it reads the service's vectors alone (with
what deciding on a neighbour takes: its seq, whether it has frames, its crash site) and loads
a whole signature only when an error joins it. So a quiet round, whose events all match known
signatures, reads a handful of signatures per event, however many are known. Each signature
is found under the keys `lookup_keys` gives it:

    h:<hash>                          a fingerprint hash
    c:<service>\\x1f<code>             an error code of a service
    k:<bucket>\\x1f<first skeleton>    a template, by the skeleton it was created from
    f:<bucket>\\x1f<n>\\x1f<first token> a template of n tokens, by its first token (`<*>` too)
    n:<bucket>\\x1f<n>                 a template of n tokens
    v:<bucket>\\x1f<key>               a key its templates use (`user=<*>`: `user`)
    s:<service>                       a similarity vector of the service

An engine that loads what it is given this way answers exactly as one given every signature up
front: each lookup brings every signature that could take part in the decision at hand.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from rounds_bot.grouping.lookup_keys import SEPARATOR, length_key, service_key, shelf_key, skeleton_key
from rounds_bot.grouping.skeletons import keys_of
from rounds_bot.grouping.state import SignatureState


class StoredVector(NamedTuple):
    """What tier 3 needs of a known signature to weigh it as a neighbour."""

    signature_id: str
    seq: int
    packed: str  # `vectors.SimilarityVector.packed`
    with_frames: bool
    crash_site: str | None


class KnownSignatures(Protocol):
    def counters(self) -> tuple[int, int]:
        """The next signature seq and the next template seq: above every one known."""
        ...

    def find(self, keys: list[str]) -> list[SignatureState]:
        """Every signature filed under any of `keys` (see the module docstring)."""
        ...

    def learned_keys(self, bucket: str) -> set[str]:
        """The keys (`user` of `user=<*>`) the templates of a bucket use."""
        ...

    def vectors(self, service: str) -> list[StoredVector]:
        """The similarity vectors of a service's signatures."""
        ...

    def by_id(self, signature_id: str) -> SignatureState | None: ...

    def exists(self, signature_id: str) -> bool: ...

    def holds_nothing(self) -> bool:
        """Every look-up answers empty, and keeps doing so while the engine uses this (a first round's empty
        database, which nothing writes to meanwhile): no signature, of any fingerprint version, is found."""
        ...


def lookup_keys(state: SignatureState) -> list[str]:
    """The keys a signature is found under."""
    keys = [f"h:{digest}" for digest in state.hashes]
    keys += [f"c:{state.service}{SEPARATOR}{code}" for code in state.error_codes]
    for template in state.templates:
        keys.append(skeleton_key(template.bucket, tuple(template.first_tokens)))
        keys += [f"v:{template.bucket}{SEPARATOR}{key}" for key in sorted(keys_of(tuple(template.tokens)))]
        if not template.exact and template.tokens:
            keys.append(shelf_key(template.bucket, len(template.tokens), template.tokens[0]))
            keys.append(length_key(template.bucket, len(template.tokens)))
    if state.similarity is not None:
        keys.append(service_key(state.service))
    return list(dict.fromkeys(keys))


def stored_vector(state: SignatureState) -> StoredVector:
    """What tier 3 reads of a signature with a vector."""
    vector = state.similarity
    assert vector is not None, "only signatures with a vector are weighed"
    return StoredVector(state.signature_id, state.seq, vector.packed, vector.with_frames, state.crash_site)
