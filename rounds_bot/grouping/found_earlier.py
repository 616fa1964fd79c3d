"""A signature found by an earlier reading is registered under this reading's hashes too, after its batch.

A trace also gives, to look up, the hashes earlier readings gave it (`Fingerprint.legacy_hashes`: what
`rounds-fp:2` and `rounds-fp:1` gave its frames, the app and site hashes `rounds-fp:3` gave it while builtins
were the app's, the frames hashes it gave before bundles' content hashes, minified names and `blob:` URLs were
left out), and a Firefox or Safari stack, or a trace `rounds-fp:2` read as a message, finds the template its
message went to then (`engine._previous_message_group`). Those readings see what this one leaves out: the
next deploy renames every bundle (`main.3f9a1c.js` is `main.8b2d4e.js`), a recursion is reached at another
depth, the message of a browser's error changes. Such an event gives no earlier hash any signature has, and
this reading's hashes, which lead nowhere either, would start a new signature: a duplicate of the one its
bug already has, which every later deploy joins.

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
  it, whatever order their events came in. A deploy within the very batch that first finds a signature
  this way still starts one signature of its own (the claim finds its hash registered to it then);
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
        self._claims: dict[tuple[str, tuple[str, ...]], None] = {}

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
        hashes of the event) after the batch. A claim whose every hash leads somewhere already is none."""
        by_hash = self._registry.by_hash
        if digests and not all(digest in by_hash for digest in digests):
            self._claims[(signature_id, digests)] = None

    def register(self) -> bool:
        """Register the batch's claims, the oldest signature's first (see the module docstring); True when
        a hash was registered."""
        if not self._claims:  # (asked after every event `GroupingEngine.assign` places)
            return False
        claims, self._claims = self._claims, {}
        signatures = self._registry.signatures
        adopted = False
        for signature_id, digests in sorted(claims, key=lambda c: (signatures[c[0]].seq, c[0], c[1])):
            adopted |= self._registry.adopt_hashes(signatures[signature_id], digests)
        return adopted
