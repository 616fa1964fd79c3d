"""What the emulator answers with: replies, Go-style JSON, and SigNoz's three error families.

- render (v5 and newer APIs): `{"status":"error","error":{...}}`, whose shape changed in v0.131;
- RespondError: `{"status":"error","errorType":"not_found","error":"..."}`;
- HandleError: a `text/plain` body holding a JSON `structuredResponse`, ending in a newline.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from rounds_bot.sources.signoz.times import format_rfc3339_ns, parse_rfc3339_ns
from rounds_bot.sources.signoz.versions import RICH_ERROR_BODY_SINCE, Version, parse_version


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def go_json(value: Any) -> bytes:
    """JSON as Go's encoding/json writes it: compact, with <, > and & escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_encode)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text.encode()


def _encode(value: Any) -> Any:
    raise TypeError(f"cannot encode {type(value).__name__}")


def datetime64_ns(text: str) -> int:
    """Unix nanoseconds of a DateTime64 as ClickHouse writes it in JSON (`2026-05-20 10:01:00.005`, UTC)."""
    return parse_rfc3339_ns(text.replace(" ", "T", 1) + "Z")


def go_value(value: Any, clickhouse_type: str) -> Any:
    """A ClickHouse JSON value as SigNoz marshals what clickhouse-go scanned: DateTime64 as RFC 3339; a NaN
    or infinity of a Float column or of a Float map's values (which the engine writes quoted) as the float
    itself, which SigNoz's JSON rendering then refuses (`non_finite`)."""
    if isinstance(value, str) and clickhouse_type.removeprefix("Nullable(").startswith("DateTime64"):
        return format_rfc3339_ns(datetime64_ns(value))
    if "Float" in clickhouse_type:
        return _floats(value)
    return value


_DENORMALS = {"nan": math.nan, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf}


def _floats(value: Any) -> Any:
    if isinstance(value, str):
        return _DENORMALS.get(value, value)
    if isinstance(value, dict):
        return {key: _floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_floats(item) for item in value]
    return value


def non_finite(value: Any) -> float | None:
    """The first NaN or infinity anywhere in an answer, else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        found = non_finite(item)
        if found is not None:
            return found
    return None


def go_float_verb(value: float) -> str:
    """Go's `%f` of a non-finite float64: NaN, +Inf, -Inf."""
    return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"


class ApiError(Exception):
    """Carries the reply a handler answers with when a request is refused."""

    def __init__(self, reply: Reply):
        super().__init__(reply.status)
        self.reply = reply


class ReplyFamilies:
    """The error bodies of one SigNoz version."""

    version: str

    @property
    def parsed_version(self) -> Version:
        return parse_version(self.version) or (999, 0, 0)

    # -- error bodies, one per family --------------------------------------------------------

    def render_error(
        self,
        status: int,
        kind: str,
        code: str,
        message: str,
        *,
        url: str | None = None,
        retry_delay_ns: int | None = None,
    ) -> Reply:
        error: dict[str, Any]
        if self.parsed_version >= RICH_ERROR_BODY_SINCE:
            error = {"type": kind, "code": code, "message": message}
            if url:
                error["url"] = url
            error["errors"] = []
            error["suggestions"] = []
            if retry_delay_ns is not None:
                error["retry"] = {"delay": retry_delay_ns}
        else:
            error = {"code": code, "message": message}
            if url:
                error["url"] = url
        return Reply(status, go_json({"status": "error", "error": error}))

    @staticmethod
    def handle_error(status: int, message: str) -> Reply:
        body = {
            "data": None,
            "total": 0,
            "limit": 0,
            "offset": 0,
            "errors": [{"code": status, "msg": message}],
        }
        return Reply(status, go_json(body) + b"\n", "text/plain; charset=utf-8")

    @staticmethod
    def respond_error(status: int, error_type: str, message: str) -> Reply:
        return Reply(status, go_json({"status": "error", "errorType": error_type, "error": message}))

    def invalid_input(self, message: str, url: str | None = None) -> ApiError:
        return ApiError(self.render_error(400, "invalid-input", "invalid_input", message, url=url))


def go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"
