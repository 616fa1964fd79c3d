"""Why an event was grouped where it was: the fingerprint tree, then the tier's decision.

The tree says which parts of the event contributed to the fingerprint (and why the others did
not); the decision line names the tier, the signature, the similarity score against the merge
threshold where one was used, and the signatures it is only possibly related to; the rule line
says which rule decided (for a split, the engine adds why the nearest signature was not joined).
"""

from __future__ import annotations

import weakref

from rounds_bot.grouping.components import render
from rounds_bot.grouping.fingerprint import Fingerprint
from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo
from rounds_bot.grouping.similarity import Neighbour
from rounds_bot.models import Tier
from rounds_bot.settings.grouping import GroupingConfig

#: related signatures an assignment names
MAX_RELATED = 3
_RENDER_MEMO_LIMIT = 4096
#: a fingerprint is drawn again only when a candidate memo gives the same object again (a repeat that was
#: not placed by its hashes): a first round of 200k records and 20k bugs draws 21k fingerprints and finds
#: 210 drawn already with 6 MB, 150 with 1.5 MB, 100 with 0.75 MB; the rest of a larger memo is the text
#: of fingerprints no caller holds any more, which can never be asked for again
_RENDER_BUDGET = 1 * MB


class Explainer:
    """Explanations, with each fingerprint's tree rendered once."""

    def __init__(self, config: GroupingConfig) -> None:
        self._config = config
        # the fingerprint held weakly: a tree only this memo kept alive (a fingerprint of thousands of
        # bytes of components) could never be asked for again, as no caller holds it to ask
        self._rendered: BoundedMemo[int, tuple[weakref.ref[Fingerprint], str]] = BoundedMemo(
            _RENDER_MEMO_LIMIT, _RENDER_BUDGET, lambda _, found: OVERHEAD * 2 + len(found[1])
        )

    def explain(
        self,
        fingerprint: Fingerprint,
        tier: Tier,
        signature_id: str,
        similarity: float | None,
        neighbours: list[Neighbour],
        rule: str | None = None,
    ) -> str:
        decision = _decision(tier, signature_id, similarity, neighbours, self._config)
        if rule:
            decision += "\n" + rule
        return self._render(fingerprint) + "\n" + decision

    def _render(self, fingerprint: Fingerprint) -> str:
        # Keyed on the object: cached fingerprints are shared, fresh ones render once. An entry is the
        # object's while it is alive (its id is not reused meanwhile), which its weak reference tells.
        cached = self._rendered.get(id(fingerprint))
        if cached is not None and cached[0]() is fingerprint:
            return cached[1]
        text = render(fingerprint.tree)
        self._rendered.put(id(fingerprint), (weakref.ref(fingerprint), text))
        return text


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
