"""Every issue body ends with a next step that fits what is known of the problem."""

from __future__ import annotations

from rounds_bot.code.locate import CodeContext, LinkedFrame
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.render.next_step import next_step

CRASH = CodeContext(
    frames=[
        LinkedFrame(function="load", printed="/app/vendor/x.py:3"),  # not mapped to the repository
        LinkedFrame(
            function="quote",
            printed="/app/checkout/pricing.py:88",
            repo_path="checkout/pricing.py",
            line=88,
            url="https://github.com/acme/shop/blob/abc/checkout/pricing.py#L88",
        ),
    ]
)


def diagnosis(**fields: object) -> Diagnosis:
    answer: dict[str, object] = {
        "classification": "server_bug",
        "root_cause": "r",
        "suggested_fix": "f",
        "confidence": "high",
        **fields,
    }
    return Diagnosis.model_validate(answer)


def test_diagnosis_off_names_the_crash_sites_file_and_how_to_turn_diagnosis_on():
    line = next_step(None, CRASH, diagnosis_on=False)
    assert line.startswith(
        "**Next step:** open [`checkout/pricing.py:88`](https://github.com/acme/shop/blob/"
    )
    assert "`ANTHROPIC_API_KEY`" in line and "`/rounds rediagnose`" in line
    alone = next_step(None, CodeContext(), diagnosis_on=False)
    assert alone.startswith("**Next step:** Diagnosis is off here: set `ANTHROPIC_API_KEY`")


def test_not_yet_diagnosed_offers_the_file_or_a_rediagnosis():
    assert "open [`checkout/pricing.py:88`]" in next_step(None, CRASH)
    assert next_step(None, CodeContext()).startswith("**Next step:** reply `/rounds rediagnose`")


def test_an_unsure_diagnosis_asks_for_the_evidence_it_lacks_escaped():
    low = diagnosis(confidence="low", missing_observability=["the cart id on the span", "@team's #12 logs"])
    line = next_step(low, CRASH)
    assert "low confidence" in line and "the cart id on the span" in line
    assert "@\u200bteam" in line and "#\u200b12" in line  # the model's words cannot ping or reference
    abstained = diagnosis(classification="unknown", unknown_reason="no trace", suggested_fix="")
    line = next_step(abstained, CRASH)
    assert "abstains and names no missing evidence; open [`checkout/pricing.py:88`]" in line


def test_a_confident_diagnosis_points_at_its_suggested_fix():
    for confidence in ("high", "medium"):
        assert "review the suggested fix" in next_step(diagnosis(confidence=confidence), CodeContext())
        assert "`/rounds fix`" in next_step(diagnosis(confidence=confidence), CodeContext())
