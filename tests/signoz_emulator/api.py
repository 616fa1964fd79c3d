"""The emulator's endpoints, without HTTP: open ones, the v1 exceptions API, and (inherited) single
occurrences (`occurrences`) and v5 (`v5`).

The v1 exceptions API runs SigNoz's own statements (query service `clickhouseReader`: ListErrors,
CountErrors) on the engine, with the named arguments bound as clickhouse-go binds them (strings
quoted). What is SigNoz's and not ClickHouse's stays here: the request format by version (query
parameters with GET before v0.18, a JSON body with POST from v0.18), the 30-second clamp of `end`
against SigNoz's own clock, and the error bodies of each handler: text/plain HandleError for bad
requests and for a failed listErrors query, RespondError (`exec`, 422) for a failed countErrors one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rounds_bot.sources.signoz.times import NS_PER_S

from .engine import ClickHouseError, Engine, sql_literal
from .occurrences import OccurrenceEndpoints
from .replies import ApiError, Reply, go_json, go_type, go_value
from .v4 import QueryRangeV4Endpoint
from .v5 import QueryRangeEndpoint

END_BUFFER_NS = 30 * NS_PER_S
ORDERS = ("ascending", "descending")
ORDER_PARAMS = ("exceptionType", "exceptionCount", "firstSeen", "lastSeen", "serviceName")
ERROR_TABLE = "signoz_traces.distributed_signoz_error_index_v2"
JSON_BODY_SINCE = (0, 18, 0)
TAG_OPERATORS = {"In": "IN", "Equals": "IN", "NotIn": "NOT IN", "NotEquals": "NOT IN"}


@dataclass
class EmulatedSignoz(OccurrenceEndpoints, QueryRangeEndpoint, QueryRangeV4Endpoint):
    """The endpoint logic of one emulated SigNoz: its engine, its version and its clock."""

    engine: Engine
    version: str = "v0.138.0"
    clickhouse_sql_allowed: bool = True
    now_ns: Callable[[], int] = field(default=lambda: 0)
    #: the `query` fault: the v1 exceptions API's next statement fails in ClickHouse
    failing_query: bool = False
    failing_code: int = 241
    #: ClickHouse refuses `body_v2` as an unknown identifier (a logs table before migration 2001)
    logs_without_body_v2: bool = False
    #: SigNoz's `use_json_body` flag: raw logs answer the JSON body (`builder.raw_statement`)
    use_json_body: bool = False
    #: the salt that orders the next list query's tied rows (`ties`); None: chDB's own order
    tie_salt: Callable[[], int | None] = field(default=lambda: None)

    # -- open endpoints ------------------------------------------------------------------------

    @staticmethod
    def health() -> Reply:
        return Reply(200, go_json({"status": "ok"}))

    def version_reply(self) -> Reply:
        return Reply(200, go_json({"version": self.version, "ee": "Y", "setupCompleted": True}))

    def exceptions_method(self) -> str:
        """listErrors and countErrors: GET with query parameters before v0.18, POST with JSON since."""
        return "POST" if self.parsed_version >= JSON_BODY_SINCE else "GET"

    # -- request parsing, by version -------------------------------------------------------------

    def _bad(self, message: str) -> ApiError:
        return ApiError(self.handle_error(400, message))

    def _json_params(self, raw: bytes, struct: str) -> dict[str, Any]:
        try:
            body = json.loads(raw or b"null")
        except ValueError as error:
            raise self._bad(f"invalid character in request body: {error}") from error
        if not isinstance(body, dict):
            raise self._bad(f"json: cannot unmarshal {go_type(body)} into Go value of type model.{struct}")
        params = {key.lower(): value for key, value in body.items()}  # Go matches keys loosely
        for key, go_kind in (("start", "string"), ("end", "string"), ("limit", "int64"), ("offset", "int64")):
            value = params.get(key)
            wrong = (
                not isinstance(value, str) if go_kind == "string" else isinstance(value, bool | str | float)
            )
            if value is not None and wrong:
                found = go_type(value)
                raise self._bad(
                    f"json: cannot unmarshal {found} into Go struct field {struct}.{key} of type {go_kind}"
                )
        return params

    def _query_params(self, query: dict[str, list[str]], *, needs_paging: bool) -> dict[str, Any]:
        params: dict[str, Any] = {key.lower(): values[0] for key, values in query.items()}
        if needs_paging:
            if not params.get("offset") or not params.get("limit"):
                raise self._bad("offset or limit param cannot be empty from the query")
            for key in ("limit", "offset"):
                if not params[key].lstrip("-").isdigit():
                    raise self._bad(f"{key} param is not in correct format")
                params[key] = int(params[key])
        return params

    def _window(self, params: dict[str, Any]) -> tuple[int, int]:
        bounds = []
        for key in ("start", "end"):
            text = params.get(key) or ""
            if not text:
                raise self._bad(f"{key} param missing in query")
            if not text.lstrip("-").isdigit():
                raise self._bad(f"{key} param is not in correct timestamp format")
            bounds.append(int(text))
        start, end = bounds
        if end > self.now_ns() - END_BUFFER_NS:  # parseTimeMinusBuffer, against SigNoz's own clock
            end -= END_BUFFER_NS
        return start, end

    def _exceptions_params(
        self, method: str, raw: bytes, query: dict[str, list[str]], struct: str, *, paging: bool
    ) -> dict[str, Any]:
        if method == "GET":
            params = self._query_params(query, needs_paging=paging)
        else:
            params = self._json_params(raw, struct)
            if paging and not params.get("limit"):
                raise self._bad("limit param cannot be empty from the query")
        params["start"], params["end"] = self._window(params)
        order = params.get("order") or ""
        if paging and order and order not in ORDERS:
            raise self._bad(f"given order: {order} is not allowed in query")
        if paging and order and (params.get("orderparam") or "") not in ORDER_PARAMS:
            raise self._bad(f"given orderParam: {params.get('orderparam') or ''} is not allowed in query")
        return params

    # -- SigNoz's statements -------------------------------------------------------------------

    def _filters(self, params: dict[str, Any]) -> str:
        where = (
            f" FROM {ERROR_TABLE} WHERE timestamp >= {sql_literal(str(params['start']))} "
            f"AND timestamp <= {sql_literal(str(params['end']))}"
        )
        for key, column in (("servicename", "serviceName"), ("exceptiontype", "exceptionType")):
            if params.get(key):
                where += f" AND {column} ilike {sql_literal('%' + params[key] + '%')}"
        return where + self._tags(params.get("tags") or [])

    def _tags(self, tags: list[Any]) -> str:
        clause = ""
        for tag in tags:
            if not isinstance(tag, dict):
                raise self._bad("json: cannot unmarshal tags")
            lowered = {key.lower(): value for key, value in tag.items()}
            column = "resourceTagsMap" if lowered.get("tagtype") == "ResourceAttribute" else "stringTagMap"
            operator = TAG_OPERATORS.get(str(lowered.get("operator", "")))
            if operator is None:
                message = f"filter operator {lowered.get('operator')} not supported"
                raise ApiError(self.handle_error(500, message))
            key = sql_literal(str(lowered.get("key", "")))
            pairs = " OR ".join(
                f"{column}[{key}] = {sql_literal(str(v))}" for v in lowered.get("stringvalues") or []
            )
            clause += f" AND {'NOT' if operator == 'NOT IN' else ''} ({pairs or 'false'})"
        return clause

    def _run(self, sql: str, *, respond: bool = False) -> list[dict[str, Any]]:
        """The statement's rows; a failed one answers as the handler does: HandleError 500
        (listErrors), or RespondError `exec`, 422 (`respond`: countErrors)."""
        try:
            if self.failing_query:
                raise ClickHouseError(241, "MEMORY_LIMIT_EXCEEDED", "emulated: memory limit exceeded")
            return self.engine.query(sql).rows
        except ClickHouseError as error:
            message = "error in processing sql query"
            reply = self.respond_error(422, "exec", message) if respond else self.handle_error(500, message)
            raise ApiError(reply) from error

    def list_errors(self, method: str, raw: bytes, query: dict[str, list[str]]) -> Reply:
        params = self._exceptions_params(method, raw, query, "ListErrorsParams", paging=True)
        service, exception_type = params.get("servicename"), params.get("exceptiontype")
        sql = "SELECT any(exceptionMessage) as exceptionMessage, count() AS exceptionCount, "
        sql += "min(timestamp) as firstSeen, max(timestamp) as lastSeen, groupID"
        sql += ", serviceName" if service else ", any(serviceName) as serviceName"
        sql += ", exceptionType" if exception_type else ", any(exceptionType) as exceptionType"
        sql += self._filters(params) + " GROUP BY groupID"
        sql += (", serviceName" if service else "") + (", exceptionType" if exception_type else "")
        if params.get("orderparam") and params.get("order") in ORDERS:
            direction = "DESC" if params["order"] == "descending" else "ASC"
            sql += f" ORDER BY {params['orderparam']} {direction}"
        if params.get("limit", 0) > 0:
            sql += f" LIMIT {params['limit']}"
        if (params.get("offset") or 0) > 0:
            sql += f" OFFSET {params['offset']}"
        rows = [_error_row(row) for row in self._run(sql)]
        return Reply(200, go_json(rows or None))

    def count_errors(self, method: str, raw: bytes, query: dict[str, list[str]]) -> Reply:
        params = self._exceptions_params(method, raw, query, "CountErrorsParams", paging=False)
        rows = self._run("SELECT count(distinct(groupID)) AS count" + self._filters(params), respond=True)
        return Reply(200, go_json(int(rows[0]["count"])))


def _error_row(row: dict[str, Any]) -> dict[str, Any]:
    """Go's model.Error, in its field order."""
    return {
        "exceptionType": row["exceptionType"],
        "exceptionMessage": row["exceptionMessage"],
        "exceptionCount": int(row["exceptionCount"]),
        "lastSeen": go_value(row["lastSeen"], "DateTime64(9)"),
        "firstSeen": go_value(row["firstSeen"], "DateTime64(9)"),
        "serviceName": row["serviceName"],
        "groupID": row["groupID"],
    }
