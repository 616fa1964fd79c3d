"""What SigNoz checks in a `/api/v5/query_range` request before it runs anything.

Unknown fields are refused with 400 at every level, `start`/`end` are milliseconds as numbers,
a builder query's limit is at most 10,000, and a key without the clickhouse_sql grant gets 403.
"""

from __future__ import annotations

import json
from typing import Any

from .replies import ApiError, ReplyFamilies, go_type

MAX_LIMIT = 10_000
REQUEST_TYPES = ("raw", "time_series", "scalar", "trace", "raw_stream", "distribution")
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
        if request["start"] >= request["end"]:
            raise self.invalid_input("start time must be before end time")
        if request.get("requestType") not in REQUEST_TYPES:
            raise self.invalid_input(f"invalid request type: {request.get('requestType')}")
        composite = request.get("compositeQuery")
        if not isinstance(composite, dict):
            raise self.invalid_input("compositeQuery is required")
        self._no_unknown(composite, {"queries"}, "CompositeQuery")
        queries = composite.get("queries")
        if not isinstance(queries, list) or not queries:
            raise self.invalid_input("at least one query is required")
        names: set[str] = set()
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
            name = spec.get("name")
            if name in names:
                raise self.invalid_input(f"duplicate query name: {name}")
            names.add(name)
            if kind == "clickhouse_sql" and not self.clickhouse_sql_allowed:
                raise ApiError(
                    self.render_error(
                        403,
                        "forbidden",
                        "forbidden",
                        "this API key's role may not run clickhouse_sql queries",
                    )
                )
            if kind == "builder_query":
                self._check_builder(spec)
        return request

    def _no_unknown(self, value: dict[str, Any], allowed: set[str], struct: str) -> None:
        for key in value:
            if key not in allowed:
                raise self.invalid_input(f'json: unknown field "{key}" in {struct}')

    def _check_builder(self, spec: dict[str, Any]) -> None:
        if spec.get("signal") not in ("traces", "logs", "metrics"):
            raise self.invalid_input(f"invalid signal: {spec.get('signal')}")
        limit = spec.get("limit", 0)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise self.invalid_input("limit must be a non-negative integer")
        if limit > MAX_LIMIT:
            raise self.invalid_input(f"limit exceeds maximum allowed value of {MAX_LIMIT}")
        offset = spec.get("offset", 0)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise self.invalid_input("offset must be a non-negative integer")
        for item in spec.get("order") or []:
            if item.get("direction") not in ("asc", "desc"):
                raise self.invalid_input(f"invalid order direction: {item.get('direction')}")
