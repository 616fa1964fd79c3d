"""`POST /api/v4/query_range`: where SigNoz v0.60 to v0.86 run rounds' clickhouse_sql.

Rounds builds every query as a v5 request (`queries.query_range_request`); before v0.87 the same
statement goes to v4 instead. What the v4 route takes and answers, from SigNoz's source at v0.60.0
and v0.86.0:

- the body is `QueryRangeParamsV3` (pkg/query-service/model/v3/v3.go:423 at v0.86.0): `start` and
  `end` in milliseconds, `step` in seconds, and `compositeQuery` with `queryType` `clickhouse_sql`,
  `panelType` and `chQueries` (name -> `{query, disabled}`, v3.go:481); `CompositeQuery.Validate`
  refuses an empty query and an unknown panel or query type (v3.go:596);
- with `panelType` `list` the statement runs through `GetListResultV3` (querier/v2/querier.go:548 at
  v0.60.0): each row comes back as `{"timestamp", "data"}`, a column named `timestamp` lifted out of
  `data` (clickhouseReader/reader.go:4005 at v0.60.0), under `data.result[].list` (v3.go:1328, `list`
  left out when no row matched);
- `{{`, `[[` and `$` followed by a variable name are rendered before the statement runs, at every
  version (parser.go:946 at v0.60.0): rounds' literals escape them (`queries.sql_string`);
- a failed statement answers RespondError `internal` (500) with ClickHouse's text in `error`
  (http_handler.go:307 at v0.86.0), read as on v5 before v0.131.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictStr

from rounds_bot.errors import SignozError
from rounds_bot.sources.signoz.wire import Lenient, QueryRangeData, ResultsPayload

# Go's zero time.Time: a row whose statement has no `timestamp` column
_ZERO_TIME = "0001-01-01T00:00:00Z"


def v4_can_run(request: dict[str, Any]) -> bool:
    """Whether a v5 request is one v4 runs alike: raw rows of clickhouse_sql statements only."""
    queries = request.get("compositeQuery", {}).get("queries", [])
    return (
        request.get("requestType") == "raw"
        and bool(queries)
        and all(query.get("type") == "clickhouse_sql" for query in queries)
    )


def v4_request(request: dict[str, Any]) -> dict[str, Any]:
    """The v4 body running the same statements over the same milliseconds as the v5 `request`."""
    if not v4_can_run(request):
        raise SignozError(
            "this SigNoz has no /api/v5/query_range, and its /api/v4/query_range runs only "
            "clickhouse_sql: reading without clickhouse_sql needs SigNoz v0.87 or later",
            hint="upgrade SigNoz to v0.87 or later, or give the API key's role the clickhouse_sql grant",
        )
    specs = [query["spec"] for query in request["compositeQuery"]["queries"]]
    queries = {s["name"]: {"query": s["query"], "disabled": bool(s.get("disabled"))} for s in specs}
    return {
        "start": request["start"],
        "end": request["end"],
        "step": 60,
        "compositeQuery": {"queryType": "clickhouse_sql", "panelType": "list", "chQueries": queries},
    }


class V4Row(Lenient):
    timestamp: str | None = None
    data: dict[str, Any]


class V4Result(Lenient):
    """One `v3.Result`: rows under `list` for a list panel; `series` would mean a time series."""

    queryName: StrictStr = ""
    rows: list[V4Row] | None = Field(default=None, alias="list")
    series: list[Any] | None = None


class QueryRangeV4Data(Lenient):
    """`v3.QueryRangeResponse`."""

    resultType: str = ""
    result: list[V4Result] | None = None

    def as_raw(self) -> QueryRangeData:
        """The rows as a v5 `raw` answer carries them, so every reader reads both alike."""
        results = []
        for result in self.result or []:
            if result.series and not result.rows:
                raise SignozError(
                    "SigNoz answered /api/v4/query_range with a time series instead of rows",
                    hint="report the SigNoz version and this message",
                )
            rows = [
                {"timestamp": None if row.timestamp == _ZERO_TIME else row.timestamp, "data": row.data}
                for row in result.rows or []
            ]
            results.append({"queryName": result.queryName, "nextCursor": "", "rows": rows or None})
        return QueryRangeData(type="raw", data=ResultsPayload(results=results))


class QueryRangeV4Envelope(Lenient):
    """`{"status":"success","data":QueryRangeResponse}` (writeHttpResponse)."""

    status: StrictStr
    data: QueryRangeV4Data
