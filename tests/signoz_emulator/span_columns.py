"""Span columns the collector derives from a span's attributes, as it derives them.

`response_status_code`: signoz-otel-collector exporter/clickhousetracesexporter/clickhouse_exporter_v3.go
populateCustomAttrsAndAttrs ranges over the span's attributes in their order and writes the column for each
status attribute it meets, so the last one wins. An HTTP or gRPC status is `strconv.Atoi(v.Str())` when that
reads a number other than 0, else `v.Int()` (pcommon: 0 for anything but an int); a JSON-RPC error code is
`v.Str()` (pcommon: "" for anything but a string).
"""

from __future__ import annotations

import re
from typing import Any

_STATUS_KEYS = frozenset({"http.status_code", "http.response.status_code", "rpc.grpc.status_code"})
_JSONRPC_KEY = "rpc.jsonrpc.error_code"
_ATOI = re.compile(r"[+-]?[0-9]+")  # Go's strconv.Atoi: a sign and ASCII digits, nothing around them
_INT64 = (-(2**63), 2**63 - 1)  # Atoi's range on a 64-bit build


def _go_str(value: Any) -> str:
    """pcommon.Value.Str()."""
    return value if isinstance(value, str) else ""


def _go_int(value: Any) -> int:
    """pcommon.Value.Int()."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _status(value: Any) -> str:
    text = _go_str(value)
    if _ATOI.fullmatch(text) and _INT64[0] <= int(text) <= _INT64[1] and int(text) != 0:
        return str(int(text))
    return str(_go_int(value))


def response_status_code(attributes: dict[str, Any]) -> str:
    """The column for a span's decoded attributes, in the span's order ("" when none names a status)."""
    code = ""
    for key, value in attributes.items():
        if key in _STATUS_KEYS:
            code = _status(value)
        elif key == _JSONRPC_KEY:
            code = _go_str(value)
    return code
