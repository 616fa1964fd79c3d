"""Recorded SigNoz exchanges: replayed offline, checked against the spec's shapes.

The committed cassettes were recorded against the emulator (`python tests/signoz_recorder.py`);
setting ROUNDS_TEST_SIGNOZ_URL and ROUNDS_TEST_SIGNOZ_API_KEY re-records the scenarios a real
SigNoz can play (`pytest -m signoz_live`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from signoz_emulator import Behaviour, SignozEmulator, build_dataset
from signoz_emulator.engine import Engine
from signoz_fixtures import write_fixture
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


@pytest.mark.parametrize("path", CASSETTE_FILES, ids=lambda path: path.stem)
def test_every_cassette_opens_naming_the_signoz_version_and_clickhouse_engine_it_imitates(path):
    entry = INDEX[path.stem]
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(
        f"# Recorded against {entry['recorded_against']}: SigNoz {entry['signoz_version']}"
    )
    assert f"its queries run by {entry['clickhouse']}." in first
    if entry["recorded_against"] == "the rounds SigNoz emulator":
        assert "in-process (chdb-core-lite " in entry["clickhouse"]
    for exchange in exchanges_of(load(path)):
        if exchange.path == "/api/v1/version":
            assert json.loads(exchange.response_body)["version"] == entry["signoz_version"]


def test_the_emulator_today_still_answers_what_the_cassettes_recorded(tmp_path):
    fresh = record_against_emulator(tmp_path)
    for name, entry in fresh.items():
        assert check_exchanges(exchanges_of(load(tmp_path / f"{name}.yaml"))) == [], name
        if INDEX[name]["recorded_against"] == "the rounds SigNoz emulator":
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


def test_the_live_re_record_path_records_replayable_cassettes_with_their_header(tmp_path):
    # the path `pytest -m signoz_live` takes, pointed at the emulator with its data moved to the last hour
    dataset = build_dataset(
        [write_fixture(tmp_path / "fixture.otlp.jsonl")],
        rebase=True,
        synthetic_events=0,
        synthetic_groups=0,
        window_seconds=0,
        now_ns=time.time_ns(),
    )
    with SignozEmulator(dataset, Behaviour(api_key="live-key")) as emulator:
        index = record_against_live(emulator.url, "live-key", tmp_path)
        engine = Engine.shared().version()
    assert set(index) == {scenario.name for scenario in SCENARIOS if scenario.live}
    for name, entry in index.items():
        assert entry["signoz_version"] == "v0.138.0" and entry["clickhouse"] == f"ClickHouse {engine}"
        header = (tmp_path / f"{name}.yaml").read_text(encoding="utf-8").splitlines()[0]
        assert header == (
            f"# Recorded against the SigNoz at {emulator.url}: SigNoz v0.138.0, its queries run by "
            f"ClickHouse {engine}."
        )
        assert "live-key" not in (tmp_path / f"{name}.yaml").read_text(encoding="utf-8")
        assert replay(name, entry, tmp_path) == entry["summary"]
    assert index["first_and_quiet_round"]["summary"]["first"]["events"]


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
