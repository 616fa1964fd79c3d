"""Which signatures get a diagnosis, and the reason the others wait."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rounds_bot.triage import Occurrence, SignatureActivity, TriagePolicy, decide, peak_count, triage

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
POLICY = TriagePolicy()


def burst(count: int, spacing: timedelta, *, fatal: bool = False) -> list[Occurrence]:
    return [Occurrence(timestamp=NOW - spacing * i, fatal=fatal) for i in range(count)]


def decision(activity: SignatureActivity, revision: str = "rev-2"):
    return decide(activity, now=NOW, code_revision=revision, policy=POLICY)


def test_new_signature_with_ten_occurrences_in_five_minutes_is_diagnosed():
    result = decision(SignatureActivity(signature_id="s", occurrences=burst(10, timedelta(seconds=30))))
    assert result.diagnose and result.trigger == "new"
    assert "10 occurrences within 5 minutes" in result.reason


def test_new_signature_spread_too_thin_waits_with_its_peak():
    result = decision(SignatureActivity(signature_id="s", occurrences=burst(10, timedelta(minutes=2))))
    assert not result.diagnose
    assert "at most 3 occurrence(s) within 5 minutes" in result.reason


def test_a_single_fatal_occurrence_is_enough():
    result = decision(SignatureActivity(signature_id="s", occurrences=burst(1, timedelta(0), fatal=True)))
    assert result.diagnose and result.trigger == "new" and "fatal" in result.reason


def test_spike_against_the_signatures_own_baseline():
    activity = SignatureActivity(
        signature_id="s",
        occurrences=burst(60, timedelta(seconds=10)),
        baseline_per_hour=4.0,
        last_diagnosed_at=NOW - timedelta(days=1),
        diagnosed_revision="rev-1",
    )
    result = decision(activity)
    assert result.diagnose and result.trigger == "spike"
    assert "60.0/h against a baseline of 4.0/h" in result.reason


def test_usual_rate_of_a_known_signature_waits():
    activity = SignatureActivity(
        signature_id="s",
        occurrences=burst(5, timedelta(minutes=5)),
        baseline_per_hour=4.0,
        last_diagnosed_at=NOW - timedelta(days=1),
        diagnosed_revision="rev-1",
    )
    result = decision(activity)
    assert not result.diagnose and "no trigger" in result.reason


def test_regression_after_resolution():
    activity = SignatureActivity(
        signature_id="s",
        occurrences=burst(2, timedelta(minutes=1)),
        resolved_at=NOW - timedelta(hours=2),
        last_diagnosed_at=NOW - timedelta(days=3),
        diagnosed_revision="rev-2",
    )
    result = decision(activity)
    assert result.diagnose and result.trigger == "regression"


def test_periodic_review_of_an_old_diagnosis():
    activity = SignatureActivity(
        signature_id="s",
        occurrences=burst(3, timedelta(minutes=10)),
        last_diagnosed_at=NOW - timedelta(days=9),
        diagnosed_revision="rev-1",
    )
    result = decision(activity)
    assert result.diagnose and result.trigger == "periodic_review" and "9 days" in result.reason


def test_explicit_request_wins_even_at_the_same_revision_and_without_occurrences():
    activity = SignatureActivity(
        signature_id="s", rediagnose_requested=True, rediagnose_reason="/rounds diagnose by @maintainer",
        diagnosed_revision="rev-2",
    )  # fmt: skip
    result = decision(activity)
    assert result.diagnose and result.trigger == "rediagnose" and "/rounds diagnose" in result.reason


def test_diagnosis_cached_for_this_revision_waits():
    activity = SignatureActivity(
        signature_id="s", occurrences=burst(50, timedelta(seconds=1)), diagnosed_revision="rev-2",
        last_diagnosed_at=NOW - timedelta(days=30),
    )  # fmt: skip
    result = decision(activity)
    assert not result.diagnose and "already diagnosed at revision rev-2" in result.reason


def test_triage_keeps_input_order_and_gives_every_signature_a_reason():
    activities = [
        SignatureActivity(signature_id="quiet"),
        SignatureActivity(signature_id="loud", occurrences=burst(12, timedelta(seconds=5))),
    ]
    results = triage(activities, now=NOW, code_revision="rev-2")
    assert [(r.signature_id, r.diagnose) for r in results] == [("quiet", False), ("loud", True)]
    assert all(r.reason for r in results)


def test_peak_count_uses_a_sliding_window_and_event_counts():
    occurrences = [
        Occurrence(timestamp=NOW, count=4),
        Occurrence(timestamp=NOW + timedelta(minutes=4), count=5),
        Occurrence(timestamp=NOW + timedelta(minutes=9), count=1),
    ]
    assert peak_count(occurrences, timedelta(minutes=5)) == 9
