"""The emulator's endpoints, without HTTP: open ones, the v1 exceptions API, and v5 (inherited).

Each handler takes the parsed request and answers a `Reply`. The v1 quirks reproduced are those
of the API spec: bare JSON, `null` for an empty list, nanosecond strings in and RFC 3339 out, the
30-second clamp of `end`, text/plain HandleError bodies for bad requests, RespondError bodies for
a missing occurrence, `errorId` in answers vs `errorID` in queries, ILIKE-substring filters, and
Go's zero time when an occurrence has no neighbour.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rounds_bot.sources.signoz.times import NS_PER_S, format_rfc3339_ns

from .data import (
    Dataset,
    ExplicitOccurrences,
    SyntheticOccurrences,
)
from .replies import ApiError, Reply, go_json, go_type
from .v5 import QueryRangeEndpoint

END_BUFFER_NS = 30 * NS_PER_S
ZERO_TIME = "0001-01-01T00:00:00Z"
ORDERS = ("ascending", "descending")
ORDER_PARAMS = ("exceptionType", "exceptionCount", "firstSeen", "lastSeen", "serviceName")


@dataclass
class EmulatedSignoz(QueryRangeEndpoint):
    """The endpoint logic of one emulated SigNoz, its data and its version."""

    dataset: Dataset
    version: str = "v0.138.0"
    clickhouse_sql_allowed: bool = True
    now_ns: Callable[[], int] = field(default=lambda: 0)

    # -- open endpoints ------------------------------------------------------------------------

    @staticmethod
    def health() -> Reply:
        return Reply(200, go_json({"status": "ok"}))

    def version_reply(self) -> Reply:
        return Reply(200, go_json({"version": self.version, "ee": "Y", "setupCompleted": True}))

    # -- v1 exceptions API -------------------------------------------------------------------

    def _v1_params(self, raw: bytes, struct: str, *, needs_limit: bool) -> dict[str, Any]:
        try:
            body = json.loads(raw or b"null")
        except ValueError as error:
            message = f"invalid character in request body: {error}"
            raise ApiError(self.handle_error(400, message)) from error
        if not isinstance(body, dict):
            raise ApiError(
                self.handle_error(
                    400, f"json: cannot unmarshal {type(body).__name__} into Go value of type model.{struct}"
                )
            )
        params = {key.lower(): value for key, value in body.items()}  # Go matches keys loosely
        for key in ("start", "end"):
            value = params.get(key)
            if value is not None and not isinstance(value, str):
                raise ApiError(
                    self.handle_error(
                        400,
                        f"json: cannot unmarshal {go_type(value)} into Go struct field "
                        f"{struct}.{key} of type string",
                    )
                )
        for key in ("limit", "offset"):
            value = params.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ApiError(
                    self.handle_error(
                        400,
                        f"json: cannot unmarshal {go_type(value)} into Go struct field "
                        f"{struct}.{key} of type int64",
                    )
                )
        for key in ("start", "end"):
            text = params.get(key) or ""
            if not text.isdigit():
                raise ApiError(self.handle_error(400, f"{key} param is not in correct timestamp format"))
            params[key] = int(text)
        if needs_limit and not params.get("limit"):
            raise ApiError(self.handle_error(400, "limit param cannot be empty from the query"))
        order = params.get("order") or ""
        if order:
            if order not in ORDERS:
                raise ApiError(self.handle_error(400, f"given order: {order} is not allowed in query"))
            order_param = params.get("orderparam") or ""
            if order_param not in ORDER_PARAMS:
                raise ApiError(
                    self.handle_error(400, f"given orderParam: {order_param} is not allowed in query")
                )
        if params["end"] > self.now_ns() - END_BUFFER_NS:
            params["end"] -= END_BUFFER_NS
        return params

    def _groups_in_window(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        service = (params.get("servicename") or "").lower()
        exception_type = (params.get("exceptiontype") or "").lower()
        tags = params.get("tags") or []
        rows: list[dict[str, Any]] = []
        for group in self.dataset.error_index.groups.values():
            if service and service not in group.service.lower():
                continue
            if exception_type and exception_type not in group.exception_type.lower():
                continue
            count, first, last = self._stats(group, params["start"], params["end"], tags)
            if count == 0:
                continue
            rows.append(
                {
                    "exceptionType": group.exception_type,
                    "exceptionMessage": group.message,
                    "exceptionCount": count,
                    "lastSeen": format_rfc3339_ns(last),
                    "firstSeen": format_rfc3339_ns(first),
                    "serviceName": group.service,
                    "groupID": group.group_id,
                    "_first": first,
                    "_last": last,
                }
            )
        return rows

    def _stats(
        self,
        group: ExplicitOccurrences | SyntheticOccurrences,
        low: int,
        high: int,
        tags: list[Any],
    ) -> tuple[int, int, int]:
        if not tags:
            return group.stats_between(low, high)
        matching = [
            int(r["timestamp"])
            for r in group.newest_first(low, high)
            if self._tags_match(r["resourceTagsMap"], tags)
        ]
        if not matching:
            return 0, 0, 0
        return len(matching), min(matching), max(matching)

    def _tags_match(self, resource: dict[str, str], tags: list[Any]) -> bool:
        for tag in tags:
            if not isinstance(tag, dict):
                raise ApiError(self.handle_error(400, "json: cannot unmarshal tags"))
            lowered = {key.lower(): value for key, value in tag.items()}
            if lowered.get("tagtype") != "ResourceAttribute":
                # the error index has no stringTagMap: ClickHouse fails on the column
                raise ApiError(self.handle_error(500, "error in processing sql query"))
            key, operator = lowered.get("key", ""), lowered.get("operator", "")
            values = [str(v) for v in lowered.get("stringvalues") or []]
            holds = _tag_holds(operator, resource.get(key), values)
            if holds is None:
                raise ApiError(self.handle_error(500, f"filter operator {operator} not supported"))
            if not holds:
                return False
        return True

    def list_errors(self, raw: bytes) -> Reply:
        params = self._v1_params(raw, "ListErrorsParams", needs_limit=True)
        rows = self._groups_in_window(params)
        if params.get("order"):
            key = {"firstSeen": "_first", "lastSeen": "_last"}.get(params["orderparam"], params["orderparam"])
            rows.sort(key=lambda row: row[key], reverse=params["order"] == "descending")
        offset = params.get("offset") or 0
        offset = offset if offset > 0 else 0
        page = rows[offset : offset + params["limit"]]
        for row in page:
            del row["_first"], row["_last"]
        return Reply(200, go_json(page or None))

    def count_errors(self, raw: bytes) -> Reply:
        params = self._v1_params(raw, "CountErrorsParams", needs_limit=False)
        return Reply(200, go_json(len(self._groups_in_window(params))))

    def _query_value(self, query: dict[str, list[str]], name: str) -> str:
        values = query.get(name) or [""]
        return values[0]

    def _timestamp_param(self, query: dict[str, list[str]]) -> int:
        text = self._query_value(query, "timestamp")
        if not text:
            raise ApiError(self.handle_error(400, "timestamp param missing in query"))
        if not text.isdigit():
            raise ApiError(
                self.handle_error(400, f"timestamp param {text} is not in correct timestamp format")
            )
        return int(text)

    def _group_param(self, query: dict[str, list[str]]) -> str:
        group_id = self._query_value(query, "groupID")
        if not group_id:
            raise ApiError(self.handle_error(400, "groupID param cannot be empty from the query"))
        return group_id

    def error_from_group_id(self, query: dict[str, list[str]]) -> Reply:
        group_id = self._group_param(query)
        timestamp = self._timestamp_param(query)
        row = self._row_at(group_id, timestamp, None)
        if row is None:
            return self.respond_error(404, "not_found", "Error/Exception not found")
        return Reply(200, go_json(_error_with_span(row)))

    def error_from_error_id(self, query: dict[str, list[str]]) -> Reply:
        error_id = self._query_value(query, "errorID")
        if not error_id:
            return self.respond_error(400, "bad_data", "ErrorID missing from params")
        group_id = self._group_param(query)
        timestamp = self._timestamp_param(query)
        row = self._row_at(group_id, timestamp, error_id)
        if row is None:
            return self.respond_error(404, "not_found", "Error/Exception not found")
        return Reply(200, go_json(_error_with_span(row)))

    def next_prev_error_ids(self, query: dict[str, list[str]]) -> Reply:
        error_id = self._query_value(query, "errorID")
        if not error_id:
            return self.respond_error(400, "bad_data", "ErrorID missing from params")
        group_id = self._group_param(query)
        timestamp = self._timestamp_param(query)
        group = self.dataset.error_index.groups.get(group_id)
        ordered = (
            sorted((int(r["timestamp"]), r["errorID"]) for r in group.newest_first(0, 2**63)) if group else []
        )
        position = (timestamp, error_id)
        after = [pair for pair in ordered if pair > position]
        before = [pair for pair in ordered if pair < position]
        nxt, prev = (after[0] if after else None), (before[-1] if before else None)
        return Reply(
            200,
            go_json(
                {
                    "nextErrorID": nxt[1] if nxt else "",
                    "nextTimestamp": format_rfc3339_ns(nxt[0]) if nxt else ZERO_TIME,
                    "prevErrorID": prev[1] if prev else "",
                    "prevTimestamp": format_rfc3339_ns(prev[0]) if prev else ZERO_TIME,
                    "groupID": group_id,
                }
            ),
        )

    def _row_at(self, group_id: str, timestamp: int, error_id: str | None) -> dict[str, Any] | None:
        group = self.dataset.error_index.groups.get(group_id)
        if group is None:
            return None
        for row in group.newest_first(timestamp, timestamp):
            if error_id is None or row["errorID"] == error_id:
                return row
        return None


def _error_with_span(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "errorId": row["errorID"],
        "exceptionType": row["exceptionType"],
        "exceptionStacktrace": row["exceptionStacktrace"],
        "exceptionEscaped": row["exceptionEscaped"],
        "exceptionMessage": row["exceptionMessage"],
        "timestamp": format_rfc3339_ns(int(row["timestamp"])),
        "spanID": row["spanID"],
        "traceID": row["traceID"],
        "serviceName": row["serviceName"],
        "groupID": row["groupID"],
    }


def _tag_holds(operator: str, actual: str | None, values: list[str]) -> bool | None:
    """One TagQueryParam; None for an operator SigNoz does not know. StartsWith is ILIKE %v%."""
    contains = any(value.lower() in (actual or "").lower() for value in values)
    checks = {
        "In": actual in values,
        "Equals": actual in values,
        "NotIn": actual not in values,
        "NotEquals": actual not in values,
        "Exists": actual is not None,
        "NotExists": actual is None,
        "Contains": contains,
        "StartsWith": contains,
        "NotContains": not contains,
        "NotStartsWith": not contains,
    }
    return checks.get(operator)
