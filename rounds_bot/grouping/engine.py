"""The grouping engine: one event in, the signature it belongs to out.

Tiers, first that answers wins:
1. `error_code`  - same service and standardised error code;
2. `fingerprint` - a known fingerprint hash (stack trace) or a known mined template (message);
3. `similarity`  - TF-IDF cosine to a known signature of the same service at or above
   `merge_threshold`, for stack traces only and never across crash sites (`crash_site`);
   between `related_threshold` and it, only a "possibly related" link;
4. `new`         - a new signature, whose id is derived from its first event's fingerprint.

Everything the engine knows is held per signature (`SignatureState`), so an engine re-loaded from
saved states groups later events exactly as the one that saved them, whether it is given them
all up front (`known`) or looks up the ones each event needs (`lookup`, see `known.py`: what a
round does, so a quiet round costs the same with a thousand signatures known or a million).
Nothing depends on wall time, randomness or dictionary order; the only caches are memos of pure
functions.

This module places events and keeps the signatures; an event's identity (its fingerprint and how
it registers) comes from `candidates`, the explanation of each assignment from `explanation`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rounds_bot.grouping.candidates import Candidate, CandidateReader
from rounds_bot.grouping.config import GroupingConfig
from rounds_bot.grouping.crash_site import may_merge_by_similarity
from rounds_bot.grouping.error_codes import ErrorCodeReader
from rounds_bot.grouping.explanation import MAX_RELATED, Explainer
from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.known import KnownSignatures
from rounds_bot.grouping.lookup_keys import service_key
from rounds_bot.grouping.routes import Route
from rounds_bot.grouping.shapes import ShapeCache, ShapeInfo
from rounds_bot.grouping.similarity import Neighbour, SimilarityIndex
from rounds_bot.grouping.state import SignatureState
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import Assignment, ErrorEvent, Tier

__all__ = ["GroupingConfig", "GroupingEngine", "SignatureState"]

#: fingerprint hashes a signature remembers besides its first (later variants merged into it)
MAX_HASHES_PER_SIGNATURE = 64
MAX_TEMPLATES_PER_SIGNATURE = 64
_ANSWERS_PER_TEMPLATE = 256
#: the time of an event the engine builds from a message's fields (grouping never reads it)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class _Signature:
    signature_id: str
    service: str
    seq: int
    title: str
    version: str = FINGERPRINT_VERSION
    hashes: list[str] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)
    template_ids: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    crash_site: str | None = None


class GroupingEngine:
    """Assigns events to signatures, tier by tier; `state` gives what a signature saves."""

    def __init__(
        self,
        config: GroupingConfig | None = None,
        known: Iterable[SignatureState] = (),
        lookup: KnownSignatures | None = None,
    ) -> None:
        self.config = config or GroupingConfig()
        self._lookup = lookup
        #: lookup keys already asked for (whatever they found is loaded)
        self._asked: set[str] = set()
        self._rules = InAppRules(tuple(self.config.in_app_include), tuple(self.config.in_app_exclude))
        self._codes = ErrorCodeReader(self.config.error_code_attributes, self.config.error_code_pattern)
        self._message_may_hold_code = self._codes.message_may_hold_code
        self._signatures: dict[str, _Signature] = {}
        self._by_hash: dict[str, str] = {}
        self._by_code: dict[str, str] = {}
        self._by_template: dict[str, str] = {}
        self._miner = TemplateMiner()
        if lookup is not None:
            self._miner.fetch = self._fetch
            self._miner.fetch_learned = lookup.learned_keys
        self._index = SimilarityIndex()
        self._shapes = ShapeCache(code_test=self._codes.shape_test())
        self._candidates = CandidateReader(self._rules, self._shapes, self._miner)
        self._explainer = Explainer(self.config)
        self._routes: dict[str, Route] = {}
        #: the fingerprint tier's answers per memoised candidate (keyed by identity; the entry
        #: keeps the candidate alive, so an id is never reused while it is a key)
        self._answers: dict[int, tuple[Candidate, Assignment]] = {}
        self._next_seq = 0
        if lookup is not None:
            self._next_seq, self._miner.next_seq = lookup.counters()
        for state in sorted(known, key=lambda s: s.seq):
            self._load(state)

    # --- public interface ---------------------------------------------------------------------

    def assign(self, event: ErrorEvent) -> Assignment:
        # The common case first: a message with no stack trace and no error code anywhere.
        if event.stacktrace is None and not event.error_code and not event.attributes:
            normalized, shape = self._shapes.lookup(event.message)
            if not shape.may_hold_code or not self._message_may_hold_code(event.message):
                return self._assign_message(event, normalized, shape)
        stacktrace = event.stacktrace
        code = self._codes.read(event)
        if code is None and not (stacktrace and not stacktrace.isspace()):
            return self._assign_message(event, *self._shapes.lookup(event.message))
        candidate = self._candidates.candidate(event, code)
        if candidate.code_key is not None:
            known = self._by_code.get(candidate.code_key)
            if known is None and self._lookup is not None:
                self._fetch([f"c:{candidate.code_key}"])
                known = self._by_code.get(candidate.code_key)
            if known is not None:
                return self._assignment(candidate, known, "error_code")
            return self._create(candidate, neighbours=[])
        answered = self._answers.get(id(candidate))
        if answered is not None and answered[0] is candidate:
            return answered[1]
        known = self._known(candidate)
        if known is not None:
            return self._known_answer(candidate, known)
        return self._place_by_similarity(candidate)

    def state(self, signature_id: str) -> SignatureState:
        try:
            signature = self._signatures[signature_id]
        except KeyError:
            raise KeyError(f"unknown signature {signature_id!r}: it was never assigned or loaded") from None
        return SignatureState(
            signature_id=signature.signature_id,
            service=signature.service,
            fingerprint_version=signature.version,
            seq=signature.seq,
            title=signature.title,
            hashes=list(signature.hashes),
            error_codes=list(signature.error_codes),
            templates=[self._miner.state(t) for t in signature.template_ids],
            similarity=self._index.saved_vector(signature.service, signature.signature_id),
            related=list(signature.related),
            crash_site=signature.crash_site,
        )

    def assign_message(
        self,
        message: str,
        service: str = "unknown",
        error_type: str | None = None,
        environment: str | None = None,
        service_version: str | None = None,
    ) -> Assignment:
        """`assign` for an event that is a message alone (no stack trace, error code or
        attributes), given as its fields: the same answer, without building the event when the
        message's template is known (what `rounds group` does for plain log lines)."""
        fields = _Fields(message, service, error_type, environment, service_version)
        normalized, shape = self._shapes.lookup(message)
        if shape.may_hold_code and self._message_may_hold_code(message):
            return self.assign(fields.event())
        return self._assign_message(fields, normalized, shape)

    def signature_ids(self) -> list[str]:
        return list(self._signatures)

    # --- the message path, tuned for the common case: a known template -----------------------

    def _assign_message(self, event: ErrorEvent | _Fields, normalized: str, shape: ShapeInfo) -> Assignment:
        error_type = event.error_type
        route = shape.routes.get((event.service, error_type))
        if route is None:
            bucket = self._candidates.bucket(event.service or "unknown", error_type)
            match = self._miner.match(bucket, shape.skeleton)
            route = self._routes.get(match.template_id)
            if route is None:
                signature_id = self._by_template.get(match.template_id)
                if signature_id is None:  # a template seen for the first time
                    candidate = self._candidates.template_candidate(
                        _event_of(event), normalized, match.template_id
                    )
                    return self._place_by_similarity(candidate)
                route = self._routes[match.template_id] = Route(
                    self._miner.handle(match.template_id), signature_id
                )
            shape.routes[(event.service, error_type)] = route
        # Answers given for this template stand while the template has not widened.
        if route.tokens is not route.template.tokens:
            route.answers.clear()
            route.tokens = route.template.tokens
        environment, version = event.environment, event.service_version
        # most events carry none of these: the message alone is then the key
        key = (
            normalized
            if error_type is None and environment is None and version is None
            else (
                normalized,
                error_type,
                environment,
                version,
            )
        )
        answer = route.answers.get(key)
        if answer is None:
            candidate = self._candidates.template_candidate(
                _event_of(event), normalized, route.template.template_id
            )
            answer = self._assignment(candidate, route.signature_id, "fingerprint")
            if len(route.answers) >= _ANSWERS_PER_TEMPLATE:
                route.answers.clear()
            route.answers[key] = answer
        return answer

    # --- tiers --------------------------------------------------------------------------------

    def _known_answer(self, candidate: Candidate, signature_id: str) -> Assignment:
        """The fingerprint tier's answer; the same for a candidate every time (a hash, once
        registered, always leads to the same signature), so it is given once per candidate."""
        answer = self._assignment(candidate, signature_id, "fingerprint")
        if len(self._answers) >= _ANSWERS_PER_TEMPLATE * 16:
            self._answers.clear()
        self._answers[id(candidate)] = (candidate, answer)
        return answer

    def _known(self, candidate: Candidate) -> str | None:
        if candidate.template_id is not None:
            return self._by_template.get(candidate.template_id)
        fingerprint = candidate.fingerprint
        digests = (fingerprint.hash, *fingerprint.other_hashes, *fingerprint.legacy_hashes)
        for digest in digests:
            known = self._by_hash.get(digest)
            if known is not None:
                return known
        if self._lookup is not None and self._fetch([f"h:{digest}" for digest in digests]):
            return next((self._by_hash[d] for d in digests if d in self._by_hash), None)
        return None

    def _fetch(self, keys: list[str]) -> bool:
        """Load the known signatures filed under `keys` not asked for yet; True when any was."""
        if self._lookup is None:
            return False
        wanted = [key for key in keys if key not in self._asked]
        if not wanted:
            return False
        self._asked.update(wanted)
        found = self._lookup.find(wanted)
        for state in sorted(found, key=lambda s: s.seq):
            self._load(state)
        return bool(found)

    def _place_by_similarity(self, candidate: Candidate) -> Assignment:
        service = candidate.view.service
        self._fetch([service_key(service)])
        counts = self._index.counts(self._candidates.terms(candidate))
        neighbours = self._index.nearest(service, counts, self.config.related_threshold)
        best = next((n for n in neighbours if self._may_merge(candidate, n)), None)
        if best is not None and best.score >= self.config.merge_threshold:
            signature = self._signatures[best.signature_id]
            self._register(signature, candidate)
            signature.crash_site = signature.crash_site or candidate.crash_site
            others = [n for n in neighbours if n.signature_id != best.signature_id]
            return self._assignment(
                candidate, best.signature_id, "similarity", similarity=best.score, neighbours=others
            )
        return self._create(
            candidate, neighbours=neighbours, counts=counts, note=self._kept_apart(candidate, neighbours)
        )

    def _kept_apart(self, candidate: Candidate, neighbours: list[Neighbour]) -> str | None:
        """Why the nearest signature above the merge threshold was not joined, when a crash site
        kept them apart."""
        for neighbour in neighbours:
            if neighbour.score < self.config.merge_threshold:
                return None
            if (
                candidate.trace is not None
                and neighbour.with_frames
                and not self._may_merge(candidate, neighbour)
            ):
                theirs = self._signatures[neighbour.signature_id].crash_site
                return (
                    f"not merged with {neighbour.signature_id} (TF-IDF cosine {neighbour.score:.2f}): "
                    f"crash site {candidate.crash_site} is not its {theirs}"
                )
        return None

    def _may_merge(self, candidate: Candidate, neighbour: Neighbour) -> bool:
        """Merging needs stack-trace evidence on both sides (two log lines whose templates differ
        by a word are two statements in the code, so they are only linked as related), and the
        same crash site wherever both errors have one."""
        if candidate.trace is None or not neighbour.with_frames:
            return False
        other = self._signatures[neighbour.signature_id].crash_site
        return may_merge_by_similarity(candidate.crash_site, other)

    # --- signatures ---------------------------------------------------------------------------

    def _create(
        self,
        candidate: Candidate,
        neighbours: list[Neighbour],
        counts: dict[int, float] | None = None,
        note: str | None = None,
    ) -> Assignment:
        fingerprint = candidate.fingerprint
        signature = _Signature(
            signature_id=self._new_signature_id(fingerprint.hash),
            service=candidate.view.service,
            seq=self._next_seq,
            title=candidate.title,
            related=[n.signature_id for n in neighbours[:MAX_RELATED]],
            crash_site=candidate.crash_site,
        )
        self._next_seq += 1
        self._signatures[signature.signature_id] = signature
        self._register(signature, candidate)
        if candidate.code_key is None:
            self._index.add_new(
                signature.service,
                signature.signature_id,
                signature.seq,
                counts if counts is not None else self._index.counts(self._candidates.terms(candidate)),
                with_frames=candidate.trace is not None,
            )
        return self._assignment(candidate, signature.signature_id, "new", neighbours=neighbours, note=note)

    def _new_signature_id(self, digest: str) -> str:
        """`sig_` and the first 16 hex digits of the first event's fingerprint; should two
        fingerprints ever share those digits, a counter is hashed in (still deterministic)."""
        candidate, attempt = "sig_" + digest[:16], 0
        while candidate in self._signatures or (self._lookup is not None and self._lookup.exists(candidate)):
            attempt += 1
            candidate = "sig_" + hashlib.sha256(f"{digest}#{attempt}".encode()).hexdigest()[:16]
        return candidate

    def _register(self, signature: _Signature, candidate: Candidate) -> None:
        """Make the candidate's identity lead to `signature` from now on (first come wins)."""
        if candidate.code_key is not None:
            if candidate.code_key not in self._by_code:
                self._by_code[candidate.code_key] = signature.signature_id
                signature.error_codes.append(candidate.code_key.split("\x1f", 1)[1])
            return
        if candidate.template_id is not None:
            if candidate.template_id not in self._by_template and (
                len(signature.template_ids) < MAX_TEMPLATES_PER_SIGNATURE
            ):
                self._by_template[candidate.template_id] = signature.signature_id
                signature.template_ids.append(candidate.template_id)
            return
        fingerprint = candidate.fingerprint
        for digest in (fingerprint.hash, *fingerprint.other_hashes):
            if digest not in self._by_hash and len(signature.hashes) < MAX_HASHES_PER_SIGNATURE:
                self._by_hash[digest] = signature.signature_id
                signature.hashes.append(digest)

    def _load(self, state: SignatureState) -> None:
        if state.signature_id in self._signatures:
            return  # looked up again under another key
        signature = _Signature(
            signature_id=state.signature_id,
            service=state.service,
            seq=state.seq,
            title=state.title,
            version=state.fingerprint_version,
            related=list(state.related),
            crash_site=state.crash_site,
        )
        self._signatures[state.signature_id] = signature
        for digest in state.hashes:
            if digest not in self._by_hash:
                self._by_hash[digest] = state.signature_id
                signature.hashes.append(digest)
        for code in state.error_codes:
            key = f"{state.service}\x1f{code}"
            if key not in self._by_code:
                self._by_code[key] = state.signature_id
                signature.error_codes.append(code)
        for template in state.templates:
            if template.template_id in self._by_template:
                continue
            self._miner.load(template)
            self._by_template[template.template_id] = state.signature_id
            signature.template_ids.append(template.template_id)
        if state.similarity is not None:
            self._index.add_saved(state.service, state.signature_id, state.seq, state.similarity)
        self._next_seq = max(self._next_seq, state.seq + 1)

    def _assignment(
        self,
        candidate: Candidate,
        signature_id: str,
        tier: Tier,
        *,
        similarity: float | None = None,
        neighbours: list[Neighbour] | None = None,
        note: str | None = None,
    ) -> Assignment:
        signature = self._signatures[signature_id]
        related = [n.signature_id for n in (neighbours or []) if n.signature_id != signature_id]
        if tier in ("fingerprint", "error_code"):
            related = list(signature.related)
        explanation = self._explainer.explain(
            candidate.fingerprint, tier, signature_id, similarity, neighbours or []
        )
        if note:
            explanation += "\n" + note
        return Assignment(
            signature_id=signature_id,
            tier=tier,
            fingerprint_hash=candidate.fingerprint.hash,
            fingerprint_version=candidate.fingerprint.version,
            explanation=explanation,
            title=candidate.title,
            normalized_message=candidate.view.normalized_message,
            related=related[:MAX_RELATED],
            similarity=similarity,
        )


class _Fields:
    """The fields of a message given without its event (`assign_message`); the event is built
    only when the engine needs one."""

    __slots__ = ("environment", "error_type", "message", "service", "service_version")

    def __init__(
        self,
        message: str,
        service: str,
        error_type: str | None,
        environment: str | None,
        service_version: str | None,
    ) -> None:
        self.message = message
        self.service = service
        self.error_type = error_type
        self.environment = environment
        self.service_version = service_version

    def event(self) -> ErrorEvent:
        return ErrorEvent(
            event_id="message",
            timestamp=_EPOCH,
            service=self.service,
            kind="log",
            error_type=self.error_type,
            message=self.message,
            environment=self.environment,
            service_version=self.service_version,
        )


def _event_of(event: ErrorEvent | _Fields) -> ErrorEvent:
    return event if isinstance(event, ErrorEvent) else event.event()
