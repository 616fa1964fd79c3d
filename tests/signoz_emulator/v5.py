"""The emulator's `/api/v5/query_range`: strict request checks, builder and ClickHouse queries.

Reproduced: unknown fields refused with 400 at every level, ms `start`/`end` as numbers, the
10,000 row limit, `null` rows, log `timestamp` as integer nanoseconds, span events as objects
from v0.130 (JSON strings before), `key not found` with SigNoz's docs URL (a warning for traces
from v0.134), 403 for clickhouse_sql when the key lacks the grant, and the reserved variables of
ClickHouse queries, which the emulator's SQL engine then really runs.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from rounds_bot.sources.signoz.times import NS_PER_MS, format_rfc3339_ns
from rounds_bot.sources.signoz.versions import (
    PARSED_SPAN_EVENTS_SINCE,
    QUERY_RANGE_V5_SINCE,
    TRACE_KEY_WARNINGS_SINCE,
)

from .replies import (
    ApiError,
    Reply,
    ReplyFamilies,
    go_json,
    go_type,
    plain,
)
from .sql import (
    Binary,
    Call,
    Evaluator,
    InList,
    Instant,
    Name,
    RowScope,
    SqlError,
    Unary,
    execute,
    parse_expression,
)

if TYPE_CHECKING:
    from .data import Dataset

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
SPAN_COLUMNS = {
    "has_error",
    "status_code",
    "status_code_string",
    "status_message",
    "name",
    "kind",
    "kind_string",
    "duration_nano",
    "trace_id",
    "span_id",
    "parent_span_id",
    "timestamp",
    "http_method",
    "http_url",
    "http_host",
    "response_status_code",
    "events",
    "links",
    "db_name",
    "db_operation",
    "trace_state",
    "flags",
}
LOG_COLUMNS = {
    "severity_text",
    "severity_number",
    "body",
    "trace_id",
    "span_id",
    "id",
    "timestamp",
    "trace_flags",
    "scope_name",
    "scope_version",
    "observed_timestamp",
}
LOG_DEFAULT_FIELDS = (
    "timestamp",
    "id",
    "trace_id",
    "span_id",
    "trace_flags",
    "severity_text",
    "severity_number",
    "scope_name",
    "scope_version",
    "body",
    "attributes_string",
    "attributes_number",
    "attributes_bool",
    "resources_string",
    "scope_string",
)
SPAN_DEFAULT_FIELDS = (
    "timestamp",
    "trace_id",
    "span_id",
    "name",
    "service.name",
    "duration_nano",
    "has_error",
    "status_code",
    "status_message",
)


class QueryRangeEndpoint(ReplyFamilies):
    """`POST /api/v5/query_range` over the emulator's dataset."""

    dataset: Dataset
    clickhouse_sql_allowed: bool

    def query_range(self, raw: bytes) -> Reply:
        if self.parsed_version < QUERY_RANGE_V5_SINCE:
            return Reply(404, b"404 page not found\n", "text/plain; charset=utf-8")
        request = self._v5_request(raw)
        start_ms, end_ms = request["start"], request["end"]
        results: list[dict[str, Any]] = []
        scanned = 0
        warnings: list[str] = []
        for envelope in request["compositeQuery"]["queries"]:
            spec = envelope["spec"]
            if spec.get("disabled"):
                continue
            if envelope["type"] == "clickhouse_sql":
                result, rows = self._run_sql(spec, request["requestType"], start_ms, end_ms)
            elif envelope["type"] == "builder_query":
                result, rows = self._run_builder(spec, request["requestType"], start_ms, end_ms, warnings)
            else:
                raise self.invalid_input(f"the emulator does not run {envelope['type']} queries")
            results.append(result)
            scanned += rows
        data: dict[str, Any] = {
            "type": request["requestType"],
            "data": {"results": results},
            "meta": {"rowsScanned": scanned, "bytesScanned": scanned * 180, "durationMs": 3},
        }
        if self.parsed_version < (0, 100, 0):
            data["warnings"] = []
        if warnings:
            data["warning"] = {"message": warnings[0], "warnings": [{"message": w} for w in warnings]}
        return Reply(200, go_json({"status": "success", "data": data}))

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

    # clickhouse_sql

    def _run_sql(
        self, spec: dict[str, Any], request_type: str, start_ms: int, end_ms: int
    ) -> tuple[dict[str, Any], int]:
        query = substitute_variables(str(spec.get("query", "")), start_ms, end_ms)
        try:
            result = execute(query, self.dataset.tables())
        except (SqlError, TypeError, ValueError, KeyError) as error:
            raise self.invalid_input(f"clickhouse query failed: {error}") from error
        name = spec.get("name", "A")
        if request_type == "scalar":
            columns = [
                {
                    "name": column,
                    "signal": "",
                    "fieldContext": "",
                    "fieldDataType": "",
                    "queryName": name,
                    "aggregationIndex": 0,
                    "meta": {},
                    "columnType": "aggregation"
                    if result.rows and _numeric(result.rows[0][column])
                    else "group",
                }
                for column in result.columns
            ]
            data = [[plain(row[c]) for c in result.columns] for row in result.rows]
            return {"queryName": name, "columns": columns, "data": data}, result.rows_scanned
        rows = []
        for row in result.rows:
            entry: dict[str, Any] = {}
            stamp = row.get("timestamp", row.get("timestamp_datetime"))
            if isinstance(stamp, Instant):
                entry["timestamp"] = format_rfc3339_ns(int(stamp))
            entry["data"] = plain(row)
            rows.append(entry)
        return {"queryName": name, "nextCursor": "", "rows": rows or None}, result.rows_scanned

    # builder queries

    def _run_builder(
        self,
        spec: dict[str, Any],
        request_type: str,
        start_ms: int,
        end_ms: int,
        warnings: list[str],
    ) -> tuple[dict[str, Any], int]:
        signal = spec["signal"]
        table = self.dataset.spans.rows_list if signal == "traces" else self.dataset.logs.rows_list
        low, high = start_ms * NS_PER_MS, end_ms * NS_PER_MS
        expression = ((spec.get("filter") or {}).get("expression") or "").strip()
        resolver = FieldResolver(signal, table, self, warnings)
        condition = None
        if expression:
            try:
                condition = parse_expression(expression)
            except SqlError as error:
                raise self.invalid_input(f"invalid filter expression: {error}") from error
            resolver.check_keys(condition)
        selected = []
        for row in table:
            if not low <= int(row["timestamp"]) < high:
                continue
            if condition is None or Evaluator().value(condition, resolver.scope(row)):
                selected.append(row)
        name = spec.get("name", "A")
        if request_type == "scalar":
            return self._scalar(spec, name, selected, resolver), len(table)
        for item in reversed(spec.get("order") or []):
            key = item.get("key", {}).get("name", "timestamp")
            selected.sort(
                key=lambda row, key=key: _sortable(resolver.value(row, key)),
                reverse=item.get("direction") == "desc",
            )
        offset, limit = spec.get("offset", 0), spec.get("limit") or 100
        page = selected[offset : offset + limit]
        fields = [f.get("name") for f in spec.get("selectFields") or []]
        rows = [self._raw_row(row, signal, fields, resolver) for row in page]
        cursor = ""
        if len(page) == limit and page:
            cursor = base64.b64encode(str(int(page[-1]["timestamp"]) // NS_PER_MS).encode()).decode()
        return {"queryName": name, "nextCursor": cursor, "rows": rows or None}, len(table)

    def _raw_row(
        self, row: dict[str, Any], signal: str, fields: list[str], resolver: FieldResolver
    ) -> dict[str, Any]:
        timestamp = int(row["timestamp"])
        if signal == "logs":
            names = fields or list(LOG_DEFAULT_FIELDS)
            data = {name: resolver.value(row, name) for name in names}
            data["timestamp"] = timestamp  # logs: an integer of nanoseconds
        else:
            names = ["timestamp", "trace_id", "span_id"] + [
                f for f in (fields or SPAN_DEFAULT_FIELDS) if f not in ("timestamp", "trace_id", "span_id")
            ]
            data = {name: resolver.value(row, name) for name in names}
            data["timestamp"] = format_rfc3339_ns(timestamp)
            if "events" in data:
                data["events"] = self._events(row["events"])
        return {"timestamp": format_rfc3339_ns(timestamp), "data": plain(data)}

    def _events(self, events: list[str]) -> list[Any]:
        if self.parsed_version < PARSED_SPAN_EVENTS_SINCE:
            return list(events)
        parsed = []
        for text in events:
            event = json.loads(text)
            parsed.append(
                {
                    "name": event.get("name", ""),
                    "timeUnixNano": event.get("timeUnixNano", 0),
                    "attributes": event.get("attributeMap", {}),
                }
            )
        return parsed

    def _scalar(
        self, spec: dict[str, Any], name: str, rows: list[dict[str, Any]], resolver: FieldResolver
    ) -> dict[str, Any]:
        aggregations = spec.get("aggregations") or [{"expression": "count()"}]
        if any(a.get("expression") != "count()" for a in aggregations):
            raise self.invalid_input("the emulator computes only count() aggregations")
        keys = [g.get("name") for g in spec.get("groupBy") or []]
        counts: dict[tuple[Any, ...], int] = {}
        for row in rows:
            key = tuple(resolver.value(row, k) for k in keys)
            counts[key] = counts.get(key, 0) + 1
        columns = [
            {
                "name": k,
                "signal": spec["signal"],
                "fieldContext": "",
                "fieldDataType": "",
                "queryName": name,
                "aggregationIndex": 0,
                "meta": {},
                "columnType": "group",
            }
            for k in keys
        ]
        columns += [
            {
                "name": f"__result_{i}",
                "signal": spec["signal"],
                "fieldContext": "",
                "fieldDataType": "",
                "queryName": name,
                "aggregationIndex": i,
                "meta": {},
                "columnType": "aggregation",
            }
            for i in range(len(aggregations))
        ]
        data = [[*key, count] for key, count in sorted(counts.items(), key=lambda kv: -kv[1])]
        if not keys and not data:
            data = [[0]]
        return {"queryName": name, "columns": columns, "data": data}


class FieldResolver:
    """Resolves v5 field names (`service.name`, `has_error`, `resource.x:string`) on a row."""

    def __init__(
        self, signal: str, table: list[dict[str, Any]], api: QueryRangeEndpoint, warnings: list[str]
    ):
        self.signal = signal
        self.table = table
        self.api = api
        self.warnings = warnings
        self.intrinsic = SPAN_COLUMNS if signal == "traces" else LOG_COLUMNS

    @staticmethod
    def _split(name: str) -> tuple[str | None, str]:
        name = name.split(":", 1)[0]
        for context in ("resource", "attribute", "tag", "span", "log", "body", "scope"):
            if name.startswith(context + "."):
                return context, name[len(context) + 1 :]
        return None, name

    def value(self, row: dict[str, Any], name: str) -> Any:
        context, key = self._split(name)
        if name in row and (name in self.intrinsic or name in LOG_DEFAULT_FIELDS):
            return row[name]
        if context in (None, "span", "log") and key in self.intrinsic:
            return row.get(key, "")
        maps = (
            ("resources_string",)
            if context == "resource"
            else (
                ("attributes_string", "attributes_number", "attributes_bool")
                if context in ("attribute", "tag")
                else ("resources_string", "attributes_string", "attributes_number", "attributes_bool")
            )
        )
        for column in maps:
            if key in row.get(column, {}):
                return row[column][key]
        return None

    def known(self, name: str) -> bool:
        key = self._split(name)[1]
        if key in self.intrinsic or name in self.intrinsic:
            return True
        return any(self.value(row, name) is not None for row in self.table)

    def check_keys(self, node: Any) -> None:
        if isinstance(node, Name):
            if not self.known(node.name):
                message = f"key `{node.name}` not found"
                if self.signal == "traces" and self.api.parsed_version >= TRACE_KEY_WARNINGS_SINCE:
                    self.warnings.append(message)
                    return
                raise self.api.invalid_input(message, url=FILTER_DOCS)
        elif isinstance(node, Binary):
            self.check_keys(node.left)
            if not isinstance(node.right, Name):
                self.check_keys(node.right)
        elif isinstance(node, Unary | InList):
            self.check_keys(node.operand)
        elif isinstance(node, Call):
            for arg in node.args:
                self.check_keys(arg)

    def scope(self, row: dict[str, Any]) -> RowScope:
        def missing(name: str) -> Any:
            value = self.value(row, name)
            return "" if value is None else value

        return RowScope({}, missing=missing)


def substitute_variables(query: str, start_ms: int, end_ms: int) -> str:
    """SigNoz's reserved query variables, in all four spellings, longest names first."""
    start_s, end_s = start_ms // 1000, end_ms // 1000
    values = {
        "start_timestamp_nano": str(start_ms * NS_PER_MS),
        "end_timestamp_nano": str(end_ms * NS_PER_MS),
        "start_timestamp_ms": str(start_ms),
        "end_timestamp_ms": str(end_ms),
        "start_timestamp": str(start_s),
        "end_timestamp": str(end_s),
        "start_datetime": f"toDateTime({start_s})",
        "end_datetime": f"toDateTime({end_s})",
        "SIGNOZ_START_TIME": str(start_ms),
        "SIGNOZ_END_TIME": str(end_ms),
    }
    for name in sorted(values, key=len, reverse=True):
        value = values[name]
        for spelling in (f"{{{{.{name}}}}}", f"{{{{{name}}}}}", f"[[{name}]]", f"${name}"):
            query = query.replace(spelling, value)
    return query


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool | Instant)


def _sortable(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    return value
