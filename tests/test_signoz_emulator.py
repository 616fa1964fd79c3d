"""The emulator reproduces SigNoz's envelopes and quirks, with its queries run by a real ClickHouse engine."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_emulator.engine import ClickHouseError, Engine
from signoz_emulator.replies import go_json
from signoz_emulator.synthetic import SyntheticExceptions
from signoz_fixtures import (
    SECOND,
    T0_NS,
    VALUE_ERROR,
    WINDOW_END_NS,
    WINDOW_START_NS,
    fixture_dataset,
    write_fixture,
)

CHECKOUT_VALUE_ERROR = "1e59539e8effec84f7ec674dda15ddfa"  # the spec's own example


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return fixture_dataset()


@pytest.fixture
def emulator(dataset: Dataset) -> Iterator[SignozEmulator]:
    with SignozEmulator(dataset, Behaviour(api_key="k")) as running:
        yield running


@pytest.fixture
def http(emulator: SignozEmulator) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.url, headers={"SIGNOZ-API-KEY": "k"}) as client:
        yield client


def list_body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "start": str(WINDOW_START_NS),
        "end": str(WINDOW_END_NS),
        "limit": 100,
        "offset": 0,
        "tags": [],
    }
    body.update(changes)
    return body


def v5(query: dict[str, Any], request_type: str = "raw", **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schemaVersion": "v1",
        "start": WINDOW_START_NS // 1_000_000,
        "end": WINDOW_END_NS // 1_000_000,
        "requestType": request_type,
        "compositeQuery": {"queries": [query]},
    }
    body.update(changes)
    return body


def logs_query(expression: str = "severity_number >= 17", **spec: Any) -> dict[str, Any]:
    return {
        "type": "builder_query",
        "spec": {
            "name": "A",
            "signal": "logs",
            "filter": {"expression": expression},
            "order": [{"key": {"name": "timestamp"}, "direction": "desc"}],
            "limit": 100,
            **spec,
        },
    }


def spans_query(**spec: Any) -> dict[str, Any]:
    return {
        "type": "builder_query",
        "spec": {
            "name": "A",
            "signal": "traces",
            "filter": {"expression": "has_error = true"},
            "selectFields": [{"name": "service.name"}, {"name": "name"}, {"name": "events"}],
            "order": [{"key": {"name": "timestamp"}, "direction": "desc"}],
            "limit": 100,
            **spec,
        },
    }


# -- v1 exceptions API ------------------------------------------------------------------------


def test_group_id_is_md5_of_service_type_and_message_with_no_separator(dataset):
    expected = hashlib.md5(("checkout" + "ValueError" + VALUE_ERROR).encode()).hexdigest()
    assert expected == CHECKOUT_VALUE_ERROR
    assert CHECKOUT_VALUE_ERROR in {row["groupID"] for row in dataset.exceptions}


def test_list_errors_answers_bare_rows_with_window_counts(http):
    rows = http.post("/api/v1/listErrors", json=list_body()).json()
    by_group = {row["groupID"]: row for row in rows}
    row = by_group[CHECKOUT_VALUE_ERROR]
    assert list(row) == [
        "exceptionType",
        "exceptionMessage",
        "exceptionCount",
        "lastSeen",
        "firstSeen",
        "serviceName",
        "groupID",
    ]
    assert row["exceptionCount"] == 3
    assert row["firstSeen"] == "2026-05-20T10:01:00.005Z"
    assert row["lastSeen"] == "2026-05-20T10:20:00.992654321Z"


def test_list_errors_answers_null_when_no_group_is_in_the_window(http):
    response = http.post("/api/v1/listErrors", json=list_body(start=str(T0_NS), end=str(T0_NS + 1)))
    assert response.status_code == 200
    assert response.text == "null"


def test_a_start_clickhouse_cannot_read_as_a_time_fails_the_query_as_in_signoz(http):
    response = http.post("/api/v1/listErrors", json=list_body(start="0"))
    assert response.status_code == 500
    assert response.json()["errors"][0]["msg"] == "error in processing sql query"


def test_list_errors_rejects_numeric_times_with_a_text_plain_body(http):
    response = http.post("/api/v1/listErrors", json=list_body(start=WINDOW_START_NS))
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.endswith("\n")
    body = json.loads(response.text)
    assert body["data"] is None and body["errors"][0]["code"] == 400
    assert "cannot unmarshal number" in body["errors"][0]["msg"]


def test_list_errors_requires_a_nonzero_limit(http):
    response = http.post("/api/v1/listErrors", json=list_body(limit=0))
    assert response.status_code == 400
    assert response.json()["errors"][0]["msg"] == "limit param cannot be empty from the query"


def test_list_errors_rejects_an_unknown_order_param(http):
    response = http.post("/api/v1/listErrors", json=list_body(order="descending", orderParam="count"))
    assert response.status_code == 400
    assert "given orderParam: count is not allowed" in response.text


def test_list_errors_orders_by_last_seen_when_asked(http):
    rows = http.post("/api/v1/listErrors", json=list_body(order="descending", orderParam="lastSeen")).json()
    assert [row["lastSeen"] for row in rows] == sorted((row["lastSeen"] for row in rows), reverse=True)


def test_list_errors_filters_service_by_case_insensitive_substring(http):
    rows = http.post("/api/v1/listErrors", json=list_body(serviceName="PAY")).json()
    assert {row["serviceName"] for row in rows} == {"payment-api"}


def test_list_errors_matches_keys_case_insensitively_like_go(http):
    body = {"Start": str(WINDOW_START_NS), "END": str(WINDOW_END_NS), "limit": 10}
    assert len(http.post("/api/v1/listErrors", json=body).json()) == 3


def test_list_errors_tags_on_span_attributes_fail_in_clickhouse(http):
    tag = {"key": "x", "tagType": "SpanAttribute", "stringValues": ["y"], "operator": "In"}
    response = http.post("/api/v1/listErrors", json=list_body(tags=[tag]))
    assert response.status_code == 500
    assert response.json()["errors"][0]["msg"] == "error in processing sql query"


def test_list_errors_resource_tags_filter_rows(http):
    tag = {
        "key": "deployment.environment",
        "tagType": "ResourceAttribute",
        "stringValues": ["staging"],
        "operator": "In",
    }
    assert http.post("/api/v1/listErrors", json=list_body(tags=[tag])).text == "null"


def test_end_within_the_last_thirty_seconds_is_clamped(dataset):
    last_value_error = T0_NS + 1200 * SECOND + 987_654_321 + 5_000_000
    now = (last_value_error + 10 * SECOND) / 1e9
    with SignozEmulator(dataset, now=lambda: now) as emulator:
        body = list_body(end=str(last_value_error + 10 * SECOND))
        rows = httpx.post(f"{emulator.url}/api/v1/listErrors", json=body).json()
    counts = {row["groupID"]: row["exceptionCount"] for row in rows}
    assert counts[CHECKOUT_VALUE_ERROR] == 2


def test_count_errors_answers_a_bare_number(http):
    response = http.post("/api/v1/countErrors", json=list_body())
    assert response.text == "3"


def test_error_from_group_id_needs_the_exact_timestamp_and_says_errorId(http):
    rows = http.post("/api/v1/listErrors", json=list_body()).json()
    row = next(r for r in rows if r["groupID"] == CHECKOUT_VALUE_ERROR)
    timestamp = T0_NS + 1200 * SECOND + 987_654_321 + 5_000_000
    found = http.get("/api/v1/errorFromGroupID", params={"groupID": row["groupID"], "timestamp": timestamp})
    assert found.status_code == 200
    detail = found.json()
    assert "errorId" in detail and "errorID" not in detail
    assert detail["timestamp"] == row["lastSeen"]
    assert detail["exceptionStacktrace"].startswith("Traceback")
    missed = http.get(
        "/api/v1/errorFromGroupID", params={"groupID": row["groupID"], "timestamp": timestamp + 1}
    )
    assert missed.status_code == 404
    assert missed.json() == {
        "status": "error",
        "errorType": "not_found",
        "error": "Error/Exception not found",
    }


def test_error_from_group_id_without_group_is_a_handle_error(http):
    response = http.get("/api/v1/errorFromGroupID", params={"timestamp": "1"})
    assert response.status_code == 400
    assert "groupID param cannot be empty" in response.text


def test_error_from_group_id_reads_the_timestamp_before_the_group(http):
    response = http.get("/api/v1/errorFromGroupID", params={"timestamp": "soon"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["msg"] == "timestamp param is not in correct timestamp format"


VALUE_ERROR_TIMES = [
    T0_NS + 60 * SECOND,
    T0_NS + 600 * SECOND + 123_456_789,
    T0_NS + 1200 * SECOND + 987_654_321,
]


def _occurrence(http: httpx.Client, at: int) -> dict[str, Any]:
    params = {"groupID": CHECKOUT_VALUE_ERROR, "timestamp": at + 5_000_000}
    return http.get("/api/v1/errorFromGroupID", params=params).json()


def test_error_from_error_id_finds_one_occurrence_by_its_id(http):
    middle = _occurrence(http, VALUE_ERROR_TIMES[1])
    params = {"groupID": CHECKOUT_VALUE_ERROR, "timestamp": VALUE_ERROR_TIMES[1] + 5_000_000}
    found = http.get("/api/v1/errorFromErrorID", params={**params, "errorID": middle["errorId"]})
    assert found.status_code == 200 and found.json() == middle
    other = http.get("/api/v1/errorFromErrorID", params={**params, "errorID": "not-this-one"})
    assert other.status_code == 404 and other.json()["errorType"] == "not_found"
    missing = http.get("/api/v1/errorFromErrorID", params=params)
    assert missing.status_code == 400
    assert missing.json() == {
        "status": "error",
        "errorType": "bad_data",
        "error": "ErrorID missing from params",
    }


def test_next_prev_error_ids_walk_a_group_in_time_with_zero_times_at_the_ends(http):
    first, middle, last = (_occurrence(http, at) for at in VALUE_ERROR_TIMES)

    def walk(occurrence: dict[str, Any]) -> dict[str, Any]:
        params = {
            "groupID": CHECKOUT_VALUE_ERROR,
            "errorID": occurrence["errorId"],
            "timestamp": VALUE_ERROR_TIMES[[first, middle, last].index(occurrence)] + 5_000_000,
        }
        return http.get("/api/v1/nextPrevErrorIDs", params=params).json()

    assert walk(middle) == {
        "nextErrorID": last["errorId"],
        "nextTimestamp": last["timestamp"],
        "prevErrorID": first["errorId"],
        "prevTimestamp": first["timestamp"],
        "groupID": CHECKOUT_VALUE_ERROR,
    }
    assert walk(first)["prevErrorID"] == "" and walk(first)["prevTimestamp"] == "0001-01-01T00:00:00Z"
    assert walk(last)["nextErrorID"] == "" and walk(last)["nextTimestamp"] == "0001-01-01T00:00:00Z"


def test_a_failed_count_errors_query_is_respond_error_exec_422_not_a_handle_error(http):
    response = http.post("/api/v1/countErrors", json=list_body(start="0"))
    assert response.status_code == 422
    assert response.json() == {
        "status": "error",
        "errorType": "exec",
        "error": "error in processing sql query",
    }


# -- v5 query_range ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    ["top", "compositeQuery", "envelope", "spec"],
)
def test_v5_rejects_unknown_fields_at_every_level(http, where):
    body = v5(logs_query())
    target = {
        "top": body,
        "compositeQuery": body["compositeQuery"],
        "envelope": body["compositeQuery"]["queries"][0],
        "spec": body["compositeQuery"]["queries"][0]["spec"],
    }[where]
    target["step"] = 60
    response = http.post("/api/v5/query_range", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_input"
    assert 'unknown field "step"' in response.json()["error"]["message"]


def test_v5_rejects_a_limit_above_ten_thousand(http):
    response = http.post("/api/v5/query_range", json=v5(logs_query(limit=10_001)))
    assert response.status_code == 400
    assert "limit exceeds maximum allowed value of 10000" in response.text


def test_v5_rejects_start_not_before_end(http):
    response = http.post("/api/v5/query_range", json=v5(logs_query(), start=5, end=5))
    assert response.json()["error"]["message"] == "start time must be before end time"


def test_v5_takes_milliseconds_as_numbers_not_strings(http):
    response = http.post("/api/v5/query_range", json=v5(logs_query(), start="1"))
    assert response.status_code == 400


def test_v5_rows_are_null_when_nothing_matches(http):
    body = v5(logs_query("severity_number >= 25"))
    result = http.post("/api/v5/query_range", json=body).json()
    assert result["status"] == "success"
    assert result["data"]["data"]["results"][0]["rows"] is None


def test_v5_log_rows_carry_timestamp_as_integer_nanoseconds(http):
    result = http.post("/api/v5/query_range", json=v5(logs_query())).json()
    rows = result["data"]["data"]["results"][0]["rows"]
    assert [row["data"]["severity_text"] for row in rows] == ["FATAL", "ERROR", "ERROR"]
    assert isinstance(rows[0]["data"]["timestamp"], int)
    assert isinstance(rows[0]["timestamp"], str)
    assert rows[0]["data"]["resources_string"]["service.name"] == "checkout"


def test_v5_log_filter_matches_lowercase_severity_text(http):
    body = v5(logs_query("severity_text IN ('error', 'ERROR')"))
    rows = http.post("/api/v5/query_range", json=body).json()["data"]["data"]["results"][0]["rows"]
    assert len(rows) == 3


def test_v5_full_page_gets_a_base64_millisecond_cursor(http):
    body = v5(logs_query(limit=1))
    result = http.post("/api/v5/query_range", json=body).json()["data"]["data"]["results"][0]
    assert result["nextCursor"] == "MTc3OTI3MjIwMDAwMA=="  # base64("1779272200000")


@pytest.mark.parametrize(("version", "parsed"), [("v0.138.0", True), ("v0.120.0", False)])
def test_v5_span_events_are_objects_from_v0_130_and_json_strings_before(dataset, version, parsed):
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator:
        result = httpx.post(f"{emulator.url}/api/v5/query_range", json=v5(spans_query())).json()
    rows = result["data"]["data"]["results"][0]["rows"]
    events = next(row["data"]["events"] for row in rows if row["data"]["events"])
    if parsed:
        assert events[0]["attributes"]["exception.type"] in ("ValueError", "java.lang.NullPointerException")
    else:
        decoded = json.loads(events[0])
        assert decoded["isError"] is True and "attributeMap" in decoded


@pytest.mark.parametrize(("version", "rich"), [("v0.138.0", True), ("v0.130.0", False)])
def test_v5_error_body_has_type_and_suggestions_from_v0_131_only(dataset, version, rich):
    with SignozEmulator(dataset, Behaviour(version=version)) as emulator:
        body = v5(logs_query(limit=20_000))
        error = httpx.post(f"{emulator.url}/api/v5/query_range", json=body).json()["error"]
    assert ("type" in error and "suggestions" in error) == rich
    assert error["code"] == "invalid_input"


def test_v5_unknown_log_key_is_400_with_signoz_docs_url(http):
    response = http.post("/api/v5/query_range", json=v5(logs_query("nope.missing = 'x'")))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] == "key `nope.missing` not found"
    assert error["url"].startswith("https://signoz.io/docs/")


def test_v5_does_not_exist_before_v0_87(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.86.0")) as emulator:
        response = httpx.post(f"{emulator.url}/api/v5/query_range", json=v5(logs_query()))
    assert response.status_code == 404


def test_v5_scalar_count_of_error_spans(http):
    query = spans_query(aggregations=[{"expression": "count()"}])
    del query["spec"]["selectFields"], query["spec"]["order"]
    result = http.post("/api/v5/query_range", json=v5(query, "scalar")).json()
    scalar = result["data"]["data"]["results"][0]
    assert scalar["columns"][-1]["name"] == "__result_0"
    assert scalar["data"] == [[6]]


def test_clickhouse_sql_is_refused_with_403_when_the_key_lacks_the_grant(dataset):
    query = {"type": "clickhouse_sql", "spec": {"name": "A", "query": "SELECT 1"}}
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=False)) as emulator:
        response = httpx.post(f"{emulator.url}/api/v5/query_range", json=v5(query))
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "forbidden"


def test_clickhouse_sql_substitutes_reserved_variables_and_names_columns(http):
    sql = (
        "SELECT serviceName, count() AS error_count "
        "FROM signoz_traces.distributed_signoz_error_index_v2 "
        "WHERE timestamp >= $start_datetime AND timestamp <= {{.end_datetime}} "
        "GROUP BY serviceName ORDER BY error_count DESC LIMIT 100"
    )
    query = {"type": "clickhouse_sql", "spec": {"name": "A", "query": sql}}
    scalar = http.post("/api/v5/query_range", json=v5(query, "scalar")).json()
    result = scalar["data"]["data"]["results"][0]
    assert [c["columnType"] for c in result["columns"]] == ["group", "aggregation"]
    assert result["data"] == [["checkout", 4], ["payment-api", 1]]


def test_clickhouse_sql_raw_rows_take_their_timestamp_column(http):
    sql = (
        "SELECT timestamp, errorID, exceptionEscaped FROM "
        "signoz_traces.distributed_signoz_error_index_v2 ORDER BY timestamp DESC LIMIT 1"
    )
    query = {"type": "clickhouse_sql", "spec": {"name": "A", "query": sql}}
    row = http.post("/api/v5/query_range", json=v5(query)).json()["data"]["data"]["results"][0]["rows"][0]
    assert row["timestamp"] == row["data"]["timestamp"] == "2026-05-20T10:20:00.992654321Z"
    assert row["data"]["exceptionEscaped"] is False


def test_the_engine_reports_clickhouse_errors_with_their_code_and_clears_partial_output():
    engine = Engine.shared()
    with pytest.raises(ClickHouseError) as failure:
        engine.query("SELECT nope FROM signoz_logs.distributed_logs_v2")
    assert failure.value.code == 47 and failure.value.name == "UNKNOWN_IDENTIFIER"
    with pytest.raises(ClickHouseError):
        engine.query("SELECT throwIf(1, 'boom')")
    assert engine.query("SELECT 2 AS two").rows == [{"two": 2}]


def test_fixture_rows_older_than_the_tables_ttl_stay_readable(emulator):
    rows = Engine.shared().query("SELECT count() AS n FROM signoz_traces.distributed_signoz_error_index_v2")
    assert rows.rows == [{"n": 5}]


# -- access, pages and encoding ---------------------------------------------------------------


def test_protected_endpoints_need_the_key_but_version_and_health_do_not(emulator):
    assert httpx.get(f"{emulator.url}/api/v1/version").json()["version"] == "v0.138.0"
    assert httpx.get(f"{emulator.url}/api/v1/health").json() == {"status": "ok"}
    refused = httpx.post(f"{emulator.url}/api/v1/countErrors", json=list_body())
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthenticated"


def test_a_defect_inside_the_emulator_is_answered_500_naming_it_not_a_dropped_connection(emulator):
    def broken(answer: Any) -> Any:
        raise KeyError("no such field")

    emulator.behaviour.faults.append(Fault("mutate", path="/api/v1/countErrors", mutate=broken))
    response = httpx.post(
        f"{emulator.url}/api/v1/countErrors", headers={"SIGNOZ-API-KEY": "k"}, json=list_body()
    )
    assert response.status_code == 500
    assert "emulator failure: KeyError" in response.json()["error"]["message"]
    again = httpx.post(
        f"{emulator.url}/api/v1/countErrors", headers={"SIGNOZ-API-KEY": "k"}, json=list_body()
    )
    assert again.text == "3"


def test_when_asked_the_emulator_says_what_clickhouse_read_for_each_answer(dataset):
    with SignozEmulator(dataset, Behaviour(report_reads=True)) as emulator:
        whole = httpx.post(f"{emulator.url}/api/v1/countErrors", json=list_body())
        version = httpx.get(f"{emulator.url}/api/v1/version")
    assert whole.text == "3"
    assert int(whole.headers["X-Emulator-Rows-Read"]) == len(dataset.exceptions)
    assert int(whole.headers["X-Emulator-Bytes-Read"]) > 0
    assert version.headers["X-Emulator-Rows-Read"] == "0"
    with SignozEmulator(dataset) as emulator:
        assert "X-Emulator-Rows-Read" not in httpx.get(f"{emulator.url}/api/v1/version").headers


def test_ui_paths_answer_an_html_page(emulator):
    response = httpx.get(f"{emulator.url}/services")
    assert response.headers["content-type"].startswith("text/html")


def test_go_json_escapes_angle_brackets_and_ampersands():
    assert go_json({"s": "<nil-service-name>&"}) == b'{"s":"\\u003cnil-service-name\\u003e\\u0026"}'


def test_otlp_status_names_uppercase_ids_and_missing_service_are_understood():
    line = json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": []},
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": "A" * 32,
                                    "spanId": "B" * 16,
                                    "name": "x",
                                    "kind": "SPAN_KIND_CLIENT",
                                    "startTimeUnixNano": str(T0_NS),
                                    "status": {"code": "STATUS_CODE_ERROR"},
                                    "events": [
                                        {
                                            "name": "exception",
                                            "timeUnixNano": str(T0_NS),
                                            "attributes": [],
                                        }
                                    ],
                                }
                            ]
                        }
                    ],
                }
            ]
        }
    )
    dataset = Dataset()
    load_otlp_lines([line], dataset, where="inline")
    (span,) = dataset.spans
    assert span["has_error"] is True and span["status_code_string"] == "Error"
    assert span["trace_id"] == "a" * 32
    (exception,) = dataset.exceptions
    assert exception["serviceName"] == "<nil-service-name>"


def test_synthetic_rows_are_generated_inside_clickhouse_with_signoz_group_ids():
    load = SyntheticExceptions(events=100_000, groups=4, start_ns=T0_NS, end_ns=T0_NS + 3600 * SECOND)
    dataset = Dataset(synthetic=[load])
    engine = Engine.shared()
    dataset.load(engine)
    groups = engine.query(
        "SELECT groupID, any(serviceName) AS s, any(exceptionType) AS t, any(exceptionMessage) AS m, "
        "count() AS n, toUnixTimestamp64Nano(max(timestamp)) AS last "
        "FROM signoz_traces.distributed_signoz_error_index_v2 GROUP BY groupID"
    ).rows
    assert sorted(group["n"] for group in groups) == [25_000] * 4
    for group in groups:
        assert group["groupID"] == hashlib.md5((group["s"] + group["t"] + group["m"]).encode()).hexdigest()
        assert T0_NS <= group["last"] < T0_NS + 3600 * SECOND
    assert dataset.exception_rows() == 100_000


def test_emulator_runs_by_hand_from_a_fixture_file(tmp_path):
    data = write_fixture(tmp_path / "demo.otlp.jsonl")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.signoz_emulator",
            "--data",
            str(data),
            "--port",
            "0",
            "--api-key",
            "k",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "5 exception rows, 7 spans, 5 log records" in line
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        # the fixture's times were moved to end a minute ago: a day back covers them all
        day_ago = time.time_ns() - 86_400 * SECOND
        count = httpx.post(
            f"{url}/api/v1/countErrors",
            headers={"SIGNOZ-API-KEY": "k"},
            json={"start": str(day_ago), "end": str(2**62), "tags": []},
        )
        assert count.json() == 3
    finally:
        process.terminate()
        process.wait(timeout=10)
