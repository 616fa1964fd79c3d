"""The grouping engine: one event in, the signature it belongs to out.

Tiers, first that answers wins:
1. `error_code`  - same service and standardised error code;
2. `fingerprint` - a known fingerprint hash (stack trace) or a known mined template (message);
3. `similarity`  - TF-IDF cosine to a known signature of the same service at or above
   `merge_threshold`; between `related_threshold` and it, only a "possibly related" link;
4. `new`         - a new signature, whose id is derived from its first event's fingerprint.

Everything the engine knows is held per signature (`SignatureState`), so an engine re-loaded from
saved states groups later events exactly as the one that saved them. Nothing depends on wall
time, randomness or dictionary order; the only caches are memos of pure functions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rounds_bot.grouping.components import render
from rounds_bot.grouping.config import GroupingConfig
from rounds_bot.grouping.error_codes import ErrorCode, ErrorCodeReader
from rounds_bot.grouping.fingerprint import (
    FINGERPRINT_VERSION,
    EventView,
    Fingerprint,
    code_fingerprint,
    short_type,
    template_fingerprint,
    title_for,
    trace_fingerprint,
)
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.shapes import ShapeCache, ShapeInfo
from rounds_bot.grouping.similarity import Neighbour, SimilarityIndex, document_terms
from rounds_bot.grouping.stacktrace import ParsedTrace, parse_stacktrace
from rounds_bot.grouping.state import SignatureState
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.grouping.templates import render as render_template
from rounds_bot.models import Assignment, ErrorEvent, Tier

__all__ = ["GroupingConfig", "GroupingEngine", "SignatureState"]

#: fingerprint hashes a signature remembers besides its first (later variants merged into it)
MAX_HASHES_PER_SIGNATURE = 64
MAX_TEMPLATES_PER_SIGNATURE = 64
MAX_RELATED = 3
_TRACE_CACHE = 4096
_ANSWERS_PER_TEMPLATE = 256


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


class _Route:
    """A known template of the message path, with the answers already given for it."""

    __slots__ = ("answers", "signature_id", "template", "tokens")

    def __init__(self, template: Any, signature_id: str) -> None:
        self.template = template  # the miner's live template: its tokens change when it widens
        self.signature_id = signature_id
        self.tokens: tuple[str, ...] | None = template.tokens
        #: (normalised message, error type, environment, version), or the message alone when
        #: the others are None -> the assignment given
        self.answers: dict[str | tuple, Assignment] = {}


@dataclass(frozen=True)
class _Candidate:
    """An event's identity before it is placed: its fingerprint and how to register it."""

    fingerprint: Fingerprint
    view: EventView
    title: str
    trace: ParsedTrace | None = None
    template_id: str | None = None
    code_key: str | None = None


class GroupingEngine:
    def __init__(self, config: GroupingConfig | None = None, known: Iterable[SignatureState] = ()) -> None:
        self.config = config or GroupingConfig()
        self._rules = InAppRules(tuple(self.config.in_app_include), tuple(self.config.in_app_exclude))
        self._codes = ErrorCodeReader(self.config.error_code_attributes, self.config.error_code_pattern)
        self._message_may_hold_code = self._codes.message_may_hold_code
        self._signatures: dict[str, _Signature] = {}
        self._by_hash: dict[str, str] = {}
        self._by_code: dict[str, str] = {}
        self._by_template: dict[str, str] = {}
        self._miner = TemplateMiner()
        self._index = SimilarityIndex()
        self._shapes = ShapeCache(code_test=self._codes.shape_test())
        self._traces: dict[str, tuple[str, ParsedTrace, list[str]] | None] = {}
        self._trace_candidates: dict[tuple, _Candidate | None] = {}
        self._buckets: dict[tuple[str, str | None], str] = {}
        self._template_fingerprints: dict[tuple, Fingerprint] = {}
        self._routes: dict[str, _Route] = {}
        self._rendered: dict[int, tuple[Fingerprint, str]] = {}
        self._next_seq = 0
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
        candidate = self._candidate(event, code)
        if candidate.code_key is not None:
            known = self._by_code.get(candidate.code_key)
            if known is not None:
                return self._assignment(candidate, known, "error_code")
            return self._create(candidate, neighbours=[])
        known = self._known(candidate)
        if known is not None:
            return self._assignment(candidate, known, "fingerprint")
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
        )

    def signature_ids(self) -> list[str]:
        return list(self._signatures)

    # --- identity of an event -----------------------------------------------------------------

    def _candidate(self, event: ErrorEvent, code: ErrorCode | None) -> _Candidate:
        service = event.service or "unknown"
        normalized, shape = self._shapes.lookup(event.message)
        if code is not None:
            view = self._view(event, normalized)
            fingerprint = code_fingerprint(view, code.code, code.where)
            return _Candidate(
                fingerprint,
                view,
                title_for(event.error_type, normalized),
                code_key=f"{service}\x1f{code.code}",
            )
        parsed = self._parse(event)
        if parsed is not None:
            digest, trace, values = parsed
            key = (digest, service, event.error_type, normalized, event.environment, event.service_version)
            candidate = self._trace_candidates.get(key)
            if candidate is None:
                candidate = self._trace_candidate(event, normalized, trace, values)
                if len(self._trace_candidates) >= _TRACE_CACHE:
                    self._trace_candidates.clear()
                self._trace_candidates[key] = candidate
            if candidate is not None:
                return candidate
        match = self._miner.match(self._bucket(service, event.error_type), shape.skeleton)
        return self._template_candidate(event, normalized, match.template_id)

    def _trace_candidate(
        self, event: ErrorEvent, normalized: str, trace: ParsedTrace, values: list[str]
    ) -> _Candidate | None:
        error_type = event.error_type or trace.exceptions[0].type
        view = EventView(
            event.service or "unknown",
            error_type,
            normalized or values[0],
            event.environment,
            event.service_version,
        )
        fingerprint = trace_fingerprint(view, trace, self._rules, values)
        if fingerprint is None:
            return None
        return _Candidate(fingerprint, view, title_for(error_type, view.normalized_message), trace=trace)

    def _template_candidate(self, event: ErrorEvent, normalized: str, template_id: str) -> _Candidate:
        view = self._view(event, normalized)
        tokens = self._miner.template(template_id)
        key = (template_id, tokens, event.error_type, event.environment, event.service_version)
        fingerprint = self._template_fingerprints.get(key)
        if fingerprint is None:
            first = render_template(self._miner.first_template(template_id))
            fingerprint = template_fingerprint(view, first, render_template(tokens))
            if len(self._template_fingerprints) >= _TRACE_CACHE:
                self._template_fingerprints.clear()
            self._template_fingerprints[key] = fingerprint
        return _Candidate(fingerprint, view, title_for(event.error_type, normalized), template_id=template_id)

    def _bucket(self, service: str, error_type: str | None) -> str:
        key = (service, error_type)
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _TRACE_CACHE:
                self._buckets.clear()
            bucket = self._buckets[key] = f"{service}\x1f{short_type(error_type) or ''}"
        return bucket

    # --- the message path, tuned for the common case: a known template -----------------------

    def _assign_message(self, event: ErrorEvent, normalized: str, shape: ShapeInfo) -> Assignment:
        error_type = event.error_type
        route = shape.routes.get((event.service, error_type))
        if route is None:
            bucket = self._bucket(event.service or "unknown", error_type)
            match = self._miner.match(bucket, shape.skeleton)
            route = self._routes.get(match.template_id)
            if route is None:
                signature_id = self._by_template.get(match.template_id)
                if signature_id is None:  # a template seen for the first time
                    candidate = self._template_candidate(event, normalized, match.template_id)
                    return self._place_by_similarity(candidate)
                route = self._routes[match.template_id] = _Route(
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
            candidate = self._template_candidate(event, normalized, route.template.template_id)
            answer = self._assignment(candidate, route.signature_id, "fingerprint")
            if len(route.answers) >= _ANSWERS_PER_TEMPLATE:
                route.answers.clear()
            route.answers[key] = answer
        return answer

    def _view(self, event: ErrorEvent, normalized: str) -> EventView:
        return EventView(
            service=event.service or "unknown",
            error_type=event.error_type,
            normalized_message=normalized,
            environment=event.environment,
            service_version=event.service_version,
        )

    def _parse(self, event: ErrorEvent) -> tuple[str, ParsedTrace, list[str]] | None:
        """The event's parsed trace with its exceptions' normalised values (memoised by text)."""
        if not event.stacktrace or event.stacktrace.isspace():
            return None
        digest = hashlib.sha1(event.stacktrace.encode("utf-8", "surrogatepass")).hexdigest()
        if digest in self._traces:
            return self._traces[digest]
        trace = parse_stacktrace(event.stacktrace)
        parsed = None
        if trace is not None:
            parsed = (digest, trace, [normalize_uncached(e.value) for e in trace.exceptions])
        if len(self._traces) >= _TRACE_CACHE:
            self._traces.clear()
        self._traces[digest] = parsed
        return parsed

    # --- tiers --------------------------------------------------------------------------------

    def _known(self, candidate: _Candidate) -> str | None:
        if candidate.template_id is not None:
            return self._by_template.get(candidate.template_id)
        fingerprint = candidate.fingerprint
        for digest in (fingerprint.hash, *fingerprint.other_hashes):
            known = self._by_hash.get(digest)
            if known is not None:
                return known
        return None

    def _place_by_similarity(self, candidate: _Candidate) -> Assignment:
        service = candidate.view.service
        counts = self._index.counts(self._terms(candidate))
        neighbours = self._index.nearest(service, counts, self.config.related_threshold)
        best = next((n for n in neighbours if self._may_merge(candidate, n)), None)
        if best is not None and best.score >= self.config.merge_threshold:
            self._register(self._signatures[best.signature_id], candidate)
            others = [n for n in neighbours if n.signature_id != best.signature_id]
            return self._assignment(
                candidate, best.signature_id, "similarity", similarity=best.score, neighbours=others
            )
        return self._create(candidate, neighbours=neighbours, counts=counts)

    def _may_merge(self, candidate: _Candidate, neighbour: Neighbour) -> bool:
        """Merging needs stack-trace evidence on both sides: two log lines whose templates differ
        by a word are two statements in the code, so they are only linked as related."""
        return candidate.trace is not None and neighbour.with_frames

    def _terms(self, candidate: _Candidate) -> list[str]:
        trace = candidate.trace
        in_app = None
        if trace is not None:
            in_app = [[self._rules.decide(f, trace.runtime)[0] for f in e.frames] for e in trace.exceptions]
        error_type = short_type(candidate.view.error_type)
        return document_terms(error_type, candidate.view.normalized_message, trace, in_app)

    # --- signatures ---------------------------------------------------------------------------

    def _create(
        self, candidate: _Candidate, neighbours: list[Neighbour], counts: dict[int, float] | None = None
    ) -> Assignment:
        fingerprint = candidate.fingerprint
        signature = _Signature(
            signature_id=self._new_signature_id(fingerprint.hash),
            service=candidate.view.service,
            seq=self._next_seq,
            title=candidate.title,
            related=[n.signature_id for n in neighbours[:MAX_RELATED]],
        )
        self._next_seq += 1
        self._signatures[signature.signature_id] = signature
        self._register(signature, candidate)
        if candidate.code_key is None:
            self._index.add_new(
                signature.service,
                signature.signature_id,
                signature.seq,
                counts if counts is not None else self._index.counts(self._terms(candidate)),
                with_frames=candidate.trace is not None,
            )
        return self._assignment(candidate, signature.signature_id, "new", neighbours=neighbours)

    def _new_signature_id(self, digest: str) -> str:
        """`sig_` and the first 16 hex digits of the first event's fingerprint; should two
        fingerprints ever share those digits, a counter is hashed in (still deterministic)."""
        candidate, attempt = "sig_" + digest[:16], 0
        while candidate in self._signatures:
            attempt += 1
            candidate = "sig_" + hashlib.sha256(f"{digest}#{attempt}".encode()).hexdigest()[:16]
        return candidate

    def _register(self, signature: _Signature, candidate: _Candidate) -> None:
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
        signature = _Signature(
            signature_id=state.signature_id,
            service=state.service,
            seq=state.seq,
            title=state.title,
            version=state.fingerprint_version,
            related=list(state.related),
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

    def _render(self, fingerprint: Fingerprint) -> str:
        # Keyed on the object: cached fingerprints are shared, fresh ones render once.
        cached = self._rendered.get(id(fingerprint))
        if cached is not None and cached[0] is fingerprint:
            return cached[1]
        text = render(fingerprint.tree)
        if len(self._rendered) >= _TRACE_CACHE:
            self._rendered.clear()
        self._rendered[id(fingerprint)] = (fingerprint, text)
        return text

    def _assignment(
        self,
        candidate: _Candidate,
        signature_id: str,
        tier: Tier,
        *,
        similarity: float | None = None,
        neighbours: list[Neighbour] | None = None,
    ) -> Assignment:
        signature = self._signatures[signature_id]
        related = [n.signature_id for n in (neighbours or []) if n.signature_id != signature_id]
        if tier in ("fingerprint", "error_code"):
            related = list(signature.related)
        explanation = (
            self._render(candidate.fingerprint)
            + "\n"
            + _decision(tier, signature_id, similarity, neighbours or [], self.config)
        )
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


def _decision(
    tier: Tier,
    signature_id: str,
    similarity: float | None,
    neighbours: list[Neighbour],
    config: GroupingConfig,
) -> str:
    if tier == "error_code":
        line = f"grouped by error code into {signature_id}"
    elif tier == "fingerprint":
        line = f"grouped by fingerprint into {signature_id}"
    elif tier == "similarity":
        line = (
            f"grouped by similarity into {signature_id}: TF-IDF cosine {similarity:.2f} "
            f">= merge threshold {config.merge_threshold:.2f}"
        )
    else:
        line = f"new signature {signature_id}"
    related = [n for n in neighbours if n.signature_id != signature_id][:MAX_RELATED]
    if related:
        listed = ", ".join(f"{n.signature_id} ({n.score:.2f})" for n in related)
        line += f"\npossibly related to {listed}"
    return line
