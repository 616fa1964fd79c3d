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


def test_a_signoz_older_than_v0_87_answers_404_for_v5_and_the_client_moves_to_v4_for_good(dataset):
    query = query_range_request(
        WINDOW_START_NS, WINDOW_END_NS, "raw", clickhouse_sql("SELECT count() AS n FROM system.one")
    )
    with SignozEmulator(dataset, Behaviour(version="v0.86.0")) as emulator:
        client = SignozClient(emulator.url, None, sleep=lambda seconds: None)
        first = client.query_range(query)
        second = client.query_range(query)
        paths = emulator.paths()
    assert first.raw_results()[0].rows[0].data == {"n": 1} == second.raw_results()[0].rows[0].data
    assert paths == ["/api/v5/query_range", "/api/v4/query_range", "/api/v4/query_range"]


# -- 0.59 / 0.60 and 0.86 / 0.87: clickhouse_sql on /api/v4 before /api/v5 exists ----------------


def _v4(emulator: SignozEmulator, query: str, **composite: object) -> httpx.Response:
    body = {
        "start": WINDOW_START_NS // 1_000_000,
        "end": WINDOW_END_NS // 1_000_000,
        "step": 60,
        "compositeQuery": {
            "queryType": "clickhouse_sql",
            "panelType": "list",
            "chQueries": {"A": {"query": query, "disabled": False}},
            **composite,
        },
    }
    return httpx.post(f"{emulator.url}/api/v4/query_range", json=body)


def test_v4_answers_clickhouse_sql_rows_under_list_and_leaves_list_out_when_none_matched(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        rows = _v4(emulator, "SELECT toUInt64(1779271200000000000) AS timestamp, 'x' AS what").json()
        empty = _v4(emulator, "SELECT 1 AS n FROM system.one WHERE 0").json()
    assert rows == {
        "status": "success",
        "data": {
            "resultType": "",
            "result": [
                {"queryName": "A", "list": [{"timestamp": "2026-05-20T10:00:00Z", "data": {"what": "x"}}]}
            ],
        },
    }
    assert empty["data"]["result"] == [{"queryName": "A"}]


def test_v4_drops_an_underscore_twin_of_a_dotted_attribute_key(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        answer = _v4(emulator, "SELECT map('http.method', 'GET', 'http_method', 'POST') AS attributes_string")
    assert answer.json()["data"]["result"][0]["list"][0]["data"] == {
        "attributes_string": {"http.method": "GET"}
    }


@pytest.mark.parametrize(("version", "seen"), [("v0.85.0", "$start_timestamp"), ("v0.86.0", "1779271200")])
def test_v4_writes_reserved_variables_into_the_text_only_from_v0_86(dataset, version, seen):
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator:
        answer = _v4(emulator, "SELECT '$start_timestamp' AS seen, {{.start_timestamp}} AS rendered")
    assert answer.json()["data"]["result"][0]["list"][0]["data"] == {"seen": seen, "rendered": 1779271200}


def test_v4_refuses_a_template_that_does_not_parse_and_a_panel_it_would_run_as_a_time_series(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        template = _v4(emulator, "SELECT '{{ nope' AS text")
        empty = _v4(emulator, "")
        panel = _v4(emulator, "SELECT 1", panelType="chart")
    assert template.status_code == 400 and template.json()["errorType"] == "bad_data"
    assert empty.json()["error"] == "clickhouse query A is invalid: query is empty"
    assert panel.json()["error"] == "panel type is invalid: invalid panel type: chart"


def test_v4_answers_a_failed_statement_with_clickhouse_text_and_rounds_does_not_retry_it(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        answer = _v4(emulator, "SELEC 1")
        client = SignozClient(emulator.url, None, sleep=lambda seconds: None)
        client.use_query_range("/api/v4/query_range")
        with pytest.raises(SignozHTTPError) as failure:
            client.query_range(
                query_range_request(WINDOW_START_NS, WINDOW_END_NS, "raw", clickhouse_sql("SELEC 1"))
            )
    assert answer.status_code == 500
    assert answer.json()["error"].startswith("encountered multiple errors: code: 62, message: Syntax error")
    assert client.traffic.requests == 1
    assert "ClickHouse failed the query" in str(failure.value)


def test_a_builder_query_on_a_signoz_without_v5_fails_with_what_to_do(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.80.0")) as emulator:
        client = SignozClient(emulator.url, None, sleep=lambda seconds: None)
        client.use_query_range("/api/v4/query_range")
        builder = {"type": "builder_query", "spec": {"name": "A", "signal": "logs"}}
        with pytest.raises(SignozError, match=r"needs SigNoz v0\.87 or later") as failure:
            client.query_range(query_range_request(WINDOW_START_NS, WINDOW_END_NS, "raw", builder))
        assert emulator.paths() == []
    assert "clickhouse_sql grant" in (failure.value.hint or "")


def _events(version: str, dataset) -> tuple[list[dict], list[str]]:
    with (
        SignozEmulator(dataset, Behaviour(version=version, api_key="test-key")) as emulator,
        source_for(emulator) as source,
    ):
        result = source.poll(fixture_window(), frozenset())
        paths = sorted(set(emulator.paths()))
        events = [
            {**event.model_dump(), "source_url": (event.source_url or "").replace(emulator.url, "")}
            for event in result.events
        ]
    assert result.skipped == [] and result.failures == []
    return events, paths


def test_v0_59_reads_exceptions_only_by_the_exceptions_api_and_says_v0_60_reads_more(dataset):
    events, paths = _events("v0.59.0", dataset)
    assert {event["kind"] for event in events} == {"exception"}
    assert not any("query_range" in path for path in paths)
    assert _kinds("v0.59.0", dataset) == {"exception": 5}


@pytest.mark.parametrize("version", ["v0.60.0", "v0.86.0"])
def test_v0_60_to_v0_86_read_all_three_streams_on_v4_exactly_as_v0_87_reads_them_on_v5(dataset, version):
    on_v4, v4_paths = _events(version, dataset)
    on_v5, v5_paths = _events("v0.87.0", dataset)
    assert "/api/v4/query_range" in v4_paths and "/api/v5/query_range" not in v4_paths
    assert "/api/v5/query_range" in v5_paths and "/api/v4/query_range" not in v5_paths
    assert on_v4 == on_v5
    assert _kinds(version, dataset) == {"exception": 5, "span_error": 2, "log": 4}
