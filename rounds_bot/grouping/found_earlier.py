"""A signature found by an earlier reading is registered under this reading's hashes too, after its batch.

A trace also gives, to look up, the hashes earlier readings gave it (`Fingerprint.legacy_hashes`: what
`rounds-fp:2` and `rounds-fp:1` gave its frames, the app and site hashes this version gave it while builtins
or browser extensions' frames were the app's, the frames hashes it gave before bundles' content hashes,
minified names and `blob:` URLs were left out), and a Firefox or Safari stack, or a trace `rounds-fp:2` read
as a message, finds the template its message went to then (`engine._previous_message_group`). Those readings
see what this one leaves out: the next deploy renames every bundle (`main.3f9a1c.js` is `main.8b2d4e.js`), a
recursion is reached at another depth, the message of a browser's error changes. Such an event gives no
earlier hash any signature has, and this reading's hashes, which lead nowhere either, would start a new
signature: a duplicate of the one its bug already has, which every later deploy joins.

So a signature found by an earlier reading's key is registered under the hashes this reading gives the same
event (its frames', all frames' and site's, `Registry.register`'s), what would have happened had this
version made it; the round saves them with the signature's state, as it saves a new signature's, so they
lead to it from then on, in every later round. The rules that keep a registered key's meaning:

- first registration wins: a hash already registered to a signature, in memory or in the database, stays
  that signature's (it is asked for first, `Registry.adopt_hashes`). A key leads to one signature for good;
  taking it away would move the events that signature receives by it;
- the earlier keys stay as they are and are still looked up first, so an event that finds its signature by
  one keeps finding it (and its "why grouped" still names the earlier version); only an event no earlier key
  leads anywhere finds it by the new hashes, an event that would otherwise start or join another signature:
  the duplicate this removes;
- registration waits for the batch to be placed (a round's events, `assign_all`): every event of the batch
  is placed by the keys registered before it, so the partition does not depend on the order of its events,
  as it does not without this. Which signatures an earlier key finds does not depend on that order (no
  signature registers an earlier version's key, so only stored ones have them), and the claims are
  registered in the order of their signatures' creation (`seq`), then of their hashes: when two signatures
  of an earlier reading claim one hash (two deploys' bundle names, each once a signature), the oldest gets
  it, whatever order their events came in;
- a deploy within the very batch that first finds a signature this way joins it too, in any order: a claim
  that finds a hash taken by a signature the batch started itself (the next deploy came first) is `lost`,
  and the batch is placed again by an engine started over with the lost claims registered ahead
  (`register_ahead`, `GroupingEngine.place_again`; a round does it before anything is filed or stored). The
  lost claims do not depend on the order either: a claim is made whatever came first, and a deploy placed
  in a signature the batch started that an earlier version read by its message asks that reading too, as
  it would have had it come first (`EarlierReadings._read_by_message_before`). Only such a batch is placed
  twice; a claim that finds its hashes free, as in every other batch, costs nothing more;
- it is idempotent: once registered, the hashes are known, so a later batch claims nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rounds_bot.grouping.candidates import Candidate
    from rounds_bot.grouping.registry import Registry


class FoundEarlier:
    """The signatures a batch found by an earlier reading, with the hashes this reading gave each event."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        #: (signature id, this reading's hashes of an event found by an earlier reading's key)
        self._claims: dict[_Claim, None] = {}
        #: the claims registered before the batches this engine places (`register_ahead`), and the hashes
        #: that registered (an event its own earlier reading finds is still said to be found so)
        self.claimed_ahead: frozenset[_Claim] = frozenset()
        self.ahead: set[str] = set()
        #: the creation seq of the batch's first signature (`batch_starts`), and the batch's claims that found
        #: a hash taken by a signature the batch started (the batch is to be placed again, `place_again`)
        self._first_of_batch: int | None = None
        self.lost: frozenset[_Claim] = frozenset()
        #: the traces (hashes, service, type, message statement) placed in a signature the batch started
        #: whose earlier message reading was asked for (`EarlierReadings._read_by_message_before`)
        self.asked: set[tuple[tuple[str, ...], str, str | None, tuple[str, ...]]] = set()

    def batch_starts(self) -> None:
        """A batch is about to be placed: the signatures made from now on are the batch's."""
        self._first_of_batch = self._registry.next_seq
        self.lost = frozenset()
        self.asked.clear()

    def started_in_batch(self, signature_id: str) -> bool:
        """Whether the batch being placed started `signature_id`, beside signatures known before it."""
        first = self._first_of_batch
        return bool(first) and self._registry.signatures[signature_id].seq >= (first or 0)

    def register_ahead(self, claims: frozenset[_Claim]) -> None:
        """Register `claims` before any batch is placed (a batch placed again, `place_again`)."""
        self.claimed_ahead = claims
        self._claims = dict.fromkeys(claims)
        self.register(ahead=True)

    def trace_found(self, candidate: Candidate, signature_id: str) -> None:
        """A trace candidate found `signature_id` by its hashes: a claim when the key that found it is an
        earlier version's. Earlier keys come first in `Fingerprint.lookup_keys` and the registry asks for
        every key before the one it finds, so an earlier key known here is the one that found it."""
        fingerprint = candidate.fingerprint
        legacy = fingerprint.legacy_hashes
        by_hash = self._registry.by_hash
        if legacy and any(digest in by_hash for digest in legacy):
            self.claim(signature_id, (fingerprint.hash, *fingerprint.other_hashes))

    def placed(self, digests: tuple[str, ...], earlier: int, signature_id: str) -> None:
        """`trace_found` for an event placed by its lookup hashes alone, earlier versions' `earlier` first
        (`cut_digests.CutPlace`)."""
        by_hash = self._registry.by_hash
        for digest in digests[:earlier]:
            if digest in by_hash:
                self.claim(signature_id, digests[earlier:])
                return

    def claim(self, signature_id: str, digests: tuple[str, ...]) -> None:
        """`signature_id`, found by an earlier reading, is to be registered under `digests` (this reading's
        hashes of the event) after the batch. A claim whose every hash leads somewhere already is none,
        unless one leads to a signature the batch started (`lost`)."""
        by_hash = self._registry.by_hash
        if digests and (
            not all(digest in by_hash for digest in digests) or self._taken_in_batch(signature_id, digests)
        ):
            self._claims[(signature_id, digests)] = None

    def register(self, *, ahead: bool = False, batch: bool = False) -> bool:
        """Register the claims, the oldest signature's first (see the module docstring); True when a hash
        was registered. `ahead`: before any batch is placed (`register_ahead`); the hashes that registered
        are kept in `ahead`. `batch`: after a batch, whose claims that found a hash taken by a signature it
        started are kept in `lost`."""
        if not self._claims:  # (asked after every event `GroupingEngine.assign` places)
            return False
        claims, self._claims = self._claims, {}
        registry = self._registry
        by_hash = registry.by_hash
        adopted = False
        lost = set()
        for claim in sorted(claims, key=lambda c: (registry.require(c[0]).seq, c)):
            signature_id, digests = claim
            signature = registry.require(signature_id)
            if batch and self._taken_in_batch(signature_id, digests):
                lost.add(claim)
            if registry.adopt_hashes(signature, digests):
                adopted = True
                if ahead:
                    self.ahead.update(d for d in digests if by_hash[d] == signature_id)
        if lost:
            self.lost = frozenset(lost)
        return adopted

    def _taken_in_batch(self, signature_id: str, digests: tuple[str, ...]) -> bool:
        """Whether a signature the batch started holds one of `digests` (an older one's would keep it)."""
        by_hash = self._registry.by_hash
        for digest in digests:
            owner = by_hash.get(digest)
            if owner is not None and owner != signature_id and self.started_in_batch(owner):
                return True
        return False


#: a claim: a signature found by an earlier reading, and this reading's hashes of the event that found it
_Claim = tuple[str, tuple[str, ...]]
