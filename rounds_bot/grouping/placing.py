"""Where the engine's tiers end: tier 3 (similarity), a new signature, and the assignment that says which
rule decided.

`Placing` is mixed into `engine.GroupingEngine`: the engine reads the tiers in order (`engine`), and once
an event's candidate is neither known by its error code, its fingerprint hashes nor its template, it is
placed here: joined to the most similar signature of its service when the TF-IDF cosine reaches
`merge_threshold` and no crash site keeps them apart (`crash_site`), else made a new signature, linked to
the signatures it is only possibly related to. Every tier's answer is built into an `Assignment` here, with
its explanation (`explanation`) and the rule that decided (`RULES`).
"""

from __future__ import annotations

from rounds_bot.grouping.candidates import Candidate, CandidateReader
from rounds_bot.grouping.crash_site import may_merge_by_similarity
from rounds_bot.grouping.explanation import MAX_RELATED, Explainer
from rounds_bot.grouping.registry import KnownSignature, Registry
from rounds_bot.grouping.similarity import Neighbour, SimilarityIndex
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import Assignment, Tier, sharing_fields_set
from rounds_bot.settings.grouping import GroupingConfig

#: the rule that decided, per tier and, in the fingerprint tier, per key that matched
RULES = {
    "error_code": "rule: the same standardised error code in the same service",
    "template": "rule: the same log statement (the message's mined template)",
    "varied": (
        "rule: the same log statement (the message's mined template); a word that varies across"
        " the statement's lines while the rest stays fixed is a value"
    ),
    "app": "rule: the same exception types and frames of the app's own code",
    "test": "rule: the same exception types and frames of the tests (the trace has no app frame)",
    "system": "rule: the same exception types and frames",
    "site": "rule: the same crash site ({site}) and exception types, whichever callers reached it",
    "previous": "rule: the fingerprint an earlier version gave these frames (its group is kept)",
    "similarity": "rule: alike by TF-IDF similarity, with no crash site against it",
    "new": "rule: no known signature has its error code, fingerprint, crash site or template",
}


class Placing:
    """Tier 3, new signatures and assignments, over the engine's registry, index and candidates (mixed
    into `GroupingEngine`, which sets these)."""

    config: GroupingConfig
    _candidates: CandidateReader
    _explainer: Explainer
    _index: SimilarityIndex
    _known_signatures: Registry
    _miner: TemplateMiner
    _signatures: dict[str, KnownSignature]
    _by_template: dict[str, str]

    def _known(self, candidate: Candidate) -> str | None:
        if candidate.template_id is not None:
            return self._by_template.get(candidate.template_id)
        return self._known_signatures.owner_of_hashes(
            tuple(digest for _, digest in candidate.fingerprint.lookup_keys())
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
            signature.crash_site = signature.crash_site or candidate.site_key
            others = [n for n in neighbours if n.signature_id != best.signature_id]
            for neighbour in others[:MAX_RELATED]:
                # the first score found for a pair is the one its issue shows, round after round
                signature.related_similarity.setdefault(neighbour.signature_id, neighbour.score)
            return self._assignment(
                candidate, best.signature_id, "similarity", similarity=best.score, neighbours=others
            )
        return self._create(
            candidate, neighbours=neighbours, counts=counts, note=self._kept_apart(candidate, neighbours)
        )

    def _kept_apart(self, candidate: Candidate, neighbours: list[Neighbour]) -> str | None:
        """Why the nearest signature above the merge threshold was not joined: a crash site kept
        them apart, or one of them has no stack trace."""
        for neighbour in neighbours:
            if neighbour.score < self.config.merge_threshold:
                return None
            if candidate.trace is None or not neighbour.with_frames:
                return (
                    f"not merged with {neighbour.signature_id} (TF-IDF cosine {neighbour.score:.2f}): "
                    "an error without a stack trace joins a group only by its error code or its "
                    "log statement's template"
                )
            if (
                candidate.trace is not None
                and neighbour.with_frames
                and not self._may_merge(candidate, neighbour)
            ):
                theirs = self._known_signatures.crash_site_of(neighbour.signature_id)
                return (
                    f"not merged with {neighbour.signature_id} (TF-IDF cosine {neighbour.score:.2f}): "
                    f"crash site {candidate.site_key} is not its {theirs}"
                )
        return None

    def _may_merge(self, candidate: Candidate, neighbour: Neighbour) -> bool:
        """Merging needs stack-trace evidence on both sides (two log lines whose templates differ
        by a word are two statements in the code, so they are only linked as related), and the
        same crash site wherever both errors have one."""
        if candidate.trace is None or not neighbour.with_frames:
            return False
        other = self._known_signatures.crash_site_of(neighbour.signature_id)
        return may_merge_by_similarity(candidate.site_key, other)

    def _rule(self, candidate: Candidate, tier: Tier, known: str | None = None) -> str:
        """Which rule decided, in words (the "why grouped" of an issue); `known`, when given, is
        what `_known` has just answered for the candidate (not asked twice)."""
        if tier == "error_code":
            return RULES["error_code"]
        if tier == "similarity":
            return RULES["similarity"]
        if tier == "new":
            return RULES["new"]
        if candidate.template_id is not None:
            varied = candidate.template_id in self._miner.varied_templates
            return RULES["varied" if varied else "template"]
        by_hash = self._known_signatures.by_hash
        signature_id = known if known is not None else self._known(candidate)
        for name, digest in candidate.fingerprint.lookup_keys():
            if by_hash.get(digest) == signature_id:
                return RULES[name].format(site=candidate.site_key)
        return RULES["previous"]

    def _create(
        self,
        candidate: Candidate,
        neighbours: list[Neighbour],
        counts: dict[int, float] | None = None,
        note: str | None = None,
    ) -> Assignment:
        related = neighbours[:MAX_RELATED]
        signature = self._known_signatures.create(
            candidate, [n.signature_id for n in related], {n.signature_id: n.score for n in related}
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
        known: str | None = None,
        rule: str | None = None,
    ) -> Assignment:
        """The assignment, explained; `rule`, when given, is the rule that decided (else `_rule`'s)."""
        signature = self._signatures[signature_id]
        scored = {n.signature_id: n.score for n in (neighbours or []) if n.signature_id != signature_id}
        related = list(scored)
        if tier in ("fingerprint", "error_code"):
            related = list(signature.related)
            scored = signature.related_similarity
        explanation = self._explainer.explain(
            candidate.fingerprint,
            tier,
            signature_id,
            similarity,
            neighbours or [],
            self._rule(candidate, tier, known) if rule is None else rule,
        )
        if note:
            explanation += "\n" + note
        return sharing_fields_set(
            Assignment(
                signature_id=signature_id,
                tier=tier,
                fingerprint_hash=candidate.fingerprint.hash,
                fingerprint_version=candidate.fingerprint.version,
                explanation=explanation,
                title=candidate.title,
                normalized_message=candidate.view.normalized_message,
                related=related[:MAX_RELATED],
                related_similarity={sid: scored[sid] for sid in related[:MAX_RELATED] if sid in scored},
                similarity=similarity,
            )
        )
