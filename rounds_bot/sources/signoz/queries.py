"""The requests rounds sends to `/api/v5/query_range`: builder queries and ClickHouse SQL.

Aggregation is pushed into SigNoz: where the key may run `clickhouse_sql`, error spans and error logs are
grouped inside ClickHouse (one row per group with counts and one sample), and exception groups get their
representative occurrence in batches. Where it may not, builder `raw` queries page through individual rows
(`builder_queries.py`)."""

from __future__ import annotations

from typing import Any

from rounds_bot.sources.signoz.enclosed import (
    enclosed_exceptions_sql,
    log_beside_an_error_sql,
    status_beside_an_error_sql,
)
from rounds_bot.sources.signoz.placed_exceptions import placed_exception_rows_sql
from rounds_bot.sources.signoz.sql_time import MAX_SPAN_NS, bucket_window, window_ns
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


# SigNoz rewrites a clickhouse_sql query before ClickHouse sees it: it replaces `{{name}}`, `[[name]]` and
# `$name` for each of its variables, then (from v0.88) renders the whole text as a Go text/template
# (pkg/querier/clickhouse_query.go). Text inside a literal must survive both, so the characters that
# start those spellings are written as ClickHouse `\xHH` escapes, which ClickHouse reads back as they were.
_TEMPLATE_SAFE = str.maketrans({"{": "\\x7B", "}": "\\x7D", "[": "\\x5B", "]": "\\x5D", "$": "\\x24"})


def sql_string(text: str) -> str:
    """A ClickHouse string literal that SigNoz's variable and template rendering leaves as it is."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return "'" + escaped.translate(_TEMPLATE_SAFE) + "'"


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


def exception_samples_sql(group_ids: list[str], start_ns: int, end_ns: int) -> str:
    """The first occurrence of each group in the window (end inclusive): the one a file of the same
    telemetry shows first, so the signature it founds is the same. Not one another row of its trace encloses
    (`enclosed.py`), as the counts leave those out: its encloser looked for within the window alone, which
    is a batch's stretch of first occurrences (an encloser is recorded a moment after what it encloses)."""
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
WHERE {window_ns("timestamp", start_ns, end_ns, end_inclusive=True)}
  AND groupID IN ({ids})
  AND errorID NOT IN ({enclosed_exceptions_sql(start_ns, end_ns, end_inclusive=True, reach_ns=0)})
ORDER BY timestamp ASC, errorID ASC
LIMIT 1 BY group_id"""


# Occurrences are counted per group and per minute, so a group's count keeps where it happened: first
# and last seen, the trend chart and triage's "N within 5 minutes" see the real spread, and a minute
# re-read later counts only the rows it did not hold before (`counting.py`).
BUCKET_SECONDS = 60
BUCKET_NS = BUCKET_SECONDS * NS_PER_S


# A group's occurrences are its distinct records, not its rows. The collector's exporters retry a batch whole
# (exporterhelper.WithRetry, signoz-otel-collector exporter/clickhousetracesexporter/factory.go; the logs
# exporter likewise) and write spans, the error index and resources separately (clickhousetracesexporter
# writer.go), so a batch retried after a partial write is written again, and MergeTree keeps both copies.
# The copies are equal but for the ids the exporter makes as it writes: an exception row's errorID
# (uuid.New() in populateEventsV3) and a log's id (a fresh KSUID). What each identity names is what a copy
# shares and two real records never do:
# - an error span: its trace and span ids;
# - an exception row: its span, its event's time (ns), type and message. Its stack trace is left out (equal in
#   a copy, and two events of one span at the same nanosecond with the same type and message are one record
#   here), and so is the event's index on the span, which the table does not keep;
# - a log record: its time (ns), trace and span ids, resource (fingerprint), severity, message and string
#   attributes. Not its observed time: the exporter makes one (time.Now()) for a record without it, again on
#   each attempt. A record without a time of its own takes that one too, so its copies stay apart.
SPAN_IDENTITY = "uniqExact(trace_id, span_id)"
EXCEPTION_IDENTITY = "uniqExact(traceID, spanID, timestamp, exceptionType, exceptionMessage)"
LOG_IDENTITY = (
    "uniqExact(timestamp, trace_id, span_id, resource_fingerprint, severity_number, cityHash64({message}), "
    "cityHash64(attributes_string))"
)


def _bucketed(inner: str, keys: str, samples: str, order: str, limit: int, offset: int) -> str:
    """One row per group over `inner` (one row per group, minute and environment, with `n`,
    `first_ns`, `last_ns` and sample columns): the count, first and last seen, and every minute as
    `start:count:first:last:hex(environment)` joined by commas (a string, read alike by every SigNoz
    version)."""
    return f"""SELECT {keys},
  sum(n) AS occurrences,
  min(first_ns) AS first_seen_ns,
  max(last_ns) AS last_seen_ns,
  arrayStringConcat(groupArray(concat(toString(bucket), ':', toString(n), ':', toString(first_ns), ':',
    toString(last_ns), ':', hex(environment))), ',') AS buckets{samples}
FROM ({inner})
GROUP BY {keys}
ORDER BY {order}
LIMIT {limit} OFFSET {offset}"""


def finite_numbers(column: str) -> str:
    """A number map without its NaN and infinite values. The logs exporter stores a double attribute as it
    is (signoz-otel-collector exporter/clickhouselogsexporter/exporter.go attributesToMap), as the traces
    exporter did before v0.111.14, and SigNoz renders a v5 answer with jsoniter's standard-library
    configuration, which refuses NaN and infinities (pkg/http/render/render.go): one such value in an
    answer fails it with a 500, round after round. Every number map of telemetry that reaches a result is
    read through this (array functions: not every ClickHouse build has `mapFilter`)."""
    return (
        f"CAST((arrayFilter((k, v) -> isFinite(v), mapKeys({column}), mapValues({column})), "
        f"arrayFilter(v -> isFinite(v), mapValues({column}))), 'Map(String, Float64)')"
    )


def sample_value(name: str) -> str:
    """What a sample column reads of the row: the column itself, a number map without non-finite values."""
    return finite_numbers(name) if name == "attributes_number" else name


def _sample_columns(names: tuple[str, ...]) -> str:
    """`argMin(s_x, first_ns) AS sample_x` for each name: the first minute's sample. The group's first
    occurrence stands for it, as it does when a file of the same telemetry is read in time order."""
    return "".join(f",\n  argMin(s_{name}, first_ns) AS sample_{name}" for name in names)


# How a span's `events` column marks an event the collector also wrote to the error index:
# populateEventsV3 (signoz-otel-collector exporter/clickhousetracesexporter/clickhouse_exporter_v3.go) sets
# `IsError` on exactly the events it makes error rows of (tracesschema.IsExceptionEvent) and stores each
# event as compact JSON (`json:"isError,omitempty"`). An attribute's value is a string, so `"isError":true`
# is only ever the flag.
INDEXED_EVENT = '"isError":true'

SPAN_SAMPLES = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "kind_string",
    "status_message",
    "http_method",
    "http_url",
    "attributes_string",
    "attributes_number",
    "attributes_bool",
    "resources_string",
)


def error_span_groups_sql(start_ns: int, end_ns: int, limit: int, offset: int) -> str:
    """Error spans without an exception the collector indexed, grouped by service, name, error type,
    response code and normalised message, with their minutes.

    SigNoz stores a span at its start (`timestamp`, ts_bucket_start of the start: signoz-otel-collector
    exporter/clickhousetracesexporter/clickhouse_exporter_v3.go), but the collector receives it when it
    ends. So the window and the minutes are of ends (`timestamp + duration_nano`): a failing span that ran
    longer than the overlap arrives near the cursor, in a minute a round re-reads (`counting.py`), however
    long ago it started; its start is looked for up to MAX_SPAN_NS before the window (a longer span is not
    read). A minute re-read holds the same spans, and first and last seen are of ends, when the error
    happened, as the OTLP reader has them.

    A span whose exception event the collector indexed is counted by the exception groups; which
    events it indexes depends on the collector's version (only `exception` before v0.144.3, also
    `*.exception` since), so the rule asks the collector's own mark instead of naming events: an event
    flagged `isError` in the span's row (INDEXED_EVENT), which the collector sets on exactly the events it
    writes error rows of. The span's own row is asked, not the error index: the collector writes the span
    and its exception rows in parallel (signoz-otel-collector exporter/clickhousetracesexporter/writer.go
    WriteBatchOfSpansV3), and a round between the two writes would otherwise count the span's bare status,
    and the exception row later: one error, two issues (and the error index need not be searched for the
    hour before the window a long span may have started in). A server's
    or client's status beside an error of its trace is that error's (`enclosed.py`), not counted here. The
    window is written as literal nanoseconds: SigNoz renders `{{.start_timestamp_nano}}` and the
    like only from v0.88, and before that ClickHouse would read them as a syntax error."""
    low = start_ns - MAX_SPAN_NS
    ends = "toUnixTimestamp64Nano(timestamp) + duration_nano"
    window = f"{ends} >= {start_ns} AND {ends} < {end_ns}"
    samples = ",\n    ".join(f"argMin({sample_value(name)}, timestamp) AS s_{name}" for name in SPAN_SAMPLES)
    inner = f"""SELECT serviceName AS service_name, name AS span_name,
    {normalised("status_message")} AS message_pattern,
    attributes_string['error.type'] AS error_type,
    response_status_code AS response_code,
    intDiv({ends}, {BUCKET_NS}) * {BUCKET_SECONDS} AS bucket,
    {environment_sql("resources_string")} AS environment,
    {SPAN_IDENTITY} AS n,
    min(toUnixTimestamp64Nano(timestamp) + duration_nano) AS first_ns,
    max(toUnixTimestamp64Nano(timestamp) + duration_nano) AS last_ns,
    {samples}
  FROM signoz_traces.distributed_signoz_index_v3
  WHERE {window_ns("timestamp", low, end_ns, end_inclusive=False)}
    AND {bucket_window(low, end_ns)}
    AND has_error = true
    AND {window}
    AND NOT arrayExists(event -> position(event, {sql_string(INDEXED_EVENT)}) > 0, events)
    AND NOT {status_beside_an_error_sql(start_ns, end_ns, error_severity_sql())}
  GROUP BY service_name, span_name, message_pattern, error_type, response_code, bucket, environment"""
    keys = "service_name, span_name, message_pattern, error_type, response_code"
    order = (
        "occurrences DESC, service_name ASC, span_name ASC, message_pattern ASC, error_type ASC, "
        "response_code ASC"
    )
    return _bucketed(inner, keys, _sample_columns(SPAN_SAMPLES), order, limit, offset)


LOG_SAMPLES = (
    "id",
    "body",
    "severity_text",
    "trace_id",
    "span_id",
    "attributes_string",
    "attributes_number",
    "attributes_bool",
    "resources_string",
)


def error_log_groups_sql(
    start_ns: int, end_ns: int, limit: int, offset: int, *, json_bodies: bool = True
) -> str:
    """ERROR-or-worse log records grouped by service, exception type, error code and normalised
    message, with their minutes (literal nanoseconds, as for error spans); a log that repeats an exception
    row of its trace is that row's (`enclosed.py`), not counted here. `json_bodies`: the logs
    table has `body_v2` (collector schema migration 2001), where installs that keep bodies as JSON
    put them."""
    message = log_message_sql(json_bodies=json_bodies)
    samples = ",\n    ".join(f"argMin({sample_value(name)}, timestamp) AS s_{name}" for name in LOG_SAMPLES)
    inner = f"""SELECT resources_string['service.name'] AS service_name,
    attributes_string['exception.type'] AS exception_type,
    attributes_string['error.code'] AS error_code,
    {normalised(message)} AS message_pattern,
    intDiv(timestamp, {BUCKET_NS}) * {BUCKET_SECONDS} AS bucket,
    {environment_sql("resources_string")} AS environment,
    {LOG_IDENTITY.format(message=message)} AS n,
    min(timestamp) AS first_ns,
    max(timestamp) AS last_ns,
    max(severity_number) AS top_severity,
    argMin({message}, timestamp) AS s_message,
    {samples}
  FROM signoz_logs.distributed_logs_v2
  WHERE timestamp >= {start_ns} AND timestamp < {end_ns}
    AND {bucket_window(start_ns, end_ns)}
    AND {error_severity_sql()}
    AND NOT {log_beside_an_error_sql(start_ns, end_ns, error_severity_sql())}
  GROUP BY service_name, exception_type, error_code, message_pattern, bucket, environment"""
    keys = "service_name, exception_type, error_code, message_pattern"
    order = "occurrences DESC, service_name ASC, exception_type ASC, error_code ASC, message_pattern ASC"
    extra = ",\n  max(top_severity) AS max_severity_number"
    return _bucketed(inner, keys, extra + _sample_columns(("message", *LOG_SAMPLES)), order, limit, offset)


def log_neighbours_sql(
    errors: list[tuple[str, str, int]], window_ns: int, body_chars: int, per_error: int
) -> str:
    """The records below ERROR logged in the `window_ns` up to and including each error (trace id,
    service, nanosecond) in its trace and service, newest first, at most `per_error` each (a record two
    errors share counts for the first that names it), bodies cut to `body_chars` characters."""
    matches = [
        f"(trace_id = {sql_string(trace)} AND resources_string['service.name'] = {sql_string(service)} "
        f"AND timestamp > {moment - window_ns} AND timestamp <= {moment})"
        for trace, service, moment in errors
    ]
    which = "multiIf(" + ", ".join(f"{match}, {index}" for index, match in enumerate(matches)) + ", -1)"
    low = min(moment for _, _, moment in errors) - window_ns
    high = max(moment for _, _, moment in errors)
    return f"""SELECT * FROM (SELECT {which} AS error_index, toInt64(timestamp) AS timestamp_ns,
    severity_text, toInt64(severity_number) AS severity_number,
    substringUTF8(body, 1, {body_chars}) AS body
  FROM signoz_logs.distributed_logs_v2
  WHERE timestamp > {low} AND timestamp <= {high}
    AND {bucket_window(low, high + 1)}
    AND NOT {error_severity_sql()})
WHERE error_index >= 0
ORDER BY error_index ASC, timestamp_ns DESC
LIMIT {per_error} BY error_index"""


def log_message_sql(*, json_bodies: bool = False) -> str:
    """What a log record says, as the OTLP reader takes it: its exception message, else its body. An
    install that keeps bodies as JSON (the collector's `body_json_enabled`) leaves `body` empty and
    writes the body to `body_v2`, whose `message` path is a String (signoz-otel-collector
    exporter/clickhouselogsexporter/exporter.go processBody; schema migration 2001); else the
    `message` attribute a pipeline may have parsed it into."""
    fallback = (
        "if(body_v2.message != '', body_v2.message, attributes_string['message'])"
        if json_bodies
        else ("attributes_string['message']")
    )
    return (
        "if(attributes_string['exception.message'] != '', attributes_string['exception.message'], "
        f"if(body != '', body, {fallback}))"
    )


def environment_sql(resources: str) -> str:
    """`deployment.environment.name` (semantic conventions 1.27+), else the older key."""
    return (
        f"if({resources}['deployment.environment.name'] != '', "
        f"{resources}['deployment.environment.name'], {resources}['deployment.environment'])"
    )


def exception_groups_sql(start_ns: int, end_ns: int, limit: int, offset: int) -> str:
    """Exception groups of the error index (SigNoz's own groupID) with the minutes their rows are placed in
    (`placed_exceptions.py`: a long span's at its end; end exclusive), less the rows another row of their
    trace encloses (`enclosed.py`)."""
    inner = f"""SELECT groupID AS group_id, serviceName AS service_name,
    intDiv(placed_ns, {BUCKET_NS}) * {BUCKET_SECONDS} AS bucket,
    {environment_sql("resourceTagsMap")} AS environment,
    {EXCEPTION_IDENTITY} AS n,
    toUnixTimestamp64Nano(min(timestamp)) AS first_ns,
    toUnixTimestamp64Nano(max(timestamp)) AS last_ns,
    any(exceptionType) AS s_exception_type,
    any(exceptionMessage) AS s_exception_message
  FROM ({placed_exception_rows_sql(start_ns, end_ns)})
  WHERE errorID NOT IN ({enclosed_exceptions_sql(start_ns, end_ns)})
  GROUP BY group_id, service_name, bucket, environment"""
    keys = "group_id, service_name"
    samples = _sample_columns(("exception_type", "exception_message"))
    return _bucketed(inner, keys, samples, "occurrences DESC, group_id ASC", limit, offset)


def span_attributes_sql(spans: list[tuple[str, str]], start_ns: int, end_ns: int) -> str:
    """The attributes, parent span and kind of the spans that carried the sampled exceptions: a span
    starts at most MAX_SPAN_NS before its exception event, in [start - MAX_SPAN_NS, end]."""
    pairs = ", ".join(f"({sql_string(trace)}, {sql_string(span)})" for trace, span in spans)
    low = start_ns - MAX_SPAN_NS
    return f"""SELECT trace_id, span_id, parent_span_id, kind_string, attributes_string,
  {finite_numbers("attributes_number")} AS attributes_number, attributes_bool, resources_string
FROM signoz_traces.distributed_signoz_index_v3
WHERE {window_ns("timestamp", low, end_ns, end_inclusive=True)}
  AND {bucket_window(low, end_ns)}
  AND (trace_id, span_id) IN ({pairs})
LIMIT 1 BY trace_id, span_id"""
