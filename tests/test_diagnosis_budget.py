"""Budget decisions, estimates and the cache key: pure functions."""

from __future__ import annotations

import pytest

from rounds_bot.diagnosis.budget import (
    UNKNOWN_MODEL_PRICE,
    BudgetCaps,
    CallShape,
    decide,
    diagnosis_cache_key,
    estimate_cost,
    price_for,
)

CAPS = BudgetCaps(per_diagnosis=0.50, per_round=2.00, monthly=20.00)


def test_call_within_every_cap_is_allowed():
    decision = decide(0.20, spent_this_round=1.00, spent_this_month=10.00, caps=CAPS)
    assert decision.allow and decision.reason.startswith("allowed")


@pytest.mark.parametrize(
    ("estimate", "round_spent", "month_spent", "cap_named"),
    [
        (0.60, 0.0, 0.0, "per-diagnosis cap"),
        (0.30, 1.80, 0.0, "round cap"),
        (0.30, 0.0, 19.80, "monthly cap"),
    ],
)
def test_call_that_would_exceed_a_cap_is_skipped_naming_the_cap(
    estimate, round_spent, month_spent, cap_named
):
    decision = decide(estimate, spent_this_round=round_spent, spent_this_month=month_spent, caps=CAPS)
    assert not decision.allow
    assert cap_named in decision.reason


def test_a_zero_cap_forbids_every_call():
    decision = decide(
        0.0, spent_this_round=0, spent_this_month=0, caps=CAPS.model_copy(update={"monthly": 0})
    )
    assert not decision.allow


def test_prices_resolve_full_ids_and_aliases_longest_prefix_first():
    assert price_for("claude-opus-4-1-20250805").input == 15
    assert price_for("claude-opus-4-5-20251101").input == 5
    assert price_for("claude-sonnet-4-5-20250929").input == 3
    assert price_for("sonnet").input == 2
    assert price_for("some-other-model") == UNKNOWN_MODEL_PRICE


def test_estimate_grows_with_context_and_turns_and_counts_cache_reads():
    price = price_for("claude-sonnet-4-5")
    small = estimate_cost(CallShape(context_tokens=1_000), price)
    bigger = estimate_cost(CallShape(context_tokens=20_000), price)
    longer = estimate_cost(CallShape(context_tokens=1_000, expected_turns=8), price)
    assert 0 < small < bigger and small < longer
    one_turn = CallShape(context_tokens=10_000, overhead_tokens=0, expected_turns=1, output_tokens_per_turn=0)
    assert estimate_cost(one_turn, price) == pytest.approx(10_000 * 3.75 / 1e6)


def test_cache_key_depends_on_signature_revision_and_format_only():
    key = diagnosis_cache_key("sig-1", "abc123")
    assert key == diagnosis_cache_key("sig-1", "abc123")
    assert key != diagnosis_cache_key("sig-1", "abc124")
    assert key != diagnosis_cache_key("sig-2", "abc123")
    assert key != diagnosis_cache_key("sig-1", "abc123", format_version="2")
    assert key.startswith("diag-v1-")
