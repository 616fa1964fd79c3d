"""SigNoz's behaviour at each version boundary rounds depends on, and rounds reading across it."""

from __future__ import annotations

import httpx
import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_fixtures import WINDOW_END_NS, WINDOW_START_NS, fixture_dataset, fixture_window, source_for

from rounds_bot.errors import SignozError
from rounds_bot.sources.signoz.client import SignozClient
from rounds_bot.sources.signoz.failures import SignozHTTPError
from rounds_bot.sources.signoz.queries import clickhouse_sql, query_range_request


@pytest.fixture(scope="module")
def dataset():
    return fixture_dataset()


def _kinds(version: str, dataset) -> dict[str, int]:
    with (
        SignozEmulator(dataset, Behaviour(version=version, api_key="test-key")) as emulator,
        source_for(emulator) as source,
    ):
        result = source.poll(fixture_window(), frozenset())
    assert result.skipped == []
    kinds: dict[str, int] = {}
    for event in result.events:
        kinds[event.kind] = kinds.get(event.kind, 0) + event.count
    return kinds


# -- 0.17 / 0.18: listErrors and countErrors change from GET to POST ---------------------------------


@pytest.mark.parametrize(
    ("version", "method", "wrong"), [("v0.17.0", "GET", "POST"), ("v0.18.0", "POST", "GET")]
)
def test_the_exceptions_api_answers_one_method_per_version(dataset, version, method, wrong):
    window = {"start": str(WINDOW_START_NS), "end": str(WINDOW_END_NS)}
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator, httpx.Client() as http:
        url = f"{emulator.url}/api/v1/countErrors"
        right = http.request(
            method, url, params=window if method == "GET" else None, json=None if method == "GET" else window
        )
        refused = http.request(wrong, url, params=window, json=window)
    assert right.json() == 3
    assert refused.status_code == 405


@pytest.mark.parametrize("version", ["v0.17.0", "v0.18.0"])
def test_rounds_reads_exception_groups_on_both_sides_of_v0_18(dataset, version):
    assert _kinds(version, dataset) == {"exception": 5}


# -- 0.87 / 0.88: clickhouse_sql template variables ----------------------------------------------


def _sql(emulator: SignozEmulator, query: str) -> httpx.Response:
    body = query_range_request(WINDOW_START_NS, WINDOW_END_NS, "raw", clickhouse_sql(query))
    return httpx.post(f"{emulator.url}/api/v5/query_range", json=body)


TEMPLATED = (
    "SELECT count() AS n FROM signoz_traces.distributed_signoz_error_index_v2 "
    "WHERE timestamp >= fromUnixTimestamp64Nano(toInt64({{.start_timestamp_nano}}))"
)


def test_v0_87_sends_template_variables_to_clickhouse_verbatim(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.87.0")) as emulator:
        response = _sql(emulator, TEMPLATED)
    assert response.status_code == 500
    assert response.json()["error"]["message"].startswith("code: 62, message: Syntax error")


def test_v0_88_renders_template_variables(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.88.0")) as emulator:
        response = _sql(emulator, TEMPLATED)
    assert response.status_code == 200
    assert response.json()["data"]["data"]["results"][0]["rows"][0]["data"]["n"] == 5


@pytest.mark.parametrize("version", ["v0.87.0", "v0.88.0"])
def test_rounds_reads_error_spans_and_logs_on_both_sides_of_v0_88(dataset, version):
    assert _kinds(version, dataset) == {"exception": 5, "span_error": 2, "log": 4}


# -- 0.130 / 0.131: ClickHouse errors as HTTP statuses -------------------------------------------


@pytest.mark.parametrize(
    ("version", "query", "status", "code"),
    [
        ("v0.130.0", "SELEC 1", 500, "internal"),
        ("v0.130.0", "SELECT 1 FROM signoz_traces.nope", 500, "internal"),
        ("v0.131.0", "SELEC 1", 400, "syntax_error"),
        ("v0.131.0", "SELECT 1 FROM signoz_traces.nope", 404, "unknown_table"),
        ("v0.131.0", "SELECT throwIf(1, 'boom')", 500, "internal"),
    ],
)
def test_clickhouse_errors_map_to_statuses_by_version(dataset, version, query, status, code):
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator:
        response = _sql(emulator, query)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize("version", ["v0.130.0", "v0.131.0"])
def test_a_failing_clickhouse_query_is_not_retried_and_names_clickhouse(dataset, version):
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator:
        client = SignozClient(emulator.url, None, sleep=lambda seconds: None)
        with pytest.raises(SignozHTTPError) as failure:
            client.query_range(
                query_range_request(WINDOW_START_NS, WINDOW_END_NS, "raw", clickhouse_sql("SELEC 1"))
            )
    assert client.traffic.requests == 1
    assert "Syntax error" in str(failure.value)


def test_a_404_for_an_unknown_table_on_v0_131_is_not_read_as_a_signoz_without_v5(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.131.0")) as emulator:
        client = SignozClient(emulator.url, None, sleep=lambda seconds: None)
        with pytest.raises(SignozError) as failure:
            query = clickhouse_sql("SELECT 1 FROM signoz_traces.nope")
            client.query_range(query_range_request(WINDOW_START_NS, WINDOW_END_NS, "raw", query))
    assert "has no /api/v5/query_range" not in str(failure.value)
    assert "unknown table" in str(failure.value)


def test_a_signoz_older_than_v0_87_still_answers_404_for_v5_and_is_read_as_such(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.86.0")) as emulator:
        client = SignozClient(emulator.url, None, sleep=lambda seconds: None)
        with pytest.raises(SignozHTTPError, match="has no /api/v5/query_range"):
            client.query_range(
                query_range_request(WINDOW_START_NS, WINDOW_END_NS, "raw", clickhouse_sql("SELECT 1"))
            )
