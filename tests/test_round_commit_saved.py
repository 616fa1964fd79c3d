"""The signatures a round's commit saves: every one it touched, planned ones first, made as they are saved."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import islice

from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.round.commit import Learned, _saved
from rounds_bot.round.counted import Counted
from rounds_bot.round.planning import IssuePlan
from rounds_bot.signature import Signature
from rounds_bot.tally import Tally
from rounds_bot.tracker.base import IssueRef

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
KINDS = ["new", "filed-late", "updated", "regressed", "muted", "deferred"]


def _signature(n: int) -> tuple[Tally, Signature]:
    tally = Tally(
        assignment=Assignment(
            signature_id=f"sig_{n}",
            tier="new",
            fingerprint_hash=f"h{n}",
            fingerprint_version="fp-1",
            explanation="message",
            title=f"Error: failed {n}",
            normalized_message=f"failed {n}",
        )
    )
    tally.add(ErrorEvent(event_id=f"e{n}", timestamp=T0, service="api", message=f"failed {n}"), 1, T0, T0)
    state = SignatureState(signature_id=f"sig_{n}", service="api", seq=n)
    return tally, Signature.first(tally, state, run_id="r1", now=T0)


def _every_signature_saved(learned: Learned) -> list[Signature]:
    """What the commit saved before it saved them as made: the whole list, built first."""
    planned = {plan.signature_id for plan in learned.plans}
    saved = []
    for plan in learned.plans:
        signature = learned.signatures[plan.signature_id]
        saved.append(signature.filed_as(plan.issue.ref) if plan.issue is not None else signature)
    saved += [learned.signatures[sid] for sid in learned.tallies if sid not in planned]
    return saved


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 12),
    st.data(),
)
def test_the_signatures_saved_as_made_are_those_saved_whole_in_the_same_order(
    count: int, data: st.DataObject
):
    made = [_signature(n) for n in range(count)]
    tallies = {tally.assignment.signature_id: tally for tally, _ in made}
    signatures = {signature.id: signature for _, signature in made}
    planned = data.draw(
        st.lists(st.sampled_from(sorted(signatures)), unique=True) if signatures else st.just([])
    )
    plans = []
    for sid in planned:
        kind = data.draw(st.sampled_from(KINDS))
        issue = IssueRef(signature_id=sid, ref=f"#{sid[4:]}") if data.draw(st.booleans()) else None
        plans.append(IssuePlan(sid, kind, tallies[sid], signatures[sid], issue))  # type: ignore[arg-type]
    learned = Learned(
        run_id="r1",
        now=T0,
        source="otlp",
        signatures=signatures,
        tallies=tallies,
        counted=Counted(),
        plans=plans,
        lapsed_mutes=[],
        cursor=T0,
        forget_before=T0 - timedelta(hours=1),
    )
    saved = _saved(learned)
    assert isinstance(saved, Iterator)
    assert list(saved) == _every_signature_saved(learned)


def test_a_signature_filed_under_its_issue_is_made_only_when_it_is_saved(monkeypatch):
    made = [_signature(n) for n in range(3)]
    tallies = {tally.assignment.signature_id: tally for tally, _ in made}
    signatures = {signature.id: signature for _, signature in made}
    plans = [
        IssuePlan(sid, "new", tallies[sid], signatures[sid], IssueRef(signature_id=sid, ref=f"#{n}"))
        for n, sid in enumerate(signatures)
    ]
    learned = Learned("r1", T0, "otlp", signatures, tallies, Counted(), plans, [], T0, T0)
    filed: list[str] = []
    original = Signature.filed_as

    def noting(self: Signature, issue_ref: str) -> Signature:
        filed.append(issue_ref)
        return original(self, issue_ref)

    monkeypatch.setattr(Signature, "filed_as", noting)
    first = list(islice(_saved(learned), 1))
    assert [s.issue_ref for s in first] == ["#0"] and filed == ["#0"]
