"""The round's evidence step: for each signature about to be filed or updated, where in the code it happened
(git, the checkout) and when (its occurrences so far, with this round's). A look-up: nothing is written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from rounds_bot.clock import parse_iso
from rounds_bot.code.locate import CodeContext, CodeLocator
from rounds_bot.grouping.state import SignatureState
from rounds_bot.grouping.vectors import cosine
from rounds_bot.render.cascade_section import Cascade
from rounds_bot.render.issue import RelatedLink
from rounds_bot.round.planning import UNFILED_KINDS, IssuePlan
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature
from rounds_bot.store import Store


@dataclass(frozen=True)
class IssueEvidence:
    """What an issue shows of where and when a problem happens."""

    code: CodeContext = field(default_factory=CodeContext)
    occurrences: dict[datetime, int] = field(default_factory=dict)
    related: list[RelatedLink] = field(default_factory=list)
    cascade: Cascade | None = None
    refs: dict[str, str] = field(default_factory=dict)  # the issues of the signatures the cascade names


class Evidence:
    """Each planned issue's evidence, read from the store together and found one issue at a time as it is
    filed (`of`): a round filing thousands of issues never holds all of their evidence at once."""

    def __init__(
        self,
        locator: CodeLocator | None,
        store: Store,
        cascades: dict[str, Cascade],
        counts: dict[str, dict[datetime, int]],
        refs: Mapping[str, str | None],
    ) -> None:
        self._locator = locator
        self._store = store
        self._cascades = cascades
        self._counts = counts
        self._refs = refs

    def of(self, plan: IssuePlan) -> IssueEvidence:
        """The evidence of `plan`'s issue; asked once per plan (its counts so far are handed over, not
        kept: they become the issue's chart)."""
        counts = self._counts.pop(plan.signature_id, None)
        if self._locator is None or counts is None:
            return IssueEvidence()  # not gathered: a deferred plan, or none to file
        return _evidence(
            self._locator, self._store, plan, self._cascades.get(plan.signature_id), counts, self._refs
        )


def gather_evidence(
    settings: Settings, store: Store, plans: list[IssuePlan], cascades: dict[str, Cascade] | None = None
) -> Evidence:
    to_file = [plan for plan in plans if plan.kind not in UNFILED_KINDS]
    cascades = cascades or {}
    if not to_file:
        return Evidence(None, store, cascades, {}, {})
    locator = CodeLocator.for_settings(settings)
    # what every issue needs of the store, read together: counts so far, and the issues of the signatures
    # they name (possibly related, or in a cascade)
    counts = store.occurrence_counts_of(plan.signature_id for plan in to_file)
    named = {sid for plan in to_file for sid in plan.signature.related}
    named.update(sid for plan in to_file for sid in _named(cascades.get(plan.signature_id)))
    refs = store.issue_refs(sorted(named))
    return Evidence(locator, store, cascades, counts, refs)


def _evidence(
    locator: CodeLocator,
    store: Store,
    plan: IssuePlan,
    cascade: Cascade | None,
    counts: dict[datetime, int],
    refs: Mapping[str, str | None],
) -> IssueEvidence:
    for bucket, count in (plan.tally.buckets if plan.tally else {}).items():
        moment = parse_iso(bucket)
        counts[moment] = counts.get(moment, 0) + count
    return IssueEvidence(
        code=locator.locate(plan.signature),
        occurrences=counts,
        related=related_links(store, plan.signature, refs),
        cascade=cascade,
        refs=cascade_refs(store, cascade, refs),
    )


def _named(cascade: Cascade | None) -> set[str]:
    if cascade is None:
        return set()
    return {*cascade.caused_by, *cascade.causes, *(step.signature_id for step in cascade.path)}


def cascade_refs(
    store: Store, cascade: Cascade | None, refs: Mapping[str, str | None] | None = None
) -> dict[str, str]:
    """The issue rounds filed for each signature a cascade names, from its own database (`refs`: those
    issues, when the caller read them already)."""
    named = _named(cascade)
    if refs is None:
        refs = store.issue_refs(named)
    return {sid: ref for sid in sorted(named) if (ref := refs.get(sid))}


def related_links(
    store: Store, signature: Signature, refs: Mapping[str, str | None] | None = None
) -> list[RelatedLink]:
    """The possibly related signatures, each with its issue and similarity, both from the store (what rounds
    filed and computed), never from telemetry: the score the grouping engine found when it named the pair
    (kept in the signature's grouping state, as "why grouped" shows it), else the cosine of the two saved
    TF-IDF vectors (a pair named before the engine kept its scores). `refs`: the issues of the related
    signatures, when the caller read them already."""
    state = signature.grouping_state
    scored = state.related_similarity if state else {}
    if refs is None:
        refs = store.issue_refs(signature.related)
    links = []
    for sid in sorted(signature.related):
        similarity = round(scored[sid], 2) if sid in scored else _cosine(state, store.signature(sid))
        links.append(RelatedLink(signature_id=sid, issue_ref=refs.get(sid), similarity=similarity))
    return links


def _cosine(state: SignatureState | None, other: Signature | None) -> float | None:
    mine = state.similarity if state else None
    theirs = other.grouping_state.similarity if other and other.grouping_state else None
    return round(cosine(mine, theirs), 2) if mine and theirs else None
