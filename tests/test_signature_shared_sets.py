"""A signature's sets of names (services, versions, environments, related ids) shared with the signatures that
hold equal ones (`shared_set`): the same signature to every reader, stored and carried alike, built new, read
back or absorbing a round."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rounds_bot.signature
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.signature import Signature, shared_set
from rounds_bot.store.signatures import from_row, to_row
from rounds_bot.tally import Tally

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
SETS = ("services", "versions", "environments", "related")

names = st.frozensets(st.sampled_from(["api", "worker", "1.0", "1.1", "prod", "sig_9", "é", "\U0001f600"]))


def occurrences(places: list[tuple[str, str, str]]) -> list[ErrorEvent]:
    return [
        ErrorEvent(
            event_id=f"e{n}",
            timestamp=T0 + timedelta(minutes=n),
            service=service,
            service_version=version,
            environment=environment,
            message="boom",
        )
        for n, (service, version, environment) in enumerate(places)
    ]


def tally_of(events: list[ErrorEvent], related: list[str]) -> Tally:
    assignment = Assignment(
        signature_id="sig_1",
        tier="new",
        fingerprint_hash="h1",
        fingerprint_version="fp-1",
        explanation="message: boom",
        title="Error: boom",
        normalized_message="boom",
        related=related,
    )
    tally = Tally(assignment)
    for event in events:
        tally.add(event, event.count, event.timestamp, event.timestamp)
    return tally


STATE = SignatureState(signature_id="sig_1", service="api", seq=0)
place = st.sampled_from(["api", "worker", "1.0", "", "prod"])
places = st.lists(st.tuples(place, place, place), min_size=1, max_size=6)
related_ids = st.lists(st.sampled_from(["sig_2", "sig_3", "sig_9"]), max_size=3)


def own_sets(signature: Signature) -> Signature:
    """`signature` with sets of its own, as it was built before they were shared."""
    return signature.model_copy(update={name: frozenset(set(getattr(signature, name))) for name in SETS})


@settings(max_examples=150, deadline=None)
@given(places, related_ids, places, related_ids)
def test_a_signature_sharing_its_sets_is_the_signature_made_with_its_own(
    first_places: list[tuple[str, str, str]],
    first_related: list[str],
    later_places: list[tuple[str, str, str]],
    later_related: list[str],
):
    first = Signature.first(tally_of(occurrences(first_places), first_related), STATE, run_id="r", now=T0)
    later = tally_of(occurrences(later_places), later_related)
    after = first.absorb(later, STATE, now=T0)
    unshared = own_sets(first).absorb(later, STATE, now=T0)
    for made, own in ((first, own_sets(first)), (after, unshared)):
        assert made == own and made.model_dump() == own.model_dump()
        assert to_row(made) == to_row(own) and made.to_marker() == own.to_marker()
        assert from_row(to_row(made)) == own
    # what the tallies saw, exactly
    assert after.services == {s for s, _, _ in first_places + later_places}
    assert after.versions == {v for _, v, _ in first_places + later_places if v}
    assert after.related == {*first_related, *later_related}


@settings(max_examples=100, deadline=None)
@given(st.lists(names, min_size=1, max_size=8))
def test_equal_sets_are_one_set_whoever_made_them(sets: list[frozenset[str]]):
    shared = [shared_set(frozenset(set(values))) for values in sets]
    for values, one in zip(sets, shared, strict=True):
        assert one == values
        assert all(other is one for other in shared if other == one)


def test_signatures_built_new_and_read_back_hold_one_set_of_each_kind():
    tally = tally_of(occurrences([("api", "1.0", "prod")]), [])
    a = Signature.first(tally, STATE, run_id="r", now=T0)
    b = Signature.first(tally, STATE, run_id="r", now=T0)
    read = from_row(to_row(a))
    for name in SETS:
        assert getattr(a, name) is getattr(b, name) is getattr(read, name)
    assert a.related == frozenset()  # the empty set too is one: no related ids


def test_past_the_cap_a_signature_keeps_its_own_equal_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rounds_bot.signature, "_SHARED_SETS", {})
    monkeypatch.setattr(rounds_bot.signature, "MAX_SHARED_SETS", 1)
    held = shared_set(frozenset({"api"}))
    assert shared_set(frozenset({"api"})) is held
    own = frozenset({"worker"})
    assert shared_set(own) is own and shared_set(frozenset({"worker"})) is not own
