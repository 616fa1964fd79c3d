"""The JSON SigNoz answers with, as pydantic models, and the three families of error bodies.

Field names are SigNoz's own (Go struct tags), so these models document the wire format.
Models ignore fields they do not know: newer SigNoz versions add some, and that must not break
a poll. Missing or mistyped fields raise pydantic's ValidationError, which the caller turns into
a SignozError (a whole response) or a SkippedRecord (one row).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from rounds_bot.errors import SignozError
from rounds_bot.grouping.log_template import TEMPLATE_ATTRIBUTES
from rounds_bot.settings.error_codes import DEFAULT_ERROR_CODE_ATTRIBUTES


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


def body_message(body: Any) -> str | None:
    """The message of a raw log row's JSON body, "" when it holds none; None when `body` is not one.

    A SigNoz with its `use_json_body` flag on (experimental, off by default: pkg/flagger/registry.go) answers
    a raw log's default columns with `body_v2 as body` (pkg/statementbuilder/logsstatementbuilder/
    statement_builder.go bodyAliasExpression): the JSON object the collector wrote, whose `message` is the
    text (signoz-otel-collector exporter/clickhouselogsexporter/exporter.go processBody), dropped when empty
    (pkg/querier/postprocess.go postProcessLogBody). The SQL path reads the same `body_v2.message`."""
    if not isinstance(body, dict):
        return None
    message = body.get("message")
    return message if isinstance(message, str) else ""


#: why a raw log row whose JSON body is `{}` and that has nothing else to be grouped by is skipped. A row the
#: collector wrote before its `body_json_enabled` was on keeps its text in the `body` column and `{}` in
#: `body_v2` (signoz-otel-collector exporter/clickhouselogsexporter/exporter.go processBody, v0.129.13 to
#: v0.144.7), and a SigNoz with `use_json_body` answers a raw row's body from `body_v2` alone, naming no way
#: to select `body` (pkg/statementbuilder/logsstatementbuilder/statement_builder.go bodyAliasExpression and
#: pkg/telemetryschema/logstelemetryschema/field_mapper.go getColumn, SigNoz v0.138.0). A row written after,
#: whose map body held an empty `message`, reads `{}` too (pkg/querier/postprocess.go postProcessLogBody
#: drops it): the two cannot be told apart here, so the reason names both.
UNREAD_JSON_BODY = (
    "its body reads as {} from a SigNoz that queries JSON bodies (use_json_body), and it has no exception "
    "type, stack trace, log template, error code or `exception.message`/`message` attribute to be grouped "
    "by instead: "
    "either it was written before the collector's body_json_enabled and keeps its text only in the `body` "
    "column, which SigNoz's raw rows do not return (they answer `body_v2`), or its JSON body held no "
    "message; allow rounds' clickhouse_sql (it reads `body`) to group it by its text"
)
#: what else a row is grouped by when its message is empty: an exception's type and stack (a bare
#: `raise ValueError()`: OTel Python sends `exception.message` ""; Java's appender leaves out a null one),
#: its log template (`grouping.log_template`), an error code in a default code attribute (the first tier
#: groups by it: a configured one is not known here), and the attributes `queries.log_message_sql` reads a
#: message from. `msg` is not among them: the grouped SQL and a read by name
#: (`builder_queries.NAMED_LOG_ATTRIBUTES`) do not read it, so a row grouped by it here would group apart
#: from its twin read there.
GROUPED_BY_ATTRIBUTES = (
    "exception.type",
    "exception.stacktrace",
    "exception.message",
    "message",
    *TEMPLATE_ATTRIBUTES,
    *DEFAULT_ERROR_CODE_ATTRIBUTES,
)


def is_unread_json_body(body: Any, strings: Mapping[str, str]) -> bool:
    """A raw row to skip (`UNREAD_JSON_BODY`): its JSON body is exactly `{}`, the `body_v2` of a row written
    before JSON bodies, and none of `GROUPED_BY_ATTRIBUTES` holds text. A body `{"message": ""}` is a row
    written after, with no text in any column: it reads "", as the SQL reads it."""
    if body != {}:
        return False
    return not any(
        isinstance(strings.get(name), str) and strings[name].strip() for name in GROUPED_BY_ATTRIBUTES
    )


class VersionInfo(Lenient):
    """`GET /api/v1/version`."""

    version: StrictStr
    ee: str | None = None
    setupCompleted: bool | None = None


class ErrorGroupRow(Lenient):
    """One row of `POST /api/v1/listErrors` (Go `model.Error`)."""

    exceptionType: StrictStr
    exceptionMessage: StrictStr
    exceptionCount: StrictInt = Field(ge=1)
    lastSeen: StrictStr
    firstSeen: StrictStr
    serviceName: StrictStr
    groupID: StrictStr = Field(min_length=1)


class ErrorWithSpan(Lenient):
    """`GET /api/v1/errorFromGroupID` (Go `model.ErrorWithSpan`; note `errorId`)."""

    errorId: StrictStr
    exceptionType: StrictStr
    exceptionStacktrace: StrictStr
    exceptionEscaped: bool
    exceptionMessage: StrictStr
    timestamp: StrictStr
    spanID: StrictStr
    traceID: StrictStr
    serviceName: StrictStr
    groupID: StrictStr


class RawRow(Lenient):
    timestamp: str | None = None
    data: dict[str, Any]


class RawResult(Lenient):
    """One `RawData` of a v5 `raw` answer; `rows` is null when nothing matched."""

    queryName: StrictStr
    nextCursor: str | None = ""
    rows: list[RawRow] | None = None


class ScalarColumn(Lenient):
    name: StrictStr
    columnType: StrictStr


class ScalarResult(Lenient):
    """One `ScalarData`: column descriptors and rows of values."""

    queryName: StrictStr
    columns: list[ScalarColumn]
    data: list[list[Any]] | None = None


class ResultsPayload(Lenient):
    results: list[dict[str, Any]]


class QueryRangeData(Lenient):
    type: StrictStr
    data: ResultsPayload
    meta: dict[str, Any] = Field(default_factory=dict)
    warning: dict[str, Any] | None = None

    def raw_results(self) -> list[RawResult]:
        return [_result(RawResult, result) for result in self.data.results]

    def scalar_results(self) -> list[ScalarResult]:
        return [_result(ScalarResult, result) for result in self.data.results]

    def raw_rows(self) -> list[dict[str, Any]]:
        """Every raw result's rows, each its data with the row's own timestamp under `__row_timestamp` (kept
        apart from a `timestamp` field the data may hold: the readers take the data's first)."""
        rows: list[dict[str, Any]] = []
        for result in self.raw_results():
            for row in result.rows or []:
                merged = dict(row.data)
                if row.timestamp is not None:
                    merged.setdefault("__row_timestamp", row.timestamp)
                rows.append(merged)
        return rows


ResultT = TypeVar("ResultT", bound=BaseModel)


def _result(model: type[ResultT], result: dict[str, Any]) -> ResultT:
    try:
        return model.model_validate(result)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the result"
        raise SignozError(
            f"SigNoz answered query_range with an unexpected {model.__name__}: {where}: {first['msg']}",
            hint="report the SigNoz version and this message",
        ) from error


class QueryRangeEnvelope(Lenient):
    """`POST /api/v5/query_range`: `{"status":"success","data":QueryRangeResponse}`."""

    status: StrictStr
    data: QueryRangeData


class ErrorBody(Lenient):
    """What an error body said, whatever its family."""

    code: str = ""
    message: str = ""
    url: str | None = None
    retry_delay_seconds: float | None = None


def parse_error_body(text: str) -> ErrorBody:
    """Read any of SigNoz's three error families; unknown text is kept, shortened.

    - render (v5 and newer APIs): `{"status":"error","error":{"code","message","url",...}}`
    - RespondError: `{"status":"error","errorType":"not_found","error":"..."}`
    - HandleError (text/plain): `{"data":null,...,"errors":[{"code":400,"msg":"..."}]}`
    """
    try:
        body = json.loads(text)
    except ValueError:
        return ErrorBody(message=_shorten(text))
    if not isinstance(body, dict):
        return ErrorBody(message=_shorten(text))
    error = body.get("error")
    if isinstance(error, dict):
        return _render_error(error)
    if isinstance(error, str):
        return ErrorBody(code=str(body.get("errorType", "")), message=error)
    errors = body.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        first = errors[0]
        return ErrorBody(code=str(first.get("code", "")), message=str(first.get("msg", "")))
    return ErrorBody(message=_shorten(text))


def _render_error(error: dict[str, Any]) -> ErrorBody:
    message = str(error.get("message", ""))
    details = [
        str(item.get("message"))
        for item in error.get("errors") or []
        if isinstance(item, dict) and item.get("message")
    ]
    if details:
        message = f"{message}: {'; '.join(details)}"
    retry = error.get("retry")
    delay = None
    if isinstance(retry, dict) and isinstance(retry.get("delay"), int | float):
        delay = retry["delay"] / 1e9
    url = error.get("url")
    return ErrorBody(
        code=str(error.get("code", "")),
        message=message,
        url=url if isinstance(url, str) and url else None,
        retry_delay_seconds=delay,
    )


def _shorten(text: str, limit: int = 200) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def exception_event(events: Any) -> dict[str, Any] | None:
    """The first exception event of a span's events. Events are objects since SigNoz v0.130 and
    JSON strings before."""
    for event in events or []:
        if isinstance(event, str):
            try:
                event = json.loads(event)
            except ValueError:
                continue
        if isinstance(event, dict):
            name = str(event.get("name", ""))
            if name == "exception" or name.endswith(".exception"):
                return event
    return None


def looks_like_html(content_type: str, text: str) -> bool:
    """A page meant for a browser: the URL points at a UI or a proxy, not the API."""
    if "html" in content_type.lower():
        return True
    start = text.lstrip()[:15].lower()
    return start.startswith("<!doctype") or start.startswith("<html")
