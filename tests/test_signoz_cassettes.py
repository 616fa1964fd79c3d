"""Recorded SigNoz exchanges: replayed offline, checked against the spec's shapes.

The committed cassettes were recorded against the emulator (`python tests/signoz_recorder.py`);
setting ROUNDS_TEST_SIGNOZ_URL and ROUNDS_TEST_SIGNOZ_API_KEY re-records the scenarios a real
SigNoz can play (`pytest -m signoz_live`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from signoz_recorder import (
    CASSETTES,
    EMULATOR_KEY,
    SCENARIOS,
    read_index,
    record_against_emulator,
    record_against_live,
    replay,
)
from signoz_shapes import Exchange, check_exchanges, exchanges_of
from vcr.serializers import yamlserializer

INDEX = read_index()
CASSETTE_FILES = sorted(CASSETTES.glob("*.yaml"))


def load(path: Path) -> dict:
    return yamlserializer.deserialize(path.read_text(encoding="utf-8"))


def test_every_scenario_has_a_committed_cassette():
    assert {scenario.name for scenario in SCENARIOS} == set(INDEX)
    assert {path.stem for path in CASSETTE_FILES} == set(INDEX)


@pytest.mark.parametrize("name", sorted(INDEX))
def test_replaying_a_cassette_reads_what_was_recorded(name):
    assert replay(name, INDEX[name]) == INDEX[name]["summary"]


@pytest.mark.parametrize("path", CASSETTE_FILES, ids=lambda path: path.stem)
def test_every_recorded_exchange_has_the_spec_shape(path):
    assert check_exchanges(exchanges_of(load(path))) == []


@pytest.mark.parametrize("path", CASSETTE_FILES, ids=lambda path: path.stem)
def test_cassettes_hold_no_api_key(path):
    text = path.read_text(encoding="utf-8")
    assert EMULATOR_KEY not in text
    live_key = os.environ.get("ROUNDS_TEST_SIGNOZ_API_KEY")
    assert not live_key or live_key not in text
    for interaction in load(path)["interactions"]:
        headers = {key.lower(): value for key, value in interaction["request"]["headers"].items()}
        assert headers.get("signoz-api-key", ["REDACTED"]) == ["REDACTED"]


def test_the_emulator_today_still_answers_what_the_cassettes_recorded(tmp_path):
    fresh = record_against_emulator(tmp_path)
    for name, entry in fresh.items():
        assert check_exchanges(exchanges_of(load(tmp_path / f"{name}.yaml"))) == [], name
        if INDEX[name]["recorded_against"].startswith("rounds SigNoz emulator"):
            assert entry["summary"] == INDEX[name]["summary"], (
                f"{name}: the emulator drifted from the committed cassette; if on purpose, "
                "re-record with `python tests/signoz_recorder.py`"
            )


def _exchange(path: str, status: int, body: bytes, request: bytes = b"") -> Exchange:
    return Exchange("POST", f"http://127.0.0.1:1{path}", request, status, "application/json", body)


LIST_REQUEST = b'{"start": "1779271200000000000", "end": "1779274800000000000", "limit": 5}'


def test_the_shape_checker_catches_an_empty_list_where_signoz_says_null():
    problems = check_exchanges([_exchange("/api/v1/listErrors", 200, b"[]", LIST_REQUEST)])
    assert problems == ["#0 POST /api/v1/listErrors: rows, or null when empty (never [])"]


def test_the_shape_checker_catches_numeric_nanoseconds_in_a_list_request():
    request = b'{"start": 1779271200000000000, "end": "1779274800000000000", "limit": 5}'
    problems = check_exchanges([_exchange("/api/v1/listErrors", 200, b"null", request)])
    assert problems == ["#0 POST /api/v1/listErrors: start is a string of Unix nanoseconds"]


def test_the_shape_checker_catches_error_id_spelt_like_the_query_parameter():
    body = (
        b'{"errorID":"0","exceptionType":"","exceptionStacktrace":"","exceptionEscaped":false,'
        b'"exceptionMessage":"","timestamp":"2026-05-20T10:00:00Z","spanID":"","traceID":"",'
        b'"serviceName":"","groupID":"g"}'
    )
    exchange = Exchange(
        "GET",
        "http://127.0.0.1:1/api/v1/errorFromGroupID?groupID=g&timestamp=1779271200000000000",
        b"",
        200,
        "application/json",
        body,
    )
    assert check_exchanges([exchange]) == [
        "#0 GET /api/v1/errorFromGroupID: model.ErrorWithSpan keys (errorId, not errorID)"
    ]


@pytest.mark.signoz_live
def test_record_cassettes_against_a_real_signoz():
    url = os.environ.get("ROUNDS_TEST_SIGNOZ_URL")
    api_key = os.environ.get("ROUNDS_TEST_SIGNOZ_API_KEY")
    if not url or not api_key:
        pytest.skip("set ROUNDS_TEST_SIGNOZ_URL and ROUNDS_TEST_SIGNOZ_API_KEY to record")
    index = record_against_live(url, api_key)
    for scenario in SCENARIOS:
        if scenario.live:
            path = CASSETTES / f"{scenario.name}.yaml"
            assert check_exchanges(exchanges_of(load(path))) == [], scenario.name
            assert replay(scenario.name, index[scenario.name]) == index[scenario.name]["summary"]
