"""The JSON SigNoz answers with, as pydantic models, and the three families of error bodies.

Field names are SigNoz's own (Go struct tags), so these models document the wire format.
Models ignore fields they do not know: newer SigNoz versions add some, and that must not break
a poll. Missing or mistyped fields raise pydantic's ValidationError, which the caller turns into
a SignozError (a whole response) or a SkippedRecord (one row).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class VersionInfo(Lenient):
    """`GET /api/v1/version`."""

    version: StrictStr
    ee: str | None = None
    setupCompleted: bool | None = None  # noqa: N815 (SigNoz's name)


class ErrorGroupRow(Lenient):
    """One row of `POST /api/v1/listErrors` (Go `model.Error`)."""

    exceptionType: StrictStr  # noqa: N815
    exceptionMessage: StrictStr  # noqa: N815
    exceptionCount: StrictInt = Field(ge=1)  # noqa: N815
    lastSeen: StrictStr  # noqa: N815
    firstSeen: StrictStr  # noqa: N815
    serviceName: StrictStr  # noqa: N815
    groupID: StrictStr = Field(min_length=1)  # noqa: N815


class ErrorWithSpan(Lenient):
    """`GET /api/v1/errorFromGroupID` (Go `model.ErrorWithSpan`; note `errorId`)."""

    errorId: StrictStr  # noqa: N815
    exceptionType: StrictStr  # noqa: N815
    exceptionStacktrace: StrictStr  # noqa: N815
    exceptionEscaped: bool  # noqa: N815
    exceptionMessage: StrictStr  # noqa: N815
    timestamp: StrictStr
    spanID: StrictStr  # noqa: N815
    traceID: StrictStr  # noqa: N815
    serviceName: StrictStr  # noqa: N815
    groupID: StrictStr  # noqa: N815


class RawRow(Lenient):
    timestamp: str | None = None
    data: dict[str, Any]


class RawResult(Lenient):
    """One `RawData` of a v5 `raw` answer; `rows` is null when nothing matched."""

    queryName: StrictStr  # noqa: N815
    nextCursor: str | None = ""  # noqa: N815
    rows: list[RawRow] | None = None


class RawPayload(Lenient):
    results: list[RawResult]


class QueryRangeData(Lenient):
    type: StrictStr
    data: RawPayload
    meta: dict[str, Any] = Field(default_factory=dict)
    warning: dict[str, Any] | None = None


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


def looks_like_html(content_type: str, text: str) -> bool:
    """A page meant for a browser: the URL points at a UI or a proxy, not the API."""
    if "html" in content_type.lower():
        return True
    start = text.lstrip()[:15].lower()
    return start.startswith("<!doctype") or start.startswith("<html")
