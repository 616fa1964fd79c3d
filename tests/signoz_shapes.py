"""The shapes the SigNoz API spec gives each exchange, checked on recorded cassettes.

`check_exchange` returns the problems of one request/response pair (an empty list when it
matches the spec), so a drifting emulator, or a client that drifts from SigNoz, is caught.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

NS_STRING = re.compile(r"^\d{19}$")
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
HEX32 = re.compile(r"^[0-9a-f]{32}$")
GO_ZERO_TIME = "0001-01-01T00:00:00Z"

ERROR_GROUP_KEYS = {
    "exceptionType",
    "exceptionMessage",
    "exceptionCount",
    "lastSeen",
    "firstSeen",
    "serviceName",
    "groupID",
}
ERROR_WITH_SPAN_KEYS = {
    "errorId",
    "exceptionType",
    "exceptionStacktrace",
    "exceptionEscaped",
    "exceptionMessage",
    "timestamp",
    "spanID",
    "traceID",
    "serviceName",
    "groupID",
}
NEXT_PREV_KEYS = {"nextErrorID", "nextTimestamp", "prevErrorID", "prevTimestamp", "groupID"}
V5_TOP = {
    "schemaVersion",
    "start",
    "end",
    "requestType",
    "compositeQuery",
    "variables",
    "noCache",
    "formatOptions",
}
V5_BUILDER = {
    "name",
    "signal",
    "source",
    "stepInterval",
    "aggregations",
    "disabled",
    "filter",
    "groupBy",
    "order",
    "selectFields",
    "limit",
    "offset",
    "cursor",
    "having",
    "limitBy",
    "secondaryAggregations",
    "functions",
    "legend",
}
V5_SQL = {"name", "query", "disabled", "legend"}
V4_TOP = {"start", "end", "step", "compositeQuery", "variables", "noCache", "formatForWeb"}
REQUEST_TYPES = {"raw", "time_series", "scalar", "trace", "raw_stream", "distribution"}
EXCEPTION_PATHS = {
    "/api/v1/listErrors",
    "/api/v1/countErrors",
    "/api/v1/errorFromGroupID",
    "/api/v1/errorFromErrorID",
    "/api/v1/nextPrevErrorIDs",
}


@dataclass
class Exchange:
    method: str
    uri: str
    request_body: bytes
    status: int
    content_type: str
    response_body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.uri).query)


@dataclass
class Problems:
    where: str
    found: list[str] = field(default_factory=list)

    def require(self, condition: bool, message: str) -> None:
        if not condition:
            self.found.append(f"{self.where}: {message}")


def exchanges_of(cassette: dict[str, Any]) -> list[Exchange]:
    out = []
    for interaction in cassette["interactions"]:
        request, response = interaction["request"], interaction["response"]
        headers = {key.lower(): value for key, value in response["headers"].items()}
        content_type = headers.get("content-type", [""])
        out.append(
            Exchange(
                method=request["method"],
                uri=request["uri"],
                request_body=_bytes(request.get("body")),
                status=response["status"]["code"],
                content_type=content_type[0] if isinstance(content_type, list) else content_type,
                response_body=_bytes(response["body"]["string"]),
            )
        )
    return out


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()


def check_exchanges(exchanges: list[Exchange]) -> list[str]:
    problems: list[str] = []
    version_rich: bool | None = None
    for number, exchange in enumerate(exchanges):
        if exchange.path == "/api/v1/version" and exchange.status == 200:
            version = json.loads(exchange.response_body)["version"]
            match = re.match(r"v?(\d+)\.(\d+)", version)
            version_rich = bool(match) and (int(match[1]), int(match[2])) >= (0, 131)
        problems += check_exchange(exchange, f"#{number} {exchange.method} {exchange.path}", version_rich)
    return problems


def check_exchange(exchange: Exchange, where: str, rich_errors: bool | None = None) -> list[str]:
    problems = Problems(where)
    _check_request(exchange, problems)
    if exchange.status >= 300:
        _check_error(exchange, problems, rich_errors)
    else:
        _check_success(exchange, problems)
    return problems.found


# -- requests ---------------------------------------------------------------------------------


def _check_request(exchange: Exchange, problems: Problems) -> None:
    path = exchange.path
    if path in ("/api/v1/listErrors", "/api/v1/countErrors"):
        body = json.loads(exchange.request_body)
        problems.require(isinstance(body, dict), "body is a JSON object")
        if exchange.status < 300:
            for key in ("start", "end"):
                problems.require(
                    isinstance(body.get(key), str) and bool(NS_STRING.match(body[key])),
                    f"{key} is a string of Unix nanoseconds",
                )
        if path == "/api/v1/listErrors" and exchange.status < 300:
            problems.require(isinstance(body.get("limit"), int) and body["limit"] > 0, "limit is non-zero")
            if body.get("order"):
                problems.require(body["order"] in ("ascending", "descending"), "order is known")
    elif path in ("/api/v1/errorFromGroupID", "/api/v1/errorFromErrorID", "/api/v1/nextPrevErrorIDs"):
        query = exchange.query
        if exchange.status < 300:
            problems.require(bool(query.get("groupID")), "groupID is given")
            timestamp = (query.get("timestamp") or [""])[0]
            problems.require(bool(NS_STRING.match(timestamp)), "timestamp is Unix nanoseconds")
    elif path == "/api/v5/query_range" and exchange.status < 300:
        _check_v5_request(json.loads(exchange.request_body), problems)
    elif path == "/api/v4/query_range" and exchange.status < 300:
        _check_v4_request(json.loads(exchange.request_body), problems)


def _check_v5_request(body: dict[str, Any], problems: Problems) -> None:
    problems.require(set(body) <= V5_TOP, f"no unknown top-level field: {set(body) - V5_TOP}")
    for key in ("start", "end"):
        value = body.get(key)
        problems.require(isinstance(value, int) and len(str(value)) == 13, f"{key} is a number of ms")
    problems.require(body.get("start", 0) < body.get("end", 0), "start < end")
    problems.require(body.get("requestType") in REQUEST_TYPES, "requestType is known")
    queries = body.get("compositeQuery", {}).get("queries") or []
    problems.require(set(body.get("compositeQuery", {})) == {"queries"}, "compositeQuery has queries")
    problems.require(bool(queries), "at least one query")
    for envelope in queries:
        problems.require(set(envelope) == {"type", "spec"}, "envelope is {type, spec}")
        spec = envelope.get("spec", {})
        allowed = V5_SQL if envelope.get("type") == "clickhouse_sql" else V5_BUILDER
        problems.require(set(spec) <= allowed, f"no unknown spec field: {set(spec) - allowed}")
        if envelope.get("type") == "builder_query":
            problems.require(spec.get("signal") in ("traces", "logs", "metrics"), "signal")
            problems.require(0 <= spec.get("limit", 0) <= 10_000, "limit within 0..10000")
            for order in spec.get("order") or []:
                problems.require(order.get("direction") in ("asc", "desc"), "order direction")


def _check_v4_request(body: dict[str, Any], problems: Problems) -> None:
    """QueryRangeParamsV3 (model/v3/v3.go:423 at v0.86.0) with clickhouse_sql for a list panel."""
    problems.require(set(body) <= V4_TOP, f"no unknown top-level field: {set(body) - V4_TOP}")
    for key in ("start", "end"):
        value = body.get(key)
        problems.require(isinstance(value, int) and len(str(value)) == 13, f"{key} is a number of ms")
    problems.require(body.get("start", 0) < body.get("end", 0), "start < end")
    composite = body.get("compositeQuery") or {}
    problems.require(composite.get("queryType") == "clickhouse_sql", "queryType clickhouse_sql")
    problems.require(composite.get("panelType") == "list", "panelType list (rows, not a time series)")
    queries = composite.get("chQueries") or {}
    problems.require(bool(queries), "at least one chQuery")
    for query in queries.values():
        problems.require(set(query) <= {"query", "disabled", "legend"}, "ClickHouseQuery fields")
        problems.require(isinstance(query.get("query"), str) and bool(query["query"]), "query is set")


# -- successful answers -------------------------------------------------------------------------


def _json(exchange: Exchange, problems: Problems) -> Any:
    problems.require(exchange.content_type.startswith("application/json"), "JSON content type")
    try:
        return json.loads(exchange.response_body)
    except ValueError:
        problems.require(False, "body is JSON")
        return None


def _check_success(exchange: Exchange, problems: Problems) -> None:
    path = exchange.path
    body = _json(exchange, problems)
    if path == "/api/v1/version":
        problems.require(isinstance(body, dict) and isinstance(body.get("version"), str), "version")
    elif path == "/api/v1/health":
        problems.require(body == {"status": "ok"}, "health is {status: ok}")
    elif path == "/api/v1/listErrors":
        problems.require(body is None or (isinstance(body, list) and body != []),
                         "rows, or null when empty (never [])")  # fmt: skip
        for row in body or []:
            _check_error_group(row, problems)
    elif path == "/api/v1/countErrors":
        problems.require(isinstance(body, int) and not isinstance(body, bool), "a bare number")
    elif path in ("/api/v1/errorFromGroupID", "/api/v1/errorFromErrorID"):
        _check_error_with_span(body, problems)
    elif path == "/api/v1/nextPrevErrorIDs":
        problems.require(isinstance(body, dict) and set(body) == NEXT_PREV_KEYS, "next/prev keys")
        for key in ("nextTimestamp", "prevTimestamp"):
            problems.require(bool(RFC3339.match(str(body.get(key)))), f"{key} is RFC 3339")
    elif path == "/api/v5/query_range":
        _check_v5_response(json.loads(exchange.request_body), body, problems)
    elif path == "/api/v4/query_range":
        _check_v4_response(body, problems)
    else:
        problems.require(False, f"an endpoint the spec describes (got {path})")


def _check_error_group(row: Any, problems: Problems) -> None:
    problems.require(isinstance(row, dict) and set(row) == ERROR_GROUP_KEYS, "model.Error keys")
    if not isinstance(row, dict):
        return
    problems.require(bool(HEX32.match(str(row.get("groupID")))), "groupID is md5 hex")
    problems.require(isinstance(row.get("exceptionCount"), int) and row["exceptionCount"] >= 1,
                     "exceptionCount is a positive integer")  # fmt: skip
    for key in ("firstSeen", "lastSeen"):
        problems.require(bool(RFC3339.match(str(row.get(key)))), f"{key} is RFC 3339")
    for key in ("exceptionType", "exceptionMessage", "serviceName"):
        problems.require(isinstance(row.get(key), str), f"{key} is a string")


def _check_error_with_span(body: Any, problems: Problems) -> None:
    problems.require(isinstance(body, dict) and set(body) == ERROR_WITH_SPAN_KEYS,
                     "model.ErrorWithSpan keys (errorId, not errorID)")  # fmt: skip
    if isinstance(body, dict):
        problems.require(isinstance(body.get("exceptionEscaped"), bool), "exceptionEscaped bool")
        problems.require(bool(RFC3339.match(str(body.get("timestamp")))), "timestamp RFC 3339")


def _check_v5_response(request: dict[str, Any], body: Any, problems: Problems) -> None:
    problems.require(isinstance(body, dict) and body.get("status") == "success", "status success")
    data = (body or {}).get("data") or {}
    problems.require(data.get("type") == request.get("requestType"), "data.type is requestType")
    results = (data.get("data") or {}).get("results")
    problems.require(isinstance(results, list), "data.data.results is a list")
    problems.require(isinstance(data.get("meta"), dict), "meta is an object")
    envelopes = request.get("compositeQuery", {}).get("queries", [])
    for result, envelope in zip(results or [], envelopes, strict=False):
        if request.get("requestType") == "scalar":
            _check_scalar(result, problems)
        else:
            _check_raw(result, envelope, problems)


def _check_v4_response(body: Any, problems: Problems) -> None:
    """v3.QueryRangeResponse: `result[]` with rows under `list`, left out when none matched."""
    problems.require(isinstance(body, dict) and body.get("status") == "success", "status success")
    results = ((body or {}).get("data") or {}).get("result")
    problems.require(isinstance(results, list), "data.result is a list")
    for result in results or []:
        problems.require(isinstance(result.get("queryName"), str), "Result.queryName")
        rows = result.get("list")
        problems.require(rows is None or (isinstance(rows, list) and rows != []),
                         "list left out when nothing matched (never [])")  # fmt: skip
        problems.require("series" not in result, "a list panel answers rows, not series")
        for row in rows or []:
            problems.require(set(row) == {"timestamp", "data"}, "Row is {timestamp, data}")
            problems.require(bool(RFC3339.match(str(row.get("timestamp")))), "Row.timestamp RFC 3339")
            problems.require(isinstance(row.get("data"), dict), "Row.data is an object")


def _check_raw(result: dict[str, Any], envelope: dict[str, Any], problems: Problems) -> None:
    problems.require(isinstance(result.get("queryName"), str), "RawData.queryName")
    problems.require(isinstance(result.get("nextCursor", ""), str), "RawData.nextCursor")
    rows = result.get("rows")
    problems.require(rows is None or (isinstance(rows, list) and rows != []),
                     "rows, or null when nothing matched (never [])")  # fmt: skip
    signal = envelope.get("spec", {}).get("signal")
    for row in rows or []:
        problems.require(isinstance(row.get("data"), dict), "row.data is an object")
        if "timestamp" in row:
            problems.require(bool(RFC3339.match(str(row["timestamp"]))), "row timestamp RFC 3339")
        stamp = row.get("data", {}).get("timestamp")
        if signal == "logs":
            problems.require(isinstance(stamp, int) and len(str(stamp)) == 19,
                             "log data.timestamp is integer nanoseconds")  # fmt: skip
        elif signal == "traces":
            problems.require(bool(RFC3339.match(str(stamp))), "span data.timestamp is RFC 3339")
            for key in ("trace_id", "span_id"):
                problems.require(key in row["data"], f"span rows always carry {key}")


def _check_scalar(result: dict[str, Any], problems: Problems) -> None:
    columns = result.get("columns")
    problems.require(isinstance(columns, list) and bool(columns), "ScalarData.columns")
    for column in columns or []:
        problems.require(column.get("columnType") in ("group", "aggregation"), "columnType")
        problems.require(isinstance(column.get("name"), str), "column name")
    for row in result.get("data") or []:
        problems.require(isinstance(row, list) and len(row) == len(columns or []), "row width")


# -- errors ---------------------------------------------------------------------------------


def _check_error(exchange: Exchange, problems: Problems, rich: bool | None) -> None:
    text = exchange.response_body.decode("utf-8", "replace")
    if exchange.status == 404 and exchange.content_type.startswith("text/plain"):
        problems.require(text == "404 page not found\n", "router 404 text")
        return
    if exchange.content_type.startswith("text/plain"):
        problems.require(exchange.path in EXCEPTION_PATHS, "HandleError only on the v1 API")
        problems.require(text.endswith("\n"), "http.Error adds a newline")
        body = json.loads(text)
        problems.require(set(body) == {"data", "total", "limit", "offset", "errors"},
                         "structuredResponse keys")  # fmt: skip
        first = (body.get("errors") or [{}])[0]
        problems.require(first.get("code") == exchange.status and isinstance(first.get("msg"), str),
                         "errors[0] has the status code and a msg")  # fmt: skip
        return
    body = _json(exchange, problems)
    if not isinstance(body, dict):
        return
    problems.require(body.get("status") == "error", "status error")
    error = body.get("error")
    if isinstance(error, str):
        problems.require(exchange.path in EXCEPTION_PATHS | {"/api/v4/query_range"},
                         "RespondError only on the v1 API and v4 query_range")  # fmt: skip
        problems.require(isinstance(body.get("errorType"), str), "errorType is set")
        return
    problems.require(isinstance(error, dict), "render error object")
    if not isinstance(error, dict):
        return
    problems.require(isinstance(error.get("code"), str) and isinstance(error.get("message"), str),
                     "render error has code and message")  # fmt: skip
    if rich is True:
        for key in ("type", "errors", "suggestions"):
            problems.require(key in error, f"v0.131+ error has {key}")
    elif rich is False:
        for key in ("type", "suggestions", "retry"):
            problems.require(key not in error, f"pre-v0.131 error has no {key}")
