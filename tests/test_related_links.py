"""'Possibly related' names issues rounds filed, with the similarity rounds computed, never bare ids when
an issue exists: both from the store, never from telemetry."""

from __future__ import annotations

from datetime import UTC, datetime

from rounds_bot.grouping.state import SignatureState
from rounds_bot.grouping.vectors import SimilarityVector
from rounds_bot.models import ErrorEvent
from rounds_bot.render.issue import RelatedLink
from rounds_bot.round.evidence import IssueEvidence, related_links
from rounds_bot.round.filing import _with_refs
from rounds_bot.signature import Signature
from rounds_bot.store import Store
from rounds_bot.tracker.base import IssueRef

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def signature(sid: str, vector: tuple[list[int], list[float]] | None, **fields: object) -> Signature:
    state = SignatureState(
        signature_id=sid,
        service="checkout",
        seq=1,
        similarity=SimilarityVector.of(*vector, with_frames=False) if vector else None,
    )
    event = ErrorEvent(event_id=f"e-{sid}", timestamp=T0, service="checkout", message="see #99")
    return Signature(
        id=sid, service="checkout", title="t", representative=event, grouping_state=state,
        first_seen=T0, last_seen=T0, **fields,
    )  # fmt: skip


def test_a_related_signature_with_an_issue_is_linked_with_its_similarity_else_named_by_its_id():
    store = Store.memory()
    store.save(signature("sig_b", ([1, 2], [0.6, 0.8]), issue_ref="#12"))
    store.save(signature("sig_c", ([3], [1.0])))  # no issue yet
    mine = signature("sig_a", ([1, 3], [1.0, 0.0]), related=frozenset({"sig_b", "sig_c", "sig_gone"}))
    links = related_links(store, mine)
    assert links == [
        RelatedLink(signature_id="sig_b", issue_ref="#12", similarity=0.6),
        RelatedLink(signature_id="sig_c", issue_ref=None, similarity=0.0),
        RelatedLink(signature_id="sig_gone", issue_ref=None, similarity=None),
    ]
    shown = [link.markdown() for link in links]
    assert shown == ["#12 (similarity 0.60)", "`sig_c` (similarity 0.00)", "`sig_gone`"]


def test_a_related_signature_filed_earlier_in_the_same_round_gets_the_issue_it_just_got():
    evidence = IssueEvidence(related=[RelatedLink(signature_id="sig_c", similarity=0.5)])
    filed = {"sig_c": IssueRef(signature_id="sig_c", ref="#13")}
    assert [link.markdown() for link in _with_refs(evidence, filed).related] == ["#13 (similarity 0.50)"]


def test_only_a_tracker_reference_links_anything_else_is_escaped():
    # a draft links to the draft beside it; nothing else becomes a link
    assert RelatedLink(signature_id="s", issue_ref="sig_s.md").markdown() == "[sig_s.md](sig_s.md)"
    assert RelatedLink(signature_id="s", issue_ref="#1 @team").markdown() == "\\#\u200b1 @\u200bteam"


def test_the_grouping_engines_own_score_comes_first_as_its_state_keeps_it():
    store = Store.memory()
    store.save(signature("sig_b", ([1, 2], [0.6, 0.8]), issue_ref="#12"))
    mine = signature("sig_a", ([1], [1.0]), related=frozenset({"sig_b"}))
    assert mine.grouping_state is not None
    state = mine.grouping_state.model_copy(update={"related_similarity": {"sig_b": 0.4449}})
    mine = mine.model_copy(update={"grouping_state": state})
    # the engine's 0.4449, not the saved vectors' cosine 0.6
    assert [link.markdown() for link in related_links(store, mine)] == ["#12 (similarity 0.44)"]


def test_a_score_written_in_why_grouped_is_not_read_back_from_the_text():
    store = Store.memory()
    store.save(signature("sig_b", ([1, 2], [0.6, 0.8]), issue_ref="#12"))
    explanation = "new signature sig_a\npossibly related to sig_b (0.44)"
    mine = signature("sig_a", ([1], [1.0]), related=frozenset({"sig_b"}), explanation=explanation)
    assert [link.markdown() for link in related_links(store, mine)] == ["#12 (similarity 0.60)"]
