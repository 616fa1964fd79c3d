"""The emulator's `/api/v5/query_range`: SigNoz's behaviour around a real ClickHouse engine.

Kept here because it is SigNoz's, by version: request checks (`v5_request`), the rendering of
reserved variables in clickhouse_sql (only from v0.88: before, the query reaches ClickHouse
verbatim), builder queries written as SigNoz's statement builders write them (`builder`), the
answer envelopes (log `timestamp` as integer nanoseconds, span events as objects from v0.130 and
JSON strings before, `null` rows), `key not found` (400 with SigNoz's docs URL; a warning for
traces from v0.134), and ClickHouse errors as HTTP statuses: 500 for every one before v0.131, then
400, 404 or 500 by ClickHouse error code (`castError`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from rounds_bot.sources.signoz.times import NS_PER_MS, format_rfc3339_ns
from rounds_bot.sources.signoz.versions import (
    PARSED_SPAN_EVENTS_SINCE,
    QUERY_RANGE_V5_SINCE,
    RICH_ERROR_BODY_SINCE,
    TRACE_KEY_WARNINGS_SINCE,
)

from .builder import Statement, mapper_for, raw_statement, scalar_statement
from .engine import ClickHouseError, Engine, QueryResult
from .filters import FilterError, KeyNotFound
from .replies import ApiError, Reply, datetime64_ns, go_float_verb, go_json, go_value, non_finite
from .v5_request import RequestChecks

TEMPLATE_VARIABLES_SINCE = (0, 88, 0)
# a logs list query selects the fields it names (pkg/telemetrylogs/statement_builder.go, v0.95.0
# buildListQuery `if len(query.SelectFields) == 0`); before, always the default columns
LOG_SELECT_FIELDS_SINCE = (0, 95, 0)
# a filter's quoted value has `\\\\` and `\\'` unescaped from v0.91.0 (where_clause_visitor.go trimQuotes)
UNESCAPED_QUOTES_SINCE = (0, 91, 0)
FILTER_DOCS = (
    "https://signoz.io/docs/userguide/search-troubleshooting/"
    "#q-im-getting-key-fieldname-not-found--why-cant-it-find-my-field"
)
# castError (clickhousetelemetrystore/provider.go, v0.131+): ClickHouse code -> (status, type, code, prefix)
_INVALID = (400, "invalid-input")
# ClickHouse's codes for a busy server (ClickHouse src/Common/ErrorCodes.cpp)
BUSY_CODES = {159: "TIMEOUT_EXCEEDED", 202: "TOO_MANY_SIMULTANEOUS_QUERIES", 241: "MEMORY_LIMIT_EXCEEDED"}
CAST_ERRORS: dict[int, tuple[tuple[int, str], str, str]] = {
    62: (_INVALID, "syntax_error", "SQL syntax error"),
    60: ((404, "not-found"), "unknown_table", "unknown table"),
    81: ((404, "not-found"), "unknown_database", "unknown database"),
    47: (_INVALID, "unknown_identifier", "unknown identifier"),
    46: (_INVALID, "unknown_identifier", "unknown function"),
    63: (_INVALID, "unknown_identifier", "unknown aggregate function"),
    50: (_INVALID, "unknown_identifier", "unknown type"),
    56: (_INVALID, "unknown_identifier", "unknown storage engine"),
    44: (_INVALID, "unknown_identifier", "illegal column"),
    49: (_INVALID, "syntax_error", "unknown element in SQL AST"),
    48: (_INVALID, "syntax_error", "unknown query type"),
    43: (_INVALID, "illegal_argument", "illegal argument type"),
    42: (_INVALID, "illegal_argument", "wrong number of arguments"),
    34: (_INVALID, "illegal_argument", "too many arguments to function"),
    35: (_INVALID, "illegal_argument", "too few arguments to function"),
}


class QueryRangeEndpoint(RequestChecks):
    """`POST /api/v5/query_range` over the engine."""

    engine: Engine
    tie_salt: Callable[[], int | None]

    def query_range(self, raw: bytes) -> Reply:
        if self.parsed_version < QUERY_RANGE_V5_SINCE:
            return Reply(404, b"404 page not found\n", "text/plain; charset=utf-8")
        request = self._v5_request(raw)
        start_ms, end_ms, request_type = request["start"], request["end"], request["requestType"]
        results: list[dict[str, Any]] = []
        scanned, read_bytes, elapsed = 0, 0, 0.0
        warnings: list[str] = []
        for envelope in request["compositeQuery"]["queries"]:
            spec = envelope["spec"]
            if spec.get("disabled"):
                continue
            if envelope["type"] == "clickhouse_sql":
                query = self.render_variables(str(spec.get("query", "")), start_ms, end_ms)
                answer = self._engine(query)
                result = _sql_result(answer, spec.get("name", "A"), request_type)
            elif envelope["type"] == "builder_query":
                statement = self._statement(spec, request_type, start_ms, end_ms, warnings)
                answer = self._engine(statement.sql)
                result = self._builder_result(answer, statement, spec, request_type)
            else:
                raise self.invalid_input(f"the emulator does not run {envelope['type']} queries")
            results.append(result)
            scanned, read_bytes = scanned + answer.rows_read, read_bytes + answer.bytes_read
            elapsed += answer.elapsed_seconds
        data: dict[str, Any] = {
            "type": request_type,
            "data": {"results": results},
            "meta": {"rowsScanned": scanned, "bytesScanned": read_bytes, "durationMs": int(elapsed * 1000)},
        }
        if self.parsed_version < (0, 100, 0):
            data["warnings"] = []
        if warnings:
            data["warning"] = {"message": warnings[0], "warnings": [{"message": w} for w in warnings]}
        refused = non_finite(results)
        if refused is not None:
            # SigNoz renders the answer with jsoniter's standard-library configuration (pkg/http/render/
            # render.go `json = jsoniter.ConfigCompatibleWithStandardLibrary`, Success), whose float encoder
            # refuses NaN and infinities (json-iterator/go stream_float.go WriteFloat64: "unsupported value:
            # %f"); Success hands the error to render.Error, a plain error there being internal/unknown: 500.
            # jsoniter puts the struct fields it was inside before the text; rounds reads none of it.
            raise ApiError(
                self.render_error(500, "internal", "unknown", f"unsupported value: {go_float_verb(refused)}")
            )
        return Reply(200, go_json({"status": "success", "data": data}))

    # -- clickhouse_sql ------------------------------------------------------------------------

    def render_variables(self, query: str, start_ms: int, end_ms: int) -> str:
        """SigNoz's reserved variables, from v0.88 only (before, the query runs as it came)."""
        if self.parsed_version < TEMPLATE_VARIABLES_SINCE:
            return query
        values = reserved_variables(start_ms, end_ms)
        for name in sorted(values, key=len, reverse=True):
            for spelling in (f"{{{{{name}}}}}", f"[[{name}]]", f"${name}"):
                query = query.replace(spelling, values[name])
        # then Go's text/template: {{.name}}; anything else in {{ }} fails the template
        query = re.sub(r"\{\{\s*\.(\w+)\s*\}\}", lambda m: values.get(m[1], "<no value>"), query)
        if "{{" in query:
            raise ApiError(
                self.render_error(500, "internal", "internal", "error while replacing template variables")
            )
        return query

    def _engine(self, sql: str) -> QueryResult:
        try:
            return self.run_statement(sql)
        except ClickHouseError as error:
            raise ApiError(self.clickhouse_failure(error)) from error

    def run_statement(self, sql: str) -> QueryResult:
        """A clickhouse_sql statement on the engine, or the ClickHouse error a fault asks for."""
        if getattr(self, "failing_query", False):
            # a busy ClickHouse: codes castError does not map pass through as a 500 with
            # ClickHouse's own text (SigNoz pkg/telemetrystore/clickhousetelemetrystore/provider.go)
            code = getattr(self, "failing_code", 241)
            name = BUSY_CODES.get(code, "UNKNOWN")
            raise ClickHouseError(code, name, f"emulated: {name}")
        if getattr(self, "logs_without_body_v2", False) and "body_v2" in sql:
            raise ClickHouseError(
                47, "UNKNOWN_IDENTIFIER", "Unknown expression identifier `body_v2` in scope SELECT"
            )
        return self.engine.query(sql)

    def clickhouse_failure(self, error: ClickHouseError) -> Reply:
        """A ClickHouse error as this SigNoz version answers it."""
        raw = f"code: {error.code}, message: {error.message}"
        if self.parsed_version < RICH_ERROR_BODY_SINCE or error.code not in CAST_ERRORS:
            return self.render_error(500, "internal", "internal", raw)
        (status, kind), code, prefix = CAST_ERRORS[error.code]
        return self.render_error(status, kind, code, f"{prefix}: {error.message}")

    # -- builder queries -------------------------------------------------------------------------

    def _statement(
        self, spec: dict[str, Any], request_type: str, start_ms: int, end_ms: int, warnings: list[str]
    ) -> Statement:
        unescapes = self.parsed_version >= UNESCAPED_QUOTES_SINCE
        mapper = mapper_for(self.engine, spec["signal"], unescapes_quoted=unescapes)
        selectable = self.parsed_version >= LOG_SELECT_FIELDS_SINCE
        build = (
            scalar_statement
            if request_type == "scalar"
            else partial(
                raw_statement,
                log_fields_selectable=selectable,
                tie_salt=self.tie_salt(),
                json_body=getattr(self, "use_json_body", False),
            )
        )
        try:
            return build(spec, mapper, start_ms, end_ms)
        except KeyNotFound as missing:
            if spec["signal"] == "traces" and self.parsed_version >= TRACE_KEY_WARNINGS_SINCE:
                # SigNoz v0.134+ warns, and a condition on a key no span has matches nothing
                warnings.append(str(missing))
                unfiltered = build({**spec, "filter": {}}, mapper, start_ms, end_ms)
                return Statement(
                    unfiltered.sql.replace(" WHERE ", " WHERE false AND ", 1),
                    unfiltered.signal,
                    unfiltered.selected,
                )
            raise self.invalid_input(str(missing), url=FILTER_DOCS) from missing
        except FilterError as error:
            raise self.invalid_input(f"invalid filter expression: {error}") from error
        except ClickHouseError as error:
            raise ApiError(self.clickhouse_failure(error)) from error

    def _builder_result(
        self, answer: QueryResult, statement: Statement, spec: dict[str, Any], request_type: str
    ) -> dict[str, Any]:
        name = spec.get("name", "A")
        if request_type == "scalar":
            columns = [
                _scalar_column(key, spec["signal"], name, key.startswith("__result_"))
                for key in statement.selected
            ]
            data = [[row[key] for key in statement.selected] for row in answer.rows]
            if not data and not spec.get("groupBy"):
                data = [[0]]
            return {"queryName": name, "columns": columns, "data": data}
        types = {column.name: column.type for column in answer.columns}
        rows = [self._raw_row(row, types, statement.signal) for row in answer.rows]
        if statement.signal == "logs" and getattr(self, "use_json_body", False):
            for row in rows:
                _without_empty_message(row["data"])
        cursor = ""
        limit = spec.get("limit") or 100
        if len(rows) == limit and rows:
            last_ms = _row_ns(answer.rows[-1]["timestamp"]) // NS_PER_MS
            cursor = base64.b64encode(str(last_ms).encode()).decode()
        return {"queryName": name, "nextCursor": cursor, "rows": rows or None}

    def _raw_row(self, row: dict[str, Any], types: dict[str, str], signal: str) -> dict[str, Any]:
        data = {key: go_value(value, types[key]) for key, value in row.items()}
        timestamp = _row_ns(row["timestamp"])
        if signal == "traces" and "events" in data:
            data["events"] = self._events(data["events"])
        return {"timestamp": go_value(row["timestamp"], types["timestamp"]) if signal == "traces" else
                _rfc3339(timestamp), "data": data}  # fmt: skip

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


def _without_empty_message(data: dict[str, Any]) -> None:
    """postProcessLogBody (pkg/querier/postprocess.go): a JSON body's empty `message` is dropped."""
    body = data.get("body")
    if isinstance(body, dict) and body.get("message") == "":
        del body["message"]


def reserved_variables(start_ms: int, end_ms: int) -> dict[str, str]:
    """querybuilder.AssignReservedVars: the window in s, ms and ns, and as toDateTime()."""
    start_s, end_s = start_ms // 1000, end_ms // 1000
    return {
        "start_timestamp": str(start_s),
        "end_timestamp": str(end_s),
        "start_timestamp_ms": str(start_ms),
        "end_timestamp_ms": str(end_ms),
        "SIGNOZ_START_TIME": str(start_ms),
        "SIGNOZ_END_TIME": str(end_ms),
        "start_timestamp_nano": str(start_ms * NS_PER_MS),
        "end_timestamp_nano": str(end_ms * NS_PER_MS),
        "start_datetime": f"toDateTime({start_s})",
        "end_datetime": f"toDateTime({end_s})",
    }


def _sql_result(answer: QueryResult, name: str, request_type: str) -> dict[str, Any]:
    types = {column.name: column.type for column in answer.columns}
    if request_type == "scalar":
        columns = [
            _scalar_column(column.name, "", name, _numeric_type(column.type)) for column in answer.columns
        ]
        data = [[go_value(row[c.name], c.type) for c in answer.columns] for row in answer.rows]
        return {"queryName": name, "columns": columns, "data": data}
    rows = []
    for row in answer.rows:
        entry: dict[str, Any] = {}
        for column in ("timestamp", "timestamp_datetime"):
            if column in row and types[column].startswith("DateTime"):
                entry["timestamp"] = go_value(row[column], types[column])
                break
        entry["data"] = {key: go_value(value, types[key]) for key, value in row.items()}
        rows.append(entry)
    return {"queryName": name, "nextCursor": "", "rows": rows or None}


def _scalar_column(key: str, signal: str, name: str, aggregation: bool) -> dict[str, Any]:
    return {
        "name": key,
        "signal": signal,
        "fieldContext": "",
        "fieldDataType": "",
        "queryName": name,
        "aggregationIndex": int(key.removeprefix("__result_")) if key.startswith("__result_") else 0,
        "meta": {},
        "columnType": "aggregation" if aggregation else "group",
    }


def _numeric_type(clickhouse_type: str) -> bool:
    return re.match(r"^(Nullable\()?(U?Int|Float|Decimal)", clickhouse_type) is not None


def _row_ns(value: Any) -> int:
    return int(value) if isinstance(value, int) else datetime64_ns(str(value))


def _rfc3339(ns: int) -> str:
    return format_rfc3339_ns(ns)
