"""What SigNoz checks in a `/api/v5/query_range` request before it runs anything.

Unknown fields are refused with 400 at every level, `start`/`end` are milliseconds as numbers, and a key
without the clickhouse_sql grant gets 403. From v0.88 the handler also runs `QueryRangeRequest.Validate`
(pkg/types/querybuildertypes/querybuildertypesv5/validation.go; pkg/querier/api.go QueryRange): the request
types it runs, a builder query's limit of at most 10,000, an aggregation for an aggregating request, a
non-empty ClickHouse query, and the checks later versions added (`Validate` here).
"""

from __future__ import annotations

import json
from typing import Any

from .replies import ApiError, ReplyFamilies, go_type

MAX_LIMIT = 10_000
# the request types SigNoz reads (request_type.go UnmarshalJSON); `Validate` runs fewer of them
REQUEST_TYPES = ("raw", "time_series", "scalar", "trace", "raw_stream", "distribution")
VALIDATION_SINCE = (0, 88, 0)  # api.go QueryRange calls Validate; v0.87.0 has no validation.go
VALIDATED_TYPES = ("raw", "time_series", "scalar")  # validation.go at v0.88.0: `case RequestTypeRaw, ...`
# validation.go, tag by tag: `trace` added at v0.91.1, `raw_stream` at v0.93.0 (`distribution` never); each
# is a raw request (no aggregation checked) from the version that runs it
LATER_VALIDATED_TYPES = {"trace": (0, 91, 1), "raw_stream": (0, 93, 0)}
STREAM_TIME_RANGE_EXEMPT_SINCE = (0, 93, 0)  # `r.RequestType != RequestTypeRawStream && r.Start >= r.End`
# validateAggregations: `len(q.Aggregations) == 0 && !q.Disabled` up to v0.117.0, a disabled query too after
DISABLED_AGGREGATION_CHECK_SINCE = (0, 117, 1)
# CompositeQuery.Validate (wrapped messages, "query at position N") replaced the inline loop at v0.112.0
COMPOSITE_VALIDATE_SINCE = (0, 112, 0)
ALL_DISABLED_CHECK_SINCE = (0, 97, 0)  # validateAllQueriesNotDisabled
SELECT_FIELDS_CHECK_SINCE = (0, 94, 0)  # validateSelectFields: isRoot, isEntryPoint
RAW_METRICS_CHECK_SINCE = (0, 118, 0)  # "raw request type is not supported for metric queries"
METADATA_ONLY_FIELDS = ("isRoot", "isEntryPoint")
QUERY_TYPES = (
    "builder_query",
    "builder_formula",
    "builder_sub_query",
    "builder_join",
    "builder_trace_operator",
    "promql",
    "clickhouse_sql",
    "builder_ai_query",
)
TOP_LEVEL_FIELDS = {
    "schemaVersion",
    "start",
    "end",
    "requestType",
    "compositeQuery",
    "variables",
    "noCache",
    "formatOptions",
}
BUILDER_FIELDS = {
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
SQL_FIELDS = {"name", "query", "disabled", "legend"}
FILTER_DOCS = (
    "https://signoz.io/docs/userguide/search-troubleshooting/"
    "#q-im-getting-key-fieldname-not-found--why-cant-it-find-my-field"
)


class RequestChecks(ReplyFamilies):
    """The request validation of one SigNoz version."""

    clickhouse_sql_allowed: bool

    def _v5_request(self, raw: bytes) -> dict[str, Any]:
        try:
            request = json.loads(raw or b"null")
        except ValueError as error:
            raise self.invalid_input(f"failed to decode request body: {error}") from error
        if not isinstance(request, dict):
            raise self.invalid_input("failed to decode request body: expected an object")
        self._no_unknown(request, TOP_LEVEL_FIELDS, "QueryRangeRequest")
        for key in ("start", "end"):
            value = request.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise self.invalid_input(
                    f"json: cannot unmarshal {go_type(value)} into Go struct field "
                    f"QueryRangeRequest.{key} of type uint64"
                )
        if request.get("requestType") not in REQUEST_TYPES:
            raise self.invalid_input(f"invalid request type: {request.get('requestType')}")
        composite = request.get("compositeQuery")
        if not isinstance(composite, dict):
            raise self.invalid_input("compositeQuery is required")
        self._no_unknown(composite, {"queries"}, "CompositeQuery")
        queries = composite.get("queries")
        if not isinstance(queries, list) or not queries:
            raise self.invalid_input("at least one query is required")
        for envelope in queries:
            if not isinstance(envelope, dict):
                raise self.invalid_input("each query must be an object")
            self._no_unknown(envelope, {"type", "spec"}, "QueryEnvelope")
            kind = envelope.get("type")
            if kind not in QUERY_TYPES:
                raise self.invalid_input(f"unknown query type: {kind}")
            spec = envelope.get("spec")
            if not isinstance(spec, dict):
                raise self.invalid_input("query spec is required")
            allowed = SQL_FIELDS if kind == "clickhouse_sql" else BUILDER_FIELDS
            self._no_unknown(spec, allowed, "QueryBuilderQuery")
            if kind == "builder_query" and spec.get("signal") not in ("traces", "logs", "metrics"):
                raise self.invalid_input(f"invalid signal: {spec.get('signal')}")
            for key in ("limit", "offset") if kind == "builder_query" else ():
                value = spec.get(key, 0)
                if isinstance(value, bool) or not isinstance(value, int):  # Go's `int` fields
                    raise self.invalid_input(
                        f"json: cannot unmarshal {go_type(value)} into Go struct field "
                        f"QueryBuilderQuery.{key} of type int"
                    )
        if self.parsed_version >= VALIDATION_SINCE:
            self._validate(request)
        for envelope in queries:
            if envelope["type"] == "clickhouse_sql" and not self.clickhouse_sql_allowed:
                raise ApiError(
                    self.render_error(
                        403,
                        "forbidden",
                        "forbidden",
                        "this API key's role may not run clickhouse_sql queries",
                    )
                )
        return request

    def _validate(self, request: dict[str, Any]) -> None:
        """QueryRangeRequest.Validate, in its order (validation.go at v0.138: time range, request type,
        metrics in a raw request, each query wrapped with its name, names, all disabled)."""
        request_type = request["requestType"]
        stream = request_type == "raw_stream" and self.parsed_version >= STREAM_TIME_RANGE_EXEMPT_SINCE
        if not stream and request["start"] >= request["end"]:
            raise self.invalid_input("start time must be before end time")
        later = LATER_VALIDATED_TYPES.get(request_type)
        if request_type not in VALIDATED_TYPES and (later is None or self.parsed_version < later):
            raise self.invalid_input(f"invalid request type: {request_type}")
        queries = request["compositeQuery"]["queries"]
        raw = request_type in ("raw", "raw_stream", "trace")
        metrics = any(envelope["spec"].get("signal") == "metrics" for envelope in queries)
        if raw and metrics and self.parsed_version >= RAW_METRICS_CHECK_SINCE:
            raise self.invalid_input("raw request type is not supported for metric queries")
        names: set[str] = set()
        for position, envelope in enumerate(queries, start=1):
            spec, name = envelope["spec"], envelope["spec"].get("name") or ""
            if envelope["type"] == "clickhouse_sql" and not spec.get("query"):
                raise self.invalid_input(
                    self._empty_sql_message(_query_id(envelope, position, self.parsed_version))
                )
            if envelope["type"] != "builder_query":
                continue
            problem = self._builder_problem(spec, aggregating=not raw)
            if problem:
                query_id = _query_id(envelope, position, self.parsed_version)
                raise self.invalid_input(f"invalid {query_id}: {problem}")
            if name and name in names:
                raise self.invalid_input(f"duplicate query name '{name}'")
            names.add(name)
        if self.parsed_version >= ALL_DISABLED_CHECK_SINCE and all(
            envelope["spec"].get("disabled") for envelope in queries
        ):
            raise self.invalid_input("all queries are disabled - at least one query must be enabled")

    def _empty_sql_message(self, query_id: str) -> str:
        if self.parsed_version >= COMPOSITE_VALIDATE_SINCE:
            return f"invalid {query_id}: ClickHouse SQL query is required"
        return f"query expression is required for {query_id}"  # the inline check of v0.88.0-v0.111

    def _no_unknown(self, value: dict[str, Any], allowed: set[str], struct: str) -> None:
        for key in value:
            if key not in allowed:
                raise self.invalid_input(f'json: unknown field "{key}" in {struct}')

    def _builder_problem(self, spec: dict[str, Any], *, aggregating: bool) -> str:
        """What QueryBuilderQuery.Validate refuses in one builder query ("" for nothing), in its order."""
        exempt = spec.get("disabled") and self.parsed_version < DISABLED_AGGREGATION_CHECK_SINCE
        if aggregating and not spec.get("aggregations") and not exempt:
            return "at least one aggregation is required"  # validation.go validateAggregations
        limit, offset = spec.get("limit", 0), spec.get("offset", 0)
        if limit < 0:
            return f"limit must be non-negative, got {limit}"
        if limit > MAX_LIMIT:
            return f"limit exceeds maximum allowed value of {MAX_LIMIT}"
        if offset < 0:
            return f"offset must be non-negative, got {offset}"
        for index, item in enumerate(spec.get("order") or [], start=1):
            if item.get("direction") not in ("asc", "desc"):
                return (
                    f"invalid direction for order by clause #{index} in query '{spec.get('name')}': "
                    + str(item.get("direction"))
                )
        selected = {field.get("name") for field in spec.get("selectFields") or []}
        checked = self.parsed_version >= SELECT_FIELDS_CHECK_SINCE
        if not aggregating and checked and selected & set(METADATA_ONLY_FIELDS):
            return "isRoot and isEntryPoint fields are not supported in selectFields"
        return ""


def _query_id(envelope: dict[str, Any], position: int, version: tuple[int, int, int]) -> str:
    """getQueryIdentifier: `query 'A'`, or the query's position when it has no name; before v0.112.0 a
    builder query is labelled by its signal (`log query at position 1`)."""
    name = envelope["spec"].get("name") or ""
    label = "ClickHouse query" if envelope["type"] == "clickhouse_sql" else "query"
    if name:
        return f"{label} '{name}'"
    if label == "query" and version < COMPOSITE_VALIDATE_SINCE:
        signal = {"traces": "trace", "logs": "log", "metrics": "metric"}[envelope["spec"]["signal"]]
        label = f"{signal} query"
    return f"{label} at position {position}"
