"""An answer that says two things is not read as either: duplicate keys, several different JSON objects.

A JSON object whose name repeats means what the parser that reads it decides (Python's keeps the last value,
others the first, RFC 8259 section 4 leaves it open; I-JSON, RFC 7493 section 2.3, forbids it), and an answer
split across several objects (two fenced blocks) is the same ambiguity one level up: whichever rounds picked,
a reader of the raw answer, or another parser, may have taken the other. Both are `invalid_answer`, saying
why, on both diagnosers; one object repeated whole is still one answer. A value of the wrong JSON type is
not converted into the one the schema asks for.
"""

from __future__ import annotations

import json

import pytest
from diagnosis_samples import make_checkout, sample_request
from hostile_answers import claude_outcome, claude_result_line, good_answer, openai_outcome
from pydantic import ValidationError

from rounds_bot.diagnosis.json_answer import answer_problem, parse_json_answer
from rounds_bot.diagnosis.model import Diagnosis, diagnosis_json_schema

GOOD = json.dumps(good_answer())
#: the classification twice: `server_bug` first (what a first-wins reader acts on), `client_misuse` last
DUPLICATE_KEY = GOOD.replace(
    '"classification": "server_bug"', '"classification": "server_bug", "classification": "client_misuse"'
)
DUPLICATE_IN_EVIDENCE = json.dumps(good_answer()).replace('"line": 1', '"line": 1, "line": 900')
TWO_FENCED_ANSWERS = (
    "My first thought:\n```json\n"
    + json.dumps(good_answer(confidence="low"))
    + "\n```\nOn reflection:\n```json\n"
    + json.dumps(good_answer(classification="client_misuse", confidence="high"))
    + "\n```"
)
THE_SAME_ANSWER_TWICE = f"```json\n{GOOD}\n```\nAgain:\n```json\n{GOOD}\n```"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (DUPLICATE_KEY, "the answer repeats the key 'classification'"),
        (DUPLICATE_IN_EVIDENCE, "the answer repeats the key 'line'"),
        ("Answer:\n```json\n" + DUPLICATE_KEY + "\n```", "the answer repeats the key 'classification'"),
        (TWO_FENCED_ANSWERS, "the answer holds 2 different JSON objects; a diagnosis is one"),
    ],
)
def test_an_answer_that_says_two_things_is_not_read_and_says_why(text, reason):
    assert parse_json_answer(text) is None
    assert answer_problem(text) == reason


def test_one_answer_repeated_whole_is_still_read():
    assert parse_json_answer(THE_SAME_ANSWER_TWICE) == good_answer()
    assert answer_problem(THE_SAME_ANSWER_TWICE) is None
    assert parse_json_answer(GOOD) == good_answer()


@pytest.mark.parametrize("text", [DUPLICATE_KEY, TWO_FENCED_ANSWERS])
def test_both_diagnosers_refuse_an_answer_that_says_two_things(tmp_path, text):
    request = sample_request(make_checkout(tmp_path / "repo"))
    claude = claude_outcome(request, claude_result_line(text, structured=False))
    openai = openai_outcome(request, text)
    assert (claude.status, openai.status) == ("invalid_answer", "invalid_answer")
    assert "the answer" in claude.detail and ("repeats" in openai.detail or "different" in openai.detail)


def test_a_repeated_key_in_the_structured_output_is_an_invalid_answer_not_an_api_error(tmp_path):
    """The CLI's result line carries the structured output as JSON: a key repeated there is the answer's."""
    request = sample_request(make_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line(DUPLICATE_KEY, structured=True))
    assert outcome.status == "invalid_answer"
    assert "repeats the key 'classification'" in outcome.detail


@pytest.mark.parametrize(
    ("where", "value"),
    [("evidence", True), ("evidence", "7"), ("fault_location", False), ("fault_location", "12")],
)
def test_a_line_number_is_a_json_integer_not_a_boolean_or_a_string(where, value):
    """The schema the model answers says `integer`: `true` is no line (read as 1 it would be checked, and
    verified, as line 1), nor is `"7"`, whatever Python's lax conversions would make of them."""
    if where == "evidence":
        answer = good_answer(
            evidence=[{"kind": "file", "path": "shop/pay.py", "line": value, "explanation": "x"}]
        )
    else:
        answer = good_answer(
            fault_location={"path": "shop/pay.py", "function": "charge", "start_line": value}
        )
    with pytest.raises(ValidationError, match="integer"):
        Diagnosis.from_answer(answer)
    assert Diagnosis.from_answer(json.loads(json.dumps(good_answer()))).evidence[0].line == 1


#: the answer in a fenced block, then prose that quotes one evidence item of it in a fence of its own
ANSWER_THEN_QUOTE = (
    "```json\n"
    + json.dumps(good_answer(), indent=2)
    + "\n```\n\nThe decisive evidence is this item:\n\n```json\n"
    + json.dumps(good_answer()["evidence"][0])
    + "\n```\n"
)


def test_an_answer_that_quotes_a_part_of_itself_in_another_block_is_one_answer() -> None:
    assert answer_problem(ANSWER_THEN_QUOTE) is None
    assert parse_json_answer(ANSWER_THEN_QUOTE) == good_answer()


def test_both_diagnosers_read_an_answer_that_quotes_a_part_of_itself(tmp_path) -> None:
    request = sample_request(make_checkout(tmp_path / "repo"))
    claude = claude_outcome(request, claude_result_line(ANSWER_THEN_QUOTE, structured=False))
    openai = openai_outcome(request, ANSWER_THEN_QUOTE)
    assert (claude.status, openai.status) == ("ok", "ok"), (claude.detail, openai.detail)


@pytest.mark.parametrize("line", [7.5, True, "7"])
def test_a_line_that_is_no_whole_json_number_is_refused(line: object) -> None:
    evidence = {"kind": "file", "path": "shop/cart.py", "line": line, "explanation": "x"}
    with pytest.raises(ValidationError):
        Diagnosis.from_answer(good_answer(evidence=[evidence]))


@pytest.mark.parametrize("where", ["evidence", "start_line", "end_line"])
def test_a_whole_number_written_with_a_fraction_is_that_line(where: str) -> None:
    """JSON Schema counts 7.0 an integer (2020-12 Validation §6.1.1): `"line": 7.0` is a valid answer."""
    if where == "evidence":
        answer = good_answer(
            evidence=[{"kind": "file", "path": "shop/pay.py", "line": 7.0, "explanation": "x"}]
        )
        assert Diagnosis.from_answer(answer).evidence[0].line == 7
    else:
        location = {"path": "shop/pay.py", "function": "charge", "start_line": 3, where: 7.0}
        found = Diagnosis.from_answer(good_answer(fault_location=location)).fault_location
        assert found is not None and getattr(found, where) == 7
        assert type(getattr(found, where)) is int


def test_a_fraction_where_the_schema_says_number_or_string_stays_as_it_was() -> None:
    """Only what the schema declares an integer is read so: a message quoting `7.0` keeps it."""
    answer = good_answer(root_cause="retries 7.0 times", missing_observability=["7.0"])
    read = Diagnosis.from_answer(answer)
    assert (read.root_cause, read.missing_observability) == ("retries 7.0 times", ["7.0"])


def test_reading_whole_numbers_leaves_the_schema_given_to_the_cli_as_it_was() -> None:
    """The CLI checks the schema strictly: the reading adds no keyword to it (a validator once added `ge`)."""
    schema = json.dumps(diagnosis_json_schema(), sort_keys=True)
    Diagnosis.from_answer(
        good_answer(evidence=[{"kind": "file", "path": "a.py", "line": 7.0, "explanation": "x"}])
    )
    assert json.dumps(diagnosis_json_schema(), sort_keys=True) == schema
    assert '"type": "integer"' in schema and "BeforeValidator" not in schema


def test_both_diagnosers_read_a_line_written_as_seven_point_zero(tmp_path) -> None:
    text = json.dumps(good_answer()).replace('"line": 1', '"line": 1.0')
    assert '"line": 1.0' in text
    request = sample_request(make_checkout(tmp_path / "repo"))
    claude = claude_outcome(request, claude_result_line(text, structured=False))
    openai = openai_outcome(request, text)
    assert (claude.status, openai.status) == ("ok", "ok"), (claude.detail, openai.detail)


#: a classic GitHub personal access token (GitHub docs: `ghp_` and 36 characters), as a model could quote it
TOKEN = "ghp_" + "R7x9Kq2Lm4Np6Tv8Wz1Yb3Cd5Fg7Hj9Kl2Mn"


@pytest.mark.parametrize("structured", [True, False])
def test_a_repeated_key_is_named_redacted_and_cut_in_the_reason(tmp_path, structured) -> None:
    """The reason goes to the issue and the round report: the key is the model's text, like any other."""
    text = GOOD.replace('"confidence"', f'"{TOKEN}": 1, "{TOKEN}": 2, "confidence"', 1)
    assert answer_problem(text) == "the answer repeats the key '[REDACTED:github_token]'"
    request = sample_request(make_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line(text, structured=structured))
    assert outcome.status == "invalid_answer"
    assert TOKEN not in outcome.detail and "repeats the key '[REDACTED:github_token]'" in outcome.detail
    long_key = "k" * 500
    text = GOOD.replace('"confidence"', f'"{long_key}": 1, "{long_key}": 2, "confidence"', 1)
    assert answer_problem(text) == f"the answer repeats the key '{'k' * 59}…'"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            f"{GOOD}\n{json.dumps(good_answer(confidence='high'))}",
            "the answer holds 2 different JSON objects",
        ),
        (
            f"Maybe {GOOD}, or rather {json.dumps(good_answer(confidence='low'))}.",
            "the answer holds 2 different JSON objects",
        ),
        (GOOD[:-1] + ",}", "the answer's JSON does not parse: Expecting property name enclosed in double"),
        (GOOD.replace('"line": 1', '"line": ' + "9" * 5_000), "the answer's JSON does not parse: Exceeds"),
    ],
)
def test_an_answer_whose_json_does_not_read_says_why_not_that_it_held_none(tmp_path, text, reason) -> None:
    assert parse_json_answer(text) is None
    assert (answer_problem(text) or "").startswith(reason)
    request = sample_request(make_checkout(tmp_path / "repo"))
    claude = claude_outcome(request, claude_result_line(text, structured=False))
    openai = openai_outcome(request, text)
    assert claude.detail.startswith(reason) and openai.detail.startswith(reason)


def test_one_answer_printed_twice_in_a_row_is_one_answer() -> None:
    assert parse_json_answer(f"{GOOD}\n{GOOD}") == good_answer()


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (json.dumps([good_answer()]), "the structured output is a JSON list, not an object"),
        ('"a sentence"', "the structured output is a JSON string, not an object"),
    ],
)
def test_structured_output_that_is_no_object_says_what_it_was(tmp_path, text, detail) -> None:
    request = sample_request(make_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line(text, structured=True))
    assert (outcome.status, outcome.detail) == ("invalid_answer", detail)


def test_an_empty_answer_says_it_was_empty(tmp_path) -> None:
    request = sample_request(make_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line("  ", structured=False))
    assert (outcome.status, outcome.detail) == ("invalid_answer", "the answer was empty")
