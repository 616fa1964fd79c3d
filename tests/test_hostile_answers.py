"""No model answer can stop a round or go live in an issue; invented evidence is flagged and never `high`.

The families (`hostile_answers`) are the proof suite's: every hostile answer through both diagnosers, a
hostile 70 KB diagnosis cut at 1,600+ positions and judged with GitHub's renderer, invented evidence through
the checks, the rendering and the auto-fix gate. Then one real round against the fake GitHub where one
signature's answer is 3 KB nested 1,500 deep: that diagnosis fails, the issue and the report say so, every
other signature is filed and diagnosed, and the database is written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from diagnosis_samples import make_checkout, sample_request
from fake_github.fixtures import running_fake
from fake_github.server import FakeGitHub
from hostile_answers import (
    LAZY_QUOTES,
    LOOK_ALIKES,
    PAYLOAD,
    answer_family,
    claude_outcome,
    claude_result_line,
    command_family,
    cut_family,
    evidence_family,
    good_answer,
    hostile_answers,
    hostile_diagnosis,
    openai_outcome,
    rendered_live,
)
from security_harness import RecordingModel, _line, _Record, github_outputs, now

from rounds_bot.commands.grammar import command_lines, parse_comment
from rounds_bot.diagnosis.json_answer import MAX_ANSWER_CHARS, answer_problem, parse_json_answer
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome, EvidenceCheck, diagnosis_json_schema
from rounds_bot.diagnosis.openai_compat import OpenAICompatDiagnoser
from rounds_bot.events import Fact
from rounds_bot.fixing.auto import qualifies
from rounds_bot.models import ErrorEvent
from rounds_bot.render import markdown as md
from rounds_bot.render.diagnosis import render_diagnosis
from rounds_bot.signature import Signature
from rounds_bot.store import DiagnosisRecord, Store

DEEP_3KB = "[" * 1500 + "]" * 1500


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


@pytest.fixture
def checkout(tmp_path):
    return make_checkout(tmp_path / "repo")


def test_every_hostile_answer_fails_its_one_diagnosis_on_both_diagnosers(checkout):
    tried, live, examples = answer_family(checkout)
    assert tried == 3 * len(hostile_answers())
    assert (live, examples) == (0, [])


def test_a_3kb_answer_nested_1500_deep_is_refused_before_parsing_and_says_why(checkout):
    assert len(DEEP_3KB) == 3_000
    assert parse_json_answer(DEEP_3KB) is None
    assert "nests more than 32 levels" in (answer_problem(DEEP_3KB) or "")
    request = sample_request(checkout)
    claude = claude_outcome(request, claude_result_line(DEEP_3KB, structured=True))
    openai = openai_outcome(request, DEEP_3KB)
    assert (claude.status, openai.status) == ("invalid_answer", "invalid_answer")
    assert "nests more than 32 levels" in claude.detail and "nests more than 32 levels" in openai.detail


def test_the_claude_code_answer_is_capped_like_the_openai_one(checkout):
    request = sample_request(checkout)
    long_answer = json.dumps(good_answer(root_cause="x" * (MAX_ANSWER_CHARS + 1)))
    for structured in (True, False):
        outcome = claude_outcome(request, claude_result_line(long_answer, structured=structured))
        assert outcome.status == "invalid_answer"
        assert f"at most {MAX_ANSWER_CHARS:,}" in outcome.detail
    within = json.dumps(good_answer(root_cause="x" * 1_000))
    assert claude_outcome(request, claude_result_line(within, structured=True)).status == "ok"


def test_an_endpoint_answering_json_nested_past_the_parsers_limit_is_an_error_not_a_crash(checkout):
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=('{"choices": ' + DEEP_3KB + "}").encode())

    diagnoser = OpenAICompatDiagnoser(
        base_url="http://127.0.0.1:9/v1", model="m", transport=httpx.MockTransport(respond)
    )
    assert diagnoser.diagnose(sample_request(checkout)).status == "api_error"


# --- rendering after a cut ------------------------------------------------------------------------------


def test_a_hostile_diagnosis_cut_anywhere_renders_nothing_live():
    tried, live, examples = cut_family()
    assert tried > 1_600
    assert (live, examples) == (0, [])


def test_every_field_is_cut_before_it_is_escaped_so_the_diagnosis_has_a_known_size():
    markdown = render_diagnosis(hostile_diagnosis(size=200_000))
    assert len(markdown) < 45_000
    assert rendered_live(markdown) == []
    assert "…" in markdown


def test_a_cut_that_leaves_a_fence_open_closes_it():
    markdown = "intro\n```\ncode line 1\ncode line 2\n```\nafter"
    cut = md.cut(markdown, len("intro\n```\ncode line 1\ncode"), "_(cut)_")
    assert cut == "intro\n```\ncode line 1\n```\n\n_(cut)_\n"


def test_escape_block_cuts_text_before_escaping():
    text = f"`{PAYLOAD}` " * 10
    for limit in range(1, len(text), 7):
        assert rendered_live(md.escape_block(text, limit=limit)) == []


# --- evidence -------------------------------------------------------------------------------------------


def test_invented_evidence_is_flagged_in_the_issue_and_never_high(checkout):
    tried, live, examples = evidence_family(checkout)
    assert tried == 6
    assert (live, examples) == (0, [])


def test_a_high_answer_with_unverified_evidence_says_it_was_lowered_and_why():
    answer = Diagnosis.from_answer(good_answer(confidence="high"))
    unverified = [EvidenceCheck(index=0, verified=False, reason="shop/pay.py has 2 lines, not 9")]
    outcome = DiagnosisOutcome(status="ok", diagnosis=answer, evidence_checks=unverified)
    diagnosis = outcome.diagnosis
    assert diagnosis is not None
    assert (diagnosis.confidence, diagnosis.stated_confidence, diagnosis.evidence_verified) == (
        "medium",
        "high",
        False,
    )
    markdown = render_diagnosis(diagnosis)
    assert "confidence medium. The answer said high; rounds lowered it" in markdown
    assert "⚠️ _unverified: shop/pay.py has 2 lines, not 9_" in markdown
    # read back from the database, it is the same
    again = DiagnosisOutcome.model_validate_json(outcome.model_dump_json())
    assert again.diagnosis == diagnosis


def test_the_answer_cannot_claim_rounds_checks_for_itself():
    claimed = good_answer(
        confidence="high",
        evidence_checks=[{"index": 0, "verified": True, "reason": "trust me"}],
        stated_confidence="high",
    )
    diagnosis = Diagnosis.from_answer(claimed)
    assert diagnosis.evidence_checks == [] and not diagnosis.evidence_verified
    assert "evidence_checks" not in json.dumps(diagnosis_json_schema())
    assert "not checked by rounds" in render_diagnosis(diagnosis)


def test_an_old_record_without_checks_on_its_diagnosis_gets_them_from_the_outcome():
    stored = DiagnosisOutcome(status="ok", diagnosis=Diagnosis.from_answer(good_answer(confidence="high")))
    row = json.loads(stored.model_dump_json())
    row["diagnosis"].pop("evidence_checks")
    row["evidence_checks"] = [{"index": 0, "verified": False, "reason": "gone"}]
    again = DiagnosisOutcome.model_validate(row)
    assert again.diagnosis is not None and again.diagnosis.confidence == "medium"


def test_the_auto_fix_gate_refuses_a_high_answer_whose_evidence_was_not_verified():
    at = datetime(2026, 3, 1, tzinfo=UTC)
    store = Store.memory()
    chosen = {}
    for sid, verified in (("sig_checked", True), ("sig_invented", False)):
        event = ErrorEvent(event_id=f"e-{sid}", timestamp=at, service="shop", message="boom")
        signature = Signature(
            id=sid, service="shop", title="boom", representative=event, first_seen=at, last_seen=at,
            total_count=3, issue_ref="#1",
        )  # fmt: skip
        answer = Diagnosis.from_answer(good_answer(confidence="high"))
        outcome = DiagnosisOutcome(
            status="ok",
            diagnosis=answer,
            evidence_checks=[EvidenceCheck(index=0, verified=verified, reason="x")],
        )
        with store.transaction():
            store.save(signature)
            store.append_event(Fact.INCIDENT_DETECTED, f"d:{sid}", signature_id=sid, run_id="r", at=at)
            store.record_diagnosis(
                DiagnosisRecord(
                    cache_key=f"{sid}:r1", signature_id=sid, revision="r1", at=at.isoformat(), status="ok",
                    outcome=outcome,
                )
            )  # fmt: skip
        chosen[sid] = qualifies(store, signature, set())
    assert chosen == {"sig_checked": True, "sig_invented": False}


# --- one real round -------------------------------------------------------------------------------------


class FirstAnswerDeep(RecordingModel):
    """Answers the first request with 3 KB of JSON nested 1,500 deep, every other one with a good answer."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        response = super().__call__(request)
        if len(self.prompts) > 1:
            return response
        body = response.json()
        body["choices"][0]["message"]["content"] = DEEP_3KB
        return httpx.Response(200, json=body)


@pytest.mark.github_spec
def test_a_round_where_one_answer_is_nested_1500_deep_files_everything_and_writes_its_database(
    fake_github, tmp_path
):
    telemetry = tmp_path / "three.jsonl"
    problems = [
        ("KeyError", "'user_id' missing from session", "shop/session.py", "load"),
        ("ZeroDivisionError", "division by zero in average price", "shop/pricing.py", "average"),
        ("TimeoutError", "inventory service did not answer within 30 s", "shop/stock.py", "reserve"),
    ]
    records = [
        _Record(
            error_type=kind,
            message=message,
            stacktrace=f'Traceback (most recent call last):\n  File "{path}", line 7, in {function}\n{kind}',
        )
        for kind, message, path, function in problems
    ]
    telemetry.write_text(
        "\n".join(json.dumps(_line(record, n, now())) for n, record in enumerate(records)) + "\n",
        encoding="utf-8",
    )
    model = FirstAnswerDeep(good_answer())
    outputs = github_outputs(fake_github, tmp_path, telemetry, model)
    issues = fake_github.issues()
    assert len(issues) == 3 and len(model.prompts) == 3
    failed = [issue for issue in issues if "This round's diagnosis failed" in issue.body]
    diagnosed = [issue for issue in issues if "### Root cause" in issue.body]
    assert len(failed) == 1 and len(diagnosed) == 2
    assert "the model's answer could not be read" in failed[0].body
    assert "nests more than 32 levels deep" in failed[0].body
    assert (
        "diagnosis invalid_answer: the answer nests more than 32 levels deep"
        in outputs.texts["github report"]
    )
    db = sqlite3.connect(tmp_path / "rounds.db")
    try:
        statuses = sorted(status for (status,) in db.execute("select status from diagnoses"))
    finally:
        db.close()
    assert statuses == ["invalid_answer", "ok", "ok"]


# --- commands -------------------------------------------------------------------------------------------


def test_no_look_alike_or_lazily_quoted_command_is_obeyed():
    tried, live, examples = command_family()
    assert tried == len(LOOK_ALIKES) + len(LAZY_QUOTES)
    assert (live, examples) == (0, [])


@pytest.mark.parametrize("body", ["/round\u017f pause", "/r\u043eunds pause", "\uff0frounds pause"])
def test_a_look_alike_of_rounds_is_refused_with_a_reply_naming_the_character(body):
    parsed = parse_comment(body)
    assert parsed.commands == []
    [refused] = parsed.malformed
    assert "looks like `/rounds` but is not written in plain ASCII (U+" in refused.problem


def test_a_look_alike_command_name_is_refused_the_same_way():
    [refused] = parse_comment("/rounds pau\u017fe").malformed
    assert refused.problem.startswith("`pau\u017fe` looks like `pause`")
    assert "U+017F LATIN SMALL LETTER LONG S" in refused.problem


def test_ascii_commands_in_any_ascii_case_are_still_obeyed_and_numbers_are_ascii():
    assert [c.name for c in parse_comment("/Rounds PAUSE\n/rounds merge #12").commands] == ["pause", "merge"]
    assert parse_comment("/rounds merge #\uff11\uff12").commands == []
    assert parse_comment("/rounds ignore until \u0661\u0662 occurrences").commands == []


def test_a_quote_ends_at_a_blank_line_or_a_block_that_interrupts_it():
    assert command_lines("> quoted\n\n/rounds pause") == ["/rounds pause"]
    assert command_lines("> quoted\n# heading\n/rounds pause") == ["/rounds pause"]
    assert command_lines("> quoted\n---\n/rounds pause") == ["/rounds pause"]
    assert command_lines(">\n/rounds pause") == ["/rounds pause"]  # an empty quote line has no paragraph
    assert command_lines("> # heading\n/rounds pause") == ["/rounds pause"]
    assert command_lines("> quoted\ncontinued\n/rounds pause") == []
