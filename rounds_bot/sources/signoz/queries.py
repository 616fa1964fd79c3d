"""The requests rounds sends to `/api/v5/query_range`: builder queries and ClickHouse SQL.

Aggregation is pushed into SigNoz: where the key may run `clickhouse_sql`, error spans and error
logs are grouped inside ClickHouse (one row per group with counts and one sample), and exception
groups get their representative occurrence in batches. Where it may not, builder `raw` queries
page through individual rows.
"""

from __future__ import annotations

from typing import Any

from rounds_bot.sources.signoz.times import NS_PER_S, ms_ceil, ms_floor

MAX_V5_LIMIT = 10_000  # SigNoz rejects a larger limit with 400

# Masks applied, in order, to a log body (or span status message) before grouping, so ids,
# numbers and quoted values do not split one problem into many groups. ClickHouse runs them with
# RE2, whose `\d` and `\b` are ASCII-only; Python must compile them with re.ASCII to agree.
NORMALISATION_RULES: tuple[tuple[str, str], ...] = (
    (r"(?s)\n.*", ""),  # the first line only: stack traces follow it
    (r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", "<uuid>"),
    (r"0[xX][0-9a-fA-F]+", "<hex>"),
    (r"\b[0-9a-fA-F]{16,}\b", "<id>"),
    (r"'[^']*'", "'<s>'"),
    (r'"[^"]*"', '"<s>"'),
    (r"\d+", "<n>"),
)

ERROR_SEVERITY_TEXTS = ("ERROR", "FATAL", "CRITICAL", "EMERGENCY", "ALERT")
ERROR_SEVERITY_NUMBER = 17
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def ascii_upper(text: str) -> str:
    """Upper case as ClickHouse's `upper` does it: ASCII letters only."""
    return text.translate(_ASCII_UPPER)


def is_error_severity(severity_number: int, severity_text: str) -> bool:
    """The one rule for an error log record, the Python side of `error_severity_sql()`."""
    return severity_number >= ERROR_SEVERITY_NUMBER or ascii_upper(severity_text) in ERROR_SEVERITY_TEXTS


def error_severity_sql() -> str:
    """The one rule for an error log record, in ClickHouse (whose `upper` is ASCII-only)."""
    texts = ", ".join(sql_string(text) for text in ERROR_SEVERITY_TEXTS)
    return f"(severity_number >= {ERROR_SEVERITY_NUMBER} OR upper(severity_text) IN ({texts}))"


def error_severity_filter() -> str:
    """A v5 filter expression that matches at least every record `is_error_severity` accepts
    (ILIKE matches each text in any case); rows read with it are checked with that rule."""
    texts = " OR ".join(f"severity_text ILIKE {sql_string(text.lower())}" for text in ERROR_SEVERITY_TEXTS)
    return f"severity_number >= {ERROR_SEVERITY_NUMBER} OR {texts}"


def sql_string(text: str) -> str:
    """A ClickHouse string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def normalised(expression: str) -> str:
    """`expression` wrapped in one replaceRegexpAll per normalisation rule, first rule innermost."""
    for pattern, replacement in NORMALISATION_RULES:
        expression = f"replaceRegexpAll({expression}, {sql_string(pattern)}, {sql_string(replacement)})"
    return expression


def query_range_request(
    start_ns: int, end_ns: int, request_type: str, query: dict[str, Any]
) -> dict[str, Any]:
    """A v5 request over [start, end) in whole milliseconds that cover the ns window."""
    return {
        "schemaVersion": "v1",
        "start": ms_floor(start_ns),
        "end": max(ms_ceil(end_ns), ms_floor(start_ns) + 1),
        "requestType": request_type,
        "compositeQuery": {"queries": [query]},
        "formatOptions": {"formatTableResultForUI": False, "fillGaps": False},
        "variables": {},
    }


def clickhouse_sql(query: str) -> dict[str, Any]:
    return {"type": "clickhouse_sql", "spec": {"name": "A", "disabled": False, "query": query}}


def _window_ns(column: str, start_ns: int, end_ns: int, *, end_inclusive: bool) -> str:
    end_op = "<=" if end_inclusive else "<"
    return (
        f"{column} >= fromUnixTimestamp64Nano(toInt64({start_ns})) "
        f"AND {column} {end_op} fromUnixTimestamp64Nano(toInt64({end_ns}))"
    )


def exception_samples_sql(group_ids: list[str], start_ns: int, end_ns: int) -> str:
    """The latest occurrence of each group in the window, as listErrors saw it (end inclusive)."""
    ids = ", ".join(sql_string(group_id) for group_id in group_ids)
    return f"""SELECT groupID AS group_id, errorID AS error_id,
  toUnixTimestamp64Nano(timestamp) AS timestamp_ns,
  exceptionType AS exception_type, exceptionMessage AS exception_message,
  exceptionStacktrace AS exception_stacktrace, exceptionEscaped AS exception_escaped,
  traceID AS trace_id, spanID AS span_id, serviceName AS service_name,
  resourceTagsMap['service.version'] AS service_version,
  resourceTagsMap['deployment.environment'] AS environment,
  resourceTagsMap['deployment.environment.name'] AS environment_name
FROM signoz_traces.distributed_signoz_error_index_v2
WHERE {_window_ns("timestamp", start_ns, end_ns, end_inclusive=True)}
  AND groupID IN ({ids})
ORDER BY timestamp DESC, errorID DESC
LIMIT 1 BY group_id"""


def _bucket_window(start_ns: int, end_ns: int) -> str:
    """SigNoz's 30-minute `ts_bucket_start` buckets that can hold rows of [start, end)."""
    return f"ts_bucket_start >= {start_ns // NS_PER_S - 1800} AND ts_bucket_start <= {-(-end_ns // NS_PER_S)}"


def error_span_groups_sql(start_ns: int, end_ns: int, limit: int, offset: int) -> str:
    """Error spans WITHOUT exception events (those are in the error index), grouped.

    The window is written as literal nanoseconds: SigNoz renders `{{.start_timestamp_nano}}` and the
    like only from v0.88, and before that ClickHouse would read them as a syntax error."""
    return f"""SELECT serviceName AS service_name, name AS span_name,
  {normalised("status_message")} AS message_pattern,
  count() AS occurrences,
  toUnixTimestamp64Nano(min(timestamp)) AS first_seen_ns,
  toUnixTimestamp64Nano(max(timestamp)) AS last_seen_ns,
  argMax(trace_id, timestamp) AS sample_trace_id,
  argMax(span_id, timestamp) AS sample_span_id,
  argMax(status_message, timestamp) AS sample_status_message,
  argMax(response_status_code, timestamp) AS sample_response_status_code,
  argMax(http_method, timestamp) AS sample_http_method,
  argMax(http_url, timestamp) AS sample_http_url,
  argMax(resources_string['service.version'], timestamp) AS sample_service_version,
  argMax(resources_string['deployment.environment'], timestamp) AS sample_environment
FROM signoz_traces.distributed_signoz_index_v3
WHERE {_window_ns("timestamp", start_ns, end_ns, end_inclusive=False)}
  AND {_bucket_window(start_ns, end_ns)}
  AND has_error = true
  AND NOT arrayExists(event -> JSONExtractString(event, 'name') = 'exception'
      OR endsWith(JSONExtractString(event, 'name'), '.exception'), events)
GROUP BY service_name, span_name, message_pattern
ORDER BY occurrences DESC, service_name ASC, span_name ASC, message_pattern ASC
LIMIT {limit} OFFSET {offset}"""


def error_log_groups_sql(start_ns: int, end_ns: int, limit: int, offset: int) -> str:
    """ERROR-or-worse log records grouped by service, exception type and normalised body (literal
    nanoseconds, as for error spans)."""
    return f"""SELECT resources_string['service.name'] AS service_name,
  attributes_string['exception.type'] AS exception_type,
  {normalised("body")} AS message_pattern,
  count() AS occurrences,
  min(timestamp) AS first_seen_ns,
  max(timestamp) AS last_seen_ns,
  max(severity_number) AS max_severity_number,
  argMax(id, timestamp) AS sample_id,
  argMax(body, timestamp) AS sample_body,
  argMax(severity_text, timestamp) AS sample_severity_text,
  argMax(attributes_string['exception.message'], timestamp) AS sample_exception_message,
  argMax(attributes_string['exception.stacktrace'], timestamp) AS sample_stacktrace,
  argMax(trace_id, timestamp) AS sample_trace_id,
  argMax(span_id, timestamp) AS sample_span_id,
  argMax(resources_string['service.version'], timestamp) AS sample_service_version,
  argMax(resources_string['deployment.environment'], timestamp) AS sample_environment
FROM signoz_logs.distributed_logs_v2
WHERE timestamp >= {start_ns} AND timestamp < {end_ns}
  AND {_bucket_window(start_ns, end_ns)}
  AND {error_severity_sql()}
GROUP BY service_name, exception_type, message_pattern
ORDER BY occurrences DESC, service_name ASC, exception_type ASC, message_pattern ASC
LIMIT {limit} OFFSET {offset}"""


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
