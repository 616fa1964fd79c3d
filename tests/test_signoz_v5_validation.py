"""The emulator refuses the v5 requests SigNoz's `QueryRangeRequest.Validate` refuses, from the version that
refuses them (pkg/types/querybuildertypes/querybuildertypesv5/validation.go, called by pkg/querier/api.go
QueryRange from v0.88.0), and rounds' own requests pass.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_fixtures import fixture_dataset
from test_signoz_emulator import logs_query, spans_query, v5


def _sql(query: str) -> dict[str, Any]:
    return {"type": "clickhouse_sql", "spec": {"name": "A", "query": query}}


def _metrics() -> dict[str, Any]:
    return {"type": "builder_query", "spec": {"name": "A", "signal": "metrics", "limit": 10}}


def _post(version: str, body: dict[str, Any]) -> httpx.Response:
    with SignozEmulator(fixture_dataset(), Behaviour(version=version)) as emulator:
        return httpx.post(f"{emulator.url}/api/v5/query_range", json=body)


_LIMIT = "invalid {}: limit exceeds maximum allowed value of 10000"


def _counting(name: str) -> dict[str, Any]:
    """A traces query that aggregates, so a request holding it has one enabled query."""
    return spans_query(name=name, selectFields=[], aggregations=[{"expression": "count()"}])


REFUSED = [
    # validation.go:572-583: `distribution` is read (request_type.go:22) but refused; raw/timeseries/scalar
    # only at v0.88.0, trace from v0.91.1, raw_stream from v0.93.0
    ("v0.138.0", v5(logs_query(), "distribution"), "invalid request type: distribution"),
    ("v0.91.0", v5(logs_query(), "trace"), "invalid request type: trace"),
    ("v0.92.2", v5(logs_query(), "raw_stream"), "invalid request type: raw_stream"),
    # before v0.93.0 a raw_stream request has its time range checked like any other
    ("v0.92.2", v5(logs_query(), "raw_stream", start=2, end=1), "start time must be before end time"),
    # validation.go:251-266: an aggregating request needs an aggregation (a raw one skips the check, :837)
    ("v0.138.0", v5(spans_query(), "scalar"), "invalid query 'A': at least one aggregation is required"),
    # validation.go:403-411, wrapped by the composite check (:707-709) with the query's name
    (
        "v0.138.0",
        v5(logs_query(limit=10_001)),
        "invalid query 'A': limit exceeds maximum allowed value of 10000",
    ),
    # validation.go:812-817: an empty ClickHouse query, checked inline in the composite loop before v0.112.0
    ("v0.138.0", v5(_sql("")), "invalid ClickHouse query 'A': ClickHouse SQL query is required"),
    ("v0.88.0", v5(_sql("")), "query expression is required for ClickHouse query 'A'"),
    ("v0.111.0", v5(_sql("")), "query expression is required for ClickHouse query 'A'"),
    # an unnamed query is named by its position (getQueryIdentifier), by its signal before v0.112.0
    ("v0.138.0", v5(logs_query(name="", limit=10_001)), _LIMIT.format("query at position 1")),
    ("v0.111.0", v5(logs_query(name="", limit=10_001)), _LIMIT.format("log query at position 1")),
    ("v0.111.0", v5(spans_query(name="", limit=10_001)), _LIMIT.format("trace query at position 1")),
    # from v0.117.1 a disabled query of an aggregating request needs its aggregation too
    (
        "v0.117.1",
        v5(spans_query(), "scalar", compositeQuery={"queries": [spans_query(disabled=True), _counting("B")]}),
        "invalid query 'A': at least one aggregation is required",
    ),
    # validation.go:680-692 (v0.97.0+): every query disabled
    (
        "v0.97.0",
        v5(logs_query(disabled=True)),
        "all queries are disabled - at least one query must be enabled",
    ),
    # validation.go:585-596 (v0.118.0+): metrics have no raw form
    ("v0.118.0", v5(_metrics()), "raw request type is not supported for metric queries"),
    # validation.go:195-210 (v0.94.0+): fields the metadata API answers are not selectable
    (
        "v0.94.0",
        v5(spans_query(selectFields=[{"name": "isRoot"}])),
        "invalid query 'A': isRoot and isEntryPoint fields are not supported in selectFields",
    ),
]


@pytest.mark.parametrize(("version", "body", "message"), REFUSED)
def test_the_emulator_refuses_what_signoz_validation_refuses(version, body, message):
    response = _post(version, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("invalid_input", message)


ACCEPTED_BEFORE = [
    # before v0.88.0 the handler validates nothing: a limit over 10,000 runs
    ("v0.87.0", v5(logs_query(limit=10_001))),
    ("v0.96.0", v5(logs_query(disabled=True))),  # before v0.97.0: nothing runs, and nothing is refused
    ("v0.91.1", v5(logs_query(), "trace")),  # trace requests run from v0.91.1
    # raw_stream requests run from v0.93.0, their time range unchecked (a stream has no end)
    ("v0.93.0", v5(logs_query(), "raw_stream", start=2, end=1)),
    # up to v0.117.0 a disabled query (one a formula reads) needs no aggregation (`!q.Disabled`)
    (
        "v0.117.0",
        v5(spans_query(), "scalar", compositeQuery={"queries": [spans_query(disabled=True), _counting("B")]}),
    ),
]


@pytest.mark.parametrize(("version", "body"), ACCEPTED_BEFORE)
def test_a_version_before_the_check_answers(version, body):
    response = _post(version, body)
    assert response.status_code == 200, response.text
