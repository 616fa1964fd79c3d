"""The signatures an engine knows, and the keys that lead to them: hashes, error codes, templates.

A signature's identity is registered once, first come wins: a hash, code or template that leads
to one signature never leads to another. Signatures come from the engine itself (new ones), from
saved states given up front, or from a `known.KnownSignatures` asked for what an event needs
(`fetch`); however they arrive, a saved state loads the same way (`load`), its templates into the
template miner and its vector into the similarity index. For tier 3, a service's vectors alone
are read (`fetch_vectors`), with each one's crash site; a signature is loaded whole only when an
error joins it (`require`).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from rounds_bot.grouping.candidates import Candidate
from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION
from rounds_bot.grouping.known import KnownSignatures
from rounds_bot.grouping.memo import MB, BoundedMemo
from rounds_bot.grouping.similarity import SimilarityIndex
from rounds_bot.grouping.state import SignatureState, collector_paused
from rounds_bot.grouping.templates import TemplateMiner, TemplateState
from rounds_bot.grouping.vectors import SimilarityVector
from rounds_bot.models import sharing_fields_set

#: fingerprint hashes a signature remembers besides its first (later variants merged into it)
MAX_HASHES_PER_SIGNATURE = 64
MAX_TEMPLATES_PER_SIGNATURE = 64
#: the lookup keys, and the hashes, a registry remembers having asked for: past either bound the memo is
#: cleared whole and a key is asked for again when next needed (see `Registry.fetch`), so what they keep
#: does not grow with the distinct messages of a round
ASKED_KEYS, ASKED_KEYS_BUDGET = 65_536, 8 * MB
ASKED_HASHES, ASKED_HASHES_BUDGET = 32_768, 4 * MB


@dataclass(slots=True)
class KnownSignature:
    signature_id: str
    service: str
    seq: int
    title: str
    version: str = FINGERPRINT_VERSION
    hashes: list[str] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)
    template_ids: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    related_similarity: dict[str, float] = field(default_factory=dict)
    crash_site: str | None = None


def _fetching_into(registry: Registry) -> Callable[[list[str]], bool]:
    """`registry.fetch` for its miner, holding the registry weakly. The registry holds the miner: a miner
    holding the bound method back would make the two (and every known signature, template and vector they
    hold) a reference cycle, which only the cyclic collector frees, long after the engine is let go (a
    round collects its oldest generation rarely, `round/run.py`), so the steps after it could not reuse
    that memory. Held weakly, they are freed the moment the engine is. A miner outliving its registry (no
    engine lets that happen) finds nothing more, as one without a lookup does."""
    held = weakref.ref(registry)

    def fetch(keys: list[str]) -> bool:
        alive = held()
        return alive.fetch(keys) if alive is not None else False

    return fetch


class Registry:
    """The known signatures, with the miner and index that hold their templates and vectors."""

    def __init__(self, miner: TemplateMiner, index: SimilarityIndex, lookup: KnownSignatures | None) -> None:
        self.signatures: dict[str, KnownSignature] = {}
        self.by_hash: dict[str, str] = {}
        self.by_code: dict[str, str] = {}
        self.by_template: dict[str, str] = {}
        self.next_seq = 0
        self._miner = miner
        self._index = index
        self._lookup = lookup
        #: lookup keys already asked for (whatever they found is loaded); bounded, so one may be asked again
        self._asked: BoundedMemo[str, bool] = BoundedMemo(ASKED_KEYS, ASKED_KEYS_BUDGET)
        #: hashes whose `h:` key `owner_of_hashes` has asked for (so a repeat builds no keys to ask again)
        self._asked_hashes: BoundedMemo[str, bool] = BoundedMemo(ASKED_HASHES, ASKED_HASHES_BUDGET)
        #: services whose vectors were read, and the crash sites of signatures known by vector only
        self._vectors_read: set[str] = set()
        self._sites: dict[str, str | None] = {}
        if lookup is not None:
            self.next_seq, miner.next_seq = lookup.counters()
            miner.fetch = _fetching_into(self)
            miner.fetch_learned = lookup.learned_keys

    def fetch(self, keys: list[str]) -> bool:
        """Load the known signatures filed under `keys` not asked for yet (as far as the bounded memo
        remembers); True when any was found.

        Asking again for a key the memo forgot changes nothing: the lookup does not change while an engine
        uses it (a round writes nothing to the store before its commit), so it finds what it found the first
        time, every signature of which was loaded then (`_register` skips them). The only difference is
        the True this returns: the miner ignores it, and `owner_of_hashes` and `owner_of_code` then read
        the same maps they read before the ask, which it left as they were, so they answer as they did."""
        if self._lookup is None:
            return False
        asked = self._asked
        wanted = [key for key in keys if not asked.get(key)]
        if not wanted:
            return False
        for key in wanted:
            asked.put(key, True)
        found = self._lookup.find(wanted)
        self.load_all(sorted(found, key=lambda s: s.seq))
        return bool(found)

    def fetch_vectors(self, service: str) -> None:
        """Read the service's known vectors into the index (once), for tier 3 to weigh."""
        if self._lookup is None or service in self._vectors_read:
            return
        self._vectors_read.add(service)
        with collector_paused():
            stored = sorted(self._lookup.vectors(service), key=lambda v: v.seq)
            self._index.add_stored(
                service, ((v.signature_id, v.seq, v.packed, v.with_frames) for v in stored)
            )
            self._sites.update((v.signature_id, v.crash_site) for v in stored)

    def crash_site_of(self, signature_id: str) -> str | None:
        known = self.signatures.get(signature_id)
        return known.crash_site if known is not None else self._sites.get(signature_id)

    def require(self, signature_id: str) -> KnownSignature:
        """A known signature, loaded whole if only its vector was read so far."""
        known = self.signatures.get(signature_id)
        if known is None and self._lookup is not None:
            state = self._lookup.by_id(signature_id)
            if state is not None:
                self.load(state)
                known = self.signatures.get(signature_id)
        if known is None:
            raise KeyError(f"unknown signature {signature_id!r}: it was never assigned or loaded")
        return known

    def owner_of_hashes(self, digests: tuple[str, ...]) -> str | None:
        """The signature the first known of `digests` leads to (asking the lookup if need be:
        a digest before the first one known here may be filed in the database)."""
        for index, digest in enumerate(digests):
            known = self.by_hash.get(digest)
            if known is not None:
                if index and self._fetch_hashes(digests[:index]):
                    return next(self.by_hash[d] for d in digests if d in self.by_hash)
                return known
        if self.fetch([f"h:{digest}" for digest in digests]):
            return next((self.by_hash[d] for d in digests if d in self.by_hash), None)
        return None

    def _fetch_hashes(self, digests: tuple[str, ...]) -> bool:
        """`fetch` for the keys of `digests`; a hash asked for once is not asked again while the memo holds it
        (what a key found is loaded then), so when all were, nothing is fetched and no key is built."""
        asked = self._asked_hashes
        if all(asked.get(digest) for digest in digests):
            return False
        for digest in digests:
            asked.put(digest, True)
        return self.fetch([f"h:{digest}" for digest in digests])

    def owner_of_code(self, code_key: str) -> str | None:
        known = self.by_code.get(code_key)
        if known is None and self.fetch([f"c:{code_key}"]):
            known = self.by_code.get(code_key)
        return known

    def create(
        self, candidate: Candidate, related: list[str], related_similarity: dict[str, float]
    ) -> KnownSignature:
        """A new signature for the candidate, registered under its identity."""
        signature = KnownSignature(
            signature_id=self._new_signature_id(candidate.fingerprint.hash),
            service=candidate.view.service,
            seq=self.next_seq,
            title=candidate.title,
            related=related,
            related_similarity=related_similarity,
            crash_site=candidate.site_key,
        )
        self.next_seq += 1
        self.signatures[signature.signature_id] = signature
        self.register(signature, candidate)
        return signature

    def _new_signature_id(self, digest: str) -> str:
        """`sig_` and the first 16 hex digits of the first event's fingerprint; should two
        fingerprints ever share those digits, a counter is hashed in (still deterministic)."""
        candidate, attempt = "sig_" + digest[:16], 0
        while candidate in self.signatures or (self._lookup is not None and self._lookup.exists(candidate)):
            attempt += 1
            candidate = "sig_" + hashlib.sha256(f"{digest}#{attempt}".encode()).hexdigest()[:16]
        return candidate

    def register(self, signature: KnownSignature, candidate: Candidate) -> None:
        """Make the candidate's identity lead to `signature` from now on (first come wins)."""
        if candidate.code_key is not None:
            if candidate.code_key not in self.by_code:
                self.by_code[candidate.code_key] = signature.signature_id
                signature.error_codes.append(candidate.code_key.split("\x1f", 1)[1])
            return
        if candidate.template_id is not None:
            if candidate.template_id not in self.by_template and (
                len(signature.template_ids) < MAX_TEMPLATES_PER_SIGNATURE
            ):
                self.by_template[candidate.template_id] = signature.signature_id
                signature.template_ids.append(candidate.template_id)
            return
        fingerprint = candidate.fingerprint
        for digest in (fingerprint.hash, *fingerprint.other_hashes):
            if digest not in self.by_hash and len(signature.hashes) < MAX_HASHES_PER_SIGNATURE:
                self.by_hash[digest] = signature.signature_id
                signature.hashes.append(digest)

    def adopt_hashes(self, signature: KnownSignature, digests: tuple[str, ...]) -> bool:
        """Make those of `digests` no signature is registered under lead to `signature` from now on, as
        `register` does (first come wins; True when any did). A hash the lookup files under another
        signature is that one's: it is asked for first, and its signature loaded, as `owner_of_hashes`
        would load it."""
        free = [digest for digest in digests if digest not in self.by_hash]
        if not free:
            return False
        self.fetch([f"h:{digest}" for digest in free])
        adopted = False
        for digest in free:
            if digest not in self.by_hash and len(signature.hashes) < MAX_HASHES_PER_SIGNATURE:
                self.by_hash[digest] = signature.signature_id
                signature.hashes.append(digest)
                adopted = True
        return adopted

    def load(self, state: SignatureState) -> None:
        self.load_all([state])

    def load_all(self, states: Iterable[SignatureState]) -> None:
        """Saved states, in the order given (creation order, for the seqs to mean the same); their
        vectors go to the index in bulk, a service at a time, as the store's vectors do."""
        vectors: dict[str, list[tuple[str, int, str, bool]]] = {}
        with collector_paused() as pause:
            for state in states:
                pause.made += 1
                if self._register(state) and state.similarity is not None:
                    vector = state.similarity
                    entry = (state.signature_id, state.seq, vector.packed, vector.with_frames)
                    vectors.setdefault(state.service, []).append(entry)
            for service, stored in vectors.items():
                self._index.add_stored(service, stored)

    def _register(self, state: SignatureState) -> bool:
        """The state's identity, filed under its keys; False when it was loaded before."""
        signature_id = state.signature_id
        if signature_id in self.signatures:
            return False  # looked up again under another key
        signature = KnownSignature(
            signature_id,
            state.service,
            state.seq,
            state.title,
            state.fingerprint_version,
            related=list(state.related),
            related_similarity=dict(state.related_similarity),
            crash_site=state.crash_site,
        )
        self.signatures[signature_id] = signature
        by_hash = self.by_hash
        for digest in state.hashes:
            if digest not in by_hash:
                by_hash[digest] = signature_id
                signature.hashes.append(digest)
        if state.error_codes:
            self._load_codes(signature, state.error_codes)
        if state.templates:
            self._load_templates(signature, state)
        if state.seq >= self.next_seq:
            self.next_seq = state.seq + 1
        return True

    def _load_codes(self, signature: KnownSignature, codes: list[str]) -> None:
        for code in codes:
            key = f"{signature.service}\x1f{code}"
            if key not in self.by_code:
                self.by_code[key] = signature.signature_id
                signature.error_codes.append(code)

    def _load_templates(self, signature: KnownSignature, state: SignatureState) -> None:
        for template in state.templates:
            if template.template_id in self.by_template:
                continue
            self._miner.load(template)
            self.by_template[template.template_id] = signature.signature_id
            signature.template_ids.append(template.template_id)

    def state(self, signature_id: str) -> SignatureState:
        try:
            signature = self.signatures[signature_id]
        except KeyError:
            raise KeyError(f"unknown signature {signature_id!r}: it was never assigned or loaded") from None
        return self._state_of(signature, self._miner.state, self._index.saved_vector)

    def released_states(self, signature_ids: Iterable[str]) -> Iterator[tuple[str, SignatureState]]:
        """`state` of each of `signature_ids` held here (one never loaded is left out), for an engine let go:
        the keys that lead to signatures, the memos and what only placing reads (`TemplateMiner.release`,
        `SimilarityIndex.release`) are dropped first; then each signature, its templates and its vector
        as its state is built, so each state takes memory of the sizes just freed. The registry holds nothing
        once they are all read: it can place nothing more."""
        self.by_hash.clear()
        self.by_code.clear()
        self.by_template.clear()
        self._asked.clear()
        self._asked_hashes.clear()
        self._vectors_read.clear()
        self._sites.clear()
        self._lookup = None
        self._miner.release()
        self._index.release()
        released_template, released_vector = self._miner.released_state, self._index.released_vector
        for signature_id in signature_ids:
            signature = self.signatures.pop(signature_id, None)
            if signature is not None:
                yield signature_id, self._state_of(signature, released_template, released_vector)
        self.signatures.clear()

    @staticmethod
    def _state_of(
        signature: KnownSignature,
        template_state: Callable[[str], TemplateState],
        vector_of: Callable[[str, str], SimilarityVector | None],
    ) -> SignatureState:
        """What `signature` saves, its templates' states and its vector read by the two given."""
        # every field given: one set of their names for every state (`sharing_fields_set`)
        return sharing_fields_set(
            SignatureState(
                signature_id=signature.signature_id,
                service=signature.service,
                fingerprint_version=signature.version,
                seq=signature.seq,
                title=signature.title,
                hashes=list(signature.hashes),
                error_codes=list(signature.error_codes),
                templates=[template_state(t) for t in signature.template_ids],
                similarity=vector_of(signature.service, signature.signature_id),
                related=list(signature.related),
                related_similarity=dict(signature.related_similarity),
                crash_site=signature.crash_site,
            )
        )
