"""The builder `raw` queries rounds sends to `/api/v5/query_range` where the key may not run
`clickhouse_sql`: error spans and error log records one by one, newest first, for the reader to group.
"""

from __future__ import annotations

from typing import Any

from rounds_bot.sources.signoz.queries import error_severity_filter


def _field(name: str, context: str, data_type: str | None = None) -> dict[str, str]:
    field = {"name": name, "fieldContext": context, "signal": "traces"}
    if data_type:
        field["fieldDataType"] = data_type
    return field


ERROR_SPAN_FIELDS = (
    _field("service.name", "resource", "string"),
    _field("service.version", "resource", "string"),
    _field("deployment.environment", "resource", "string"),
    _field("name", "span", "string"),
    _field("parent_span_id", "span", "string"),
    _field("kind_string", "span", "string"),
    _field("status_code", "span", "number"),
    _field("status_message", "span", "string"),
    _field("http_method", "span", "string"),
    _field("http_url", "span", "string"),
    _field("response_status_code", "span", "string"),
    _field("events", "span"),
)


def error_spans_raw(limit: int, offset: int) -> dict[str, Any]:
    """Error spans one by one, newest first, with their events (for the no-SQL fallback)."""
    return {
        "type": "builder_query",
        "spec": {
            "name": "A",
            "signal": "traces",
            "disabled": False,
            "filter": {"expression": "has_error = true"},
            "selectFields": [dict(field) for field in ERROR_SPAN_FIELDS],
            "order": [{"key": {"name": "timestamp"}, "direction": "desc"}],
            "limit": limit,
            "offset": offset,
        },
    }


def error_logs_raw(limit: int, offset: int) -> dict[str, Any]:
    """ERROR-or-worse log records one by one, newest first (for the no-SQL fallback)."""
    return {
        "type": "builder_query",
        "spec": {
            "name": "A",
            "signal": "logs",
            "disabled": False,
            "filter": {"expression": error_severity_filter()},
            "order": [
                {"key": {"name": "timestamp"}, "direction": "desc"},
                {"key": {"name": "id"}, "direction": "desc"},
            ],
            "limit": limit,
            "offset": offset,
        },
    }
