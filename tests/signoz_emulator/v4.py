"""The emulator's `/api/v4/query_range` for clickhouse_sql: what SigNoz v0.60 to v0.86 answer.

Each rule names the SigNoz source it comes from (github.com/SigNoz/signoz at the tag given):

- the route is registered from v0.37.0 (`RegisterQueryRangeV4Routes`, pkg/query-service/app/
  http_handler.go:458 at v0.60.0, :472 at v0.86.0; absent at v0.36.2);
- the body is decoded into `QueryRangeParamsV3` by encoding/json (unknown fields ignored; a wrong type
  is `cannot parse the request body`, 400 bad_data: app/parser.go:747 at v0.86.0), then
  `CompositeQuery.Validate` (model/v3/v3.go:596): a composite query is required, with at least one
  query kind, no empty clickhouse query (v3.go:497), a known panel type (v3.go:207) and query type
  (v3.go:188);
- reserved variables (`AssignReservedVarsV3`, utils/queryTemplate/vars.go:11 at v0.60.0) are written
  into `{{name}}`, `[[name]]` and `$name` only from v0.86.0, where they are assigned before that
  replacement (parser.go:889 before :902); before, they are assigned after it (parser.go:956 then :967
  at v0.60.0) and only Go's template `{{.name}}` sees them; a template that does not parse is 400;
- a `list` (or `trace`) panel runs each statement with `GetListResultV3` (querier/v2/querier.go:548
  at v0.60.0): a column named `timestamp` (UInt64 nanoseconds; also DateTime64 from v0.70, reader.go
  at v0.86.0) or `timestamp_datetime` becomes the row's `timestamp` and leaves `data`; in the map
  columns `attributes_string`, `resources_string`, `attributes_bool`, `attributes_int64` and
  `attributes_float64` a key `a_b` is dropped where `a.b` is present (removeDuplicateUnderscoreAttributes,
  reader.go:4063 at v0.86.0); rows come back as `data.result[].list`, left out when none matched
  (model/v3/v3.go:1328, `omitempty`);
- other panels run the statement as a time series (`runClickHouseQueries`), which the emulator does
  not model: it refuses them;
- a statement ClickHouse fails is `encountered multiple errors: <ClickHouse's text>` under RespondError
  `internal`, 500 (querier/v2/querier.go runBuilderListQueries; http_handler.go:307 at v0.86.0), with
  `data` naming the failed query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from rounds_bot.sources.signoz.times import format_rfc3339_ns

from .engine import ClickHouseError, QueryResult
from .replies import ApiError, Reply, ReplyFamilies, go_json, go_type, go_value

QUERY_RANGE_V4_SINCE = (0, 37, 0)
RESERVED_TEXT_SINCE = (0, 86, 0)
DATETIME_TIMESTAMP_SINCE = (0, 70, 0)
PANEL_TYPES = ("value", "graph", "table", "list", "trace")
QUERY_TYPES = ("builder", "clickhouse_sql", "promql")
UNDERSCORE_DEDUPED = (
    "attributes_int64",
    "attributes_float64",
    "attributes_bool",
    "attributes_string",
    "resources_string",
)


class QueryRangeV4Endpoint(ReplyFamilies):
    """`POST /api/v4/query_range` for clickhouse_sql list panels, over the engine."""

    #: a statement on the engine, faults included (the v5 endpoint's, shared)
    run_statement: Callable[[str], QueryResult]

    def query_range_v4(self, raw: bytes) -> Reply:
        if self.parsed_version < QUERY_RANGE_V4_SINCE:
            return Reply(404, b"404 page not found\n", "text/plain; charset=utf-8")
        params = self._v4_params(raw)
        composite = params["compositeQuery"]
        if composite.get("panelType") not in ("list", "trace"):
            raise self._bad_data("the emulator runs clickhouse_sql on /api/v4 as a list panel only")
        results = []
        for name, query in sorted((composite.get("chQueries") or {}).items()):
            if query.get("disabled"):
                continue
            statement = self._v4_render(str(query["query"]), params["start"], params["end"])
            try:
                answer = self.run_statement(statement)
            except ClickHouseError as error:
                text = str(error)
                raise ApiError(
                    Reply(
                        500,
                        go_json(
                            {
                                "status": "error",
                                "errorType": "internal",
                                "error": f"encountered multiple errors: {text}",
                                "data": {f"Query-{name}": text},
                            }
                        ),
                    )
                ) from error
            result: dict[str, Any] = {"queryName": name}
            rows = self._v4_rows(answer)
            if rows:
                result["list"] = rows
            results.append(result)
        return Reply(200, go_json({"status": "success", "data": {"resultType": "", "result": results}}))

    # -- the request ---------------------------------------------------------------------------

    def _bad_data(self, message: str) -> ApiError:
        return ApiError(self.respond_error(400, "bad_data", message))

    def _v4_params(self, raw: bytes) -> dict[str, Any]:
        try:
            params = json.loads(raw or b"null")
        except ValueError as error:
            raise self._bad_data(f"cannot parse the request body: {error}") from error
        if not isinstance(params, dict):
            raise self._bad_data(
                f"cannot parse the request body: json: cannot unmarshal {go_type(params)} into Go value "
                "of type v3.QueryRangeParamsV3"
            )
        for key in ("start", "end", "step"):
            value = params.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._bad_data(
                    f"cannot parse the request body: json: cannot unmarshal {go_type(value)} into Go "
                    f"struct field QueryRangeParamsV3.{key} of type int64"
                )
        params.setdefault("start", 0)
        params.setdefault("end", 0)
        composite = params.get("compositeQuery")
        if not isinstance(composite, dict):
            raise self._bad_data("composite query is required")
        if not any(composite.get(kind) for kind in ("builderQueries", "chQueries", "promQueries")):
            raise self._bad_data("composite query must contain at least one query type")
        if composite.get("queryType") == "clickhouse_sql":
            for name, query in (composite.get("chQueries") or {}).items():
                if not isinstance(query, dict) or not query.get("query"):
                    raise self._bad_data(f"clickhouse query {name} is invalid: query is empty")
        panel, kind = composite.get("panelType", ""), composite.get("queryType", "")
        if panel not in PANEL_TYPES:
            raise self._bad_data(f"panel type is invalid: invalid panel type: {panel}")
        if kind not in QUERY_TYPES:
            raise self._bad_data(f"query type is invalid: invalid query type: {kind}")
        if composite["queryType"] != "clickhouse_sql":
            raise self._bad_data("the emulator runs clickhouse_sql only on /api/v4/query_range")
        return params

    def _v4_render(self, query: str, start_ms: int, end_ms: int) -> str:
        values = {
            "start_timestamp": str(start_ms // 1000),
            "end_timestamp": str(end_ms // 1000),
            "start_timestamp_ms": str(start_ms),
            "end_timestamp_ms": str(end_ms),
            "SIGNOZ_START_TIME": str(start_ms),
            "SIGNOZ_END_TIME": str(end_ms),
            "start_timestamp_nano": str(start_ms * 1_000_000),
            "end_timestamp_nano": str(end_ms * 1_000_000),
            "start_datetime": f"toDateTime({start_ms // 1000})",
            "end_datetime": f"toDateTime({end_ms // 1000})",
        }
        if self.parsed_version >= RESERVED_TEXT_SINCE:
            for name in sorted(values, key=len, reverse=True):
                for spelling in (f"{{{{{name}}}}}", f"[[{name}]]", f"${name}"):
                    query = query.replace(spelling, values[name])
        # Go's text/template: {{.name}} from the variables, anything else between {{ }} fails to parse
        query = re.sub(r"\{\{\s*\.(\w+)\s*\}\}", lambda m: values.get(m[1], "<no value>"), query)
        if "{{" in query:
            raise self._bad_data('template: clickhouse-query: unexpected "{{" in command')
        return query

    # -- the answer ----------------------------------------------------------------------------

    def _v4_rows(self, answer: QueryResult) -> list[dict[str, Any]]:
        types = {column.name: column.type for column in answer.columns}
        rows = []
        for row in answer.rows:
            timestamp = "0001-01-01T00:00:00Z"
            data: dict[str, Any] = {}
            for key, value in row.items():
                if key == "timestamp" and types[key].startswith("DateTime"):
                    if self.parsed_version < DATETIME_TIMESTAMP_SINCE:
                        failure = self.respond_error(500, "internal", "interface conversion: not *uint64")
                        raise ApiError(failure)
                    timestamp = go_value(value, types[key])
                elif key == "timestamp":
                    timestamp = format_rfc3339_ns(int(value))
                elif key == "timestamp_datetime":
                    timestamp = go_value(value, types[key])
                else:
                    data[key] = go_value(value, types[key])
            for column in UNDERSCORE_DEDUPED:
                if isinstance(data.get(column), dict):
                    data[column] = _without_underscore_twins(data[column])
            rows.append({"timestamp": timestamp, "data": data})
        return rows


def _without_underscore_twins(attributes: dict[str, Any]) -> dict[str, Any]:
    twins = {key.replace(".", "_") for key in attributes if "." in key}
    return {key: value for key, value in attributes.items() if key not in twins}
