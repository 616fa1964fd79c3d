"""The emulator's single-occurrence endpoints: errorFromGroupID, errorFromErrorID, nextPrevErrorIDs.

SigNoz's own statements (query service `clickhouseReader`: GetErrorFromGroupID, GetErrorFromErrorID,
getNextErrorID, getPrevErrorID) run on the engine with the named arguments bound as clickhouse-go
binds them (strings quoted). What is SigNoz's: the query parameters (`parseGetErrorRequest`:
timestamp first, then groupID; errorID optional until the reader asks for it), HandleError bodies
for bad parameters, RespondError bodies (`bad_data` 400, `not_found` 404, `exec` 422) from the
reader, `errorId` in answers, and Go's zero time where no neighbour exists.
"""

from __future__ import annotations

from typing import Any

from .engine import ClickHouseError, Engine, sql_literal
from .replies import ApiError, Reply, ReplyFamilies, go_json, go_value

ERROR_TABLE = "signoz_traces.distributed_signoz_error_index_v2"
ZERO_TIME = "0001-01-01T00:00:00Z"
_COLUMNS = (
    "errorID, exceptionType, exceptionStacktrace, exceptionEscaped, exceptionMessage, "
    "timestamp, spanID, traceID, serviceName, groupID"
)


class OccurrenceEndpoints(ReplyFamilies):
    """One occurrence of an exception group, and its neighbours in time."""

    engine: Engine

    def error_from_group_id(self, query: dict[str, list[str]]) -> Reply:
        timestamp, group_id, _ = self._occurrence_params(query)
        sql = (
            f"SELECT {_COLUMNS} FROM {ERROR_TABLE} WHERE timestamp = {timestamp} AND groupID = {group_id} "
            "LIMIT 1"
        )
        return self._one_occurrence(sql)

    def error_from_error_id(self, query: dict[str, list[str]]) -> Reply:
        timestamp, group_id, error_id = self._occurrence_params(query)
        if error_id is None:
            return self.respond_error(400, "bad_data", "ErrorID missing from params")
        sql = (
            f"SELECT {_COLUMNS} FROM {ERROR_TABLE} WHERE timestamp = {timestamp} AND groupID = {group_id} "
            f"AND errorID = {error_id} LIMIT 1"
        )
        return self._one_occurrence(sql)

    def next_prev_error_ids(self, query: dict[str, list[str]]) -> Reply:
        timestamp, group_id, error_id = self._occurrence_params(query)
        if error_id is None:
            return self.respond_error(400, "bad_data", "ErrorID missing from params")
        try:
            following = self._neighbour("next", timestamp, group_id, error_id)
            preceding = self._neighbour("prev", timestamp, group_id, error_id)
        except ClickHouseError:
            return self.respond_error(422, "exec", "error in processing sql query")
        answer = {
            "nextErrorID": following[0] if following else "",
            "nextTimestamp": following[1] if following else ZERO_TIME,
            "prevErrorID": preceding[0] if preceding else "",
            "prevTimestamp": preceding[1] if preceding else ZERO_TIME,
            "groupID": (query.get("groupID") or [""])[0],
        }
        return Reply(200, go_json(answer))

    # -- SigNoz's parameters and statements ------------------------------------------------------

    def _occurrence_params(self, query: dict[str, list[str]]) -> tuple[str, str, str | None]:
        """parseGetErrorRequest, with each value as clickhouse-go binds it (a quoted string)."""
        text = (query.get("timestamp") or [""])[0]
        if not text:
            raise ApiError(self.handle_error(400, "timestamp param missing in query"))
        if not _go_int64(text):
            raise ApiError(self.handle_error(400, "timestamp param is not in correct timestamp format"))
        group_id = (query.get("groupID") or [""])[0]
        if not group_id:
            raise ApiError(self.handle_error(400, "groupID param cannot be empty from the query"))
        error_id = (query.get("errorID") or [""])[0]
        return (
            sql_literal(str(int(text))),
            sql_literal(group_id),
            sql_literal(error_id) if error_id else None,
        )

    def _one_occurrence(self, sql: str) -> Reply:
        try:
            result = self.engine.query(sql)
        except ClickHouseError:
            return self.respond_error(422, "exec", "error in processing sql query")
        if not result.rows:
            return self.respond_error(404, "not_found", "Error/Exception not found")
        return Reply(200, go_json(error_with_span(result.rows[0])))

    def _neighbour(
        self, direction: str, timestamp: str, group_id: str, error_id: str
    ) -> tuple[str, str] | None:
        """getNextErrorID / getPrevErrorID: the nearest other occurrence in time; when the two nearest
        share a time, the nearest error id at the asked time, else the nearest strictly later
        (earlier) occurrence."""
        near, order = (">=", "ASC") if direction == "next" else ("<=", "DESC")
        select = f"SELECT errorID AS id, timestamp AS at FROM {ERROR_TABLE} WHERE groupID = {group_id}"
        rows = self._rows(
            f"{select} AND timestamp {near} {timestamp} AND errorID != {error_id} "
            f"ORDER BY timestamp {order} LIMIT 2"
        )
        if len(rows) == 2 and rows[0][1] == rows[1][1]:
            rows = self._rows(
                f"{select} AND timestamp = {timestamp} AND errorID {near[0]} {error_id} "
                f"ORDER BY errorID {order} LIMIT 1"
            ) or self._rows(
                f"{select} AND timestamp {near[0]} {timestamp} ORDER BY timestamp {order} LIMIT 1"
            )
        return rows[0] if rows else None

    def _rows(self, sql: str) -> list[tuple[str, str]]:
        result = self.engine.query(sql)
        return [(str(row["id"]), str(go_value(row["at"], "DateTime64(9)"))) for row in result.rows]


def _go_int64(text: str) -> bool:
    """strconv.ParseInt(text, 10, 64) succeeds: an optional sign, digits, within int64."""
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isdigit() and -(2**63) <= int(text) < 2**63


def error_with_span(row: dict[str, Any]) -> dict[str, Any]:
    """Go's model.ErrorWithSpan, in its field order (`errorId`, though the column is errorID)."""
    return {
        "errorId": row["errorID"],
        "exceptionType": row["exceptionType"],
        "exceptionStacktrace": row["exceptionStacktrace"],
        "exceptionEscaped": bool(row["exceptionEscaped"]),
        "exceptionMessage": row["exceptionMessage"],
        "timestamp": go_value(row["timestamp"], "DateTime64(9)"),
        "spanID": row["spanID"],
        "traceID": row["traceID"],
        "serviceName": row["serviceName"],
        "groupID": row["groupID"],
    }
