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

This module places events; the known signatures and the keys that lead to them are `registry`'s,
an event's identity (its fingerprint and how it registers) comes from `candidates`, the
explanation of each assignment from `explanation`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from rounds_bot.grouping.candidates import Candidate, CandidateReader
from rounds_bot.grouping.crash_site import may_merge_by_similarity
from rounds_bot.grouping.error_codes import ErrorCodeReader
from rounds_bot.grouping.explanation import MAX_RELATED, Explainer
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.known import KnownSignatures
from rounds_bot.grouping.registry import Registry
from rounds_bot.grouping.routes import Route
from rounds_bot.grouping.shapes import ShapeCache, ShapeInfo
from rounds_bot.grouping.similarity import Neighbour, SimilarityIndex
from rounds_bot.grouping.state import SignatureState
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import Assignment, ErrorEvent, Tier
from rounds_bot.settings.grouping import GroupingConfig

__all__ = ["GroupingConfig", "GroupingEngine", "SignatureState"]

_ANSWERS_PER_TEMPLATE = 256
#: the time of an event the engine builds from a message's fields (grouping never reads it)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class GroupingEngine:
    """Assigns events to signatures, tier by tier; `state` gives what a signature saves."""

    def __init__(
        self,
        config: GroupingConfig | None = None,
        known: Iterable[SignatureState] = (),
        lookup: KnownSignatures | None = None,
    ) -> None:
        self.config = config or GroupingConfig()
        self._rules = InAppRules(tuple(self.config.in_app_include), tuple(self.config.in_app_exclude))
        self._codes = ErrorCodeReader(self.config.error_code_attributes, self.config.error_code_pattern)
        self._message_may_hold_code = self._codes.message_may_hold_code
        self._miner = TemplateMiner()
        self._index = SimilarityIndex()
        self._known_signatures = Registry(self._miner, self._index, lookup)
        self._signatures = self._known_signatures.signatures
        self._by_template = self._known_signatures.by_template
        self._shapes = ShapeCache(code_test=self._codes.shape_test())
        self._candidates = CandidateReader(self._rules, self._shapes, self._miner)
        self._explainer = Explainer(self.config)
        self._routes: dict[str, Route] = {}
        #: the fingerprint tier's answers per memoised candidate (keyed by identity; the entry
        #: keeps the candidate alive, so an id is never reused while it is a key)
        self._answers: dict[int, tuple[Candidate, Assignment]] = {}
        self._known_signatures.load_all(sorted(known, key=lambda s: s.seq))

    # --- public interface ---------------------------------------------------------------------

    def assign(self, event: ErrorEvent) -> Assignment:
        # The common case first: a message with no stack trace and no error code anywhere.
        if event.stacktrace is None and not event.error_code and not event.attributes:
            normalized, shape = self._shapes.lookup(event.message)
            if not shape.may_hold_code or not self._message_may_hold_code(event.message):
                return self._assign_message(
                    event,
                    event.message,
                    event.service,
                    event.error_type,
                    event.environment,
                    event.service_version,
                    normalized,
                    shape,
                )
        stacktrace = event.stacktrace
        code = self._codes.read(event)
        if code is None and not (stacktrace and not stacktrace.isspace()):
            return self._assign_message(
                event,
                event.message,
                event.service,
                event.error_type,
                event.environment,
                event.service_version,
                *self._shapes.lookup(event.message),
            )
        candidate = self._candidates.candidate(event, code)
        if candidate.code_key is not None:
            known = self._known_signatures.owner_of_code(candidate.code_key)
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
        return self._known_signatures.state(signature_id)

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
        normalized, shape = self._shapes.lookup(message)
        if shape.may_hold_code and self._message_may_hold_code(message):
            return self.assign(_event_of(message, service, error_type, environment, service_version))
        return self._assign_message(
            None, message, service, error_type, environment, service_version, normalized, shape
        )

    def signature_ids(self) -> list[str]:
        return list(self._signatures)

    # --- the message path, tuned for the common case: a known template -----------------------

    def _assign_message(
        self,
        event: ErrorEvent | None,
        message: str,
        service: str,
        error_type: str | None,
        environment: str | None,
        version: str | None,
        normalized: str,
        shape: ShapeInfo,
    ) -> Assignment:
        """The message path: `event` is None when only the fields were given, and is built from
        them only when the engine needs one (a template or an answer not known yet)."""
        route = shape.routes.get((service, error_type))
        if route is None:
            bucket = self._candidates.bucket(service or "unknown", error_type)
            match = self._miner.match(bucket, shape.skeleton)
            route = self._routes.get(match.template_id)
            if route is None:
                signature_id = self._by_template.get(match.template_id)
                if signature_id is None:  # a template seen for the first time
                    event = event or _event_of(message, service, error_type, environment, version)
                    candidate = self._candidates.template_candidate(event, normalized, match.template_id)
                    return self._place_by_similarity(candidate)
                route = self._routes[match.template_id] = Route(
                    self._miner.handle(match.template_id), signature_id
                )
            shape.routes[(service, error_type)] = route
        # Answers given for this template stand while the template has not widened.
        if route.tokens is not route.template.tokens:
            route.answers.clear()
            route.tokens = route.template.tokens
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
            event = event or _event_of(message, service, error_type, environment, version)
            candidate = self._candidates.template_candidate(event, normalized, route.template.template_id)
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
        return self._known_signatures.owner_of_hashes(
            (fingerprint.hash, *fingerprint.other_hashes, *fingerprint.legacy_hashes)
        )

    def _place_by_similarity(self, candidate: Candidate) -> Assignment:
        service = candidate.view.service
        self._known_signatures.fetch_vectors(service)
        counts = self._index.counts(self._candidates.terms(candidate))
        neighbours = self._index.nearest(service, counts, self.config.related_threshold)
        best = next((n for n in neighbours if self._may_merge(candidate, n)), None)
        if best is not None and best.score >= self.config.merge_threshold:
            signature = self._known_signatures.require(best.signature_id)
            self._known_signatures.register(signature, candidate)
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
                theirs = self._known_signatures.crash_site_of(neighbour.signature_id)
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
        other = self._known_signatures.crash_site_of(neighbour.signature_id)
        return may_merge_by_similarity(candidate.crash_site, other)

    # --- signatures ---------------------------------------------------------------------------

    def _create(
        self,
        candidate: Candidate,
        neighbours: list[Neighbour],
        counts: dict[int, float] | None = None,
        note: str | None = None,
    ) -> Assignment:
        signature = self._known_signatures.create(
            candidate, [n.signature_id for n in neighbours[:MAX_RELATED]]
        )
        if candidate.code_key is None:
            self._index.add_new(
                signature.service,
                signature.signature_id,
                signature.seq,
                counts if counts is not None else self._index.counts(self._candidates.terms(candidate)),
                with_frames=candidate.trace is not None,
            )
        return self._assignment(candidate, signature.signature_id, "new", neighbours=neighbours, note=note)

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


def _event_of(
    message: str, service: str, error_type: str | None, environment: str | None, version: str | None
) -> ErrorEvent:
    """The event of a message given by its fields (`assign_message`)."""
    return ErrorEvent(
        event_id="message",
        timestamp=_EPOCH,
        service=service,
        kind="log",
        error_type=error_type,
        message=message,
        environment=environment,
        service_version=version,
    )
