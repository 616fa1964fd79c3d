"""The rows of SigNoz's tables that repeat an error another row of their trace records, as ClickHouse SQL.

    enclosed_exceptions_sql(start, end)                 the error index's rows of [start, end) others enclose
    status_beside_an_error_sql(start, end, error_logs)  true of an error span whose status is the error beside
    log_beside_an_error_sql(start, end, error_logs)     true of an error log that repeats an exception row

Instrumentation records an error where it happens and again on each span it leaves (Python's
`start_as_current_span`, a Java agent's controller and server spans, a Go service that calls
`span.RecordError(err)` at each layer with the error wrapped). The OTLP reader folds such records before
grouping (`round/propagated.py`); SigNoz counts in ClickHouse, so the same rules are written here as
subqueries its counting queries leave out. Within one trace and one service, an exception row of the error
index is *enclosed* by another row when

- the other's message ends with `": "` and this one's whole message (Go's `%w`, anyhow's `{:#}`);
- the other has this one's type and message, on this one's parent span (the parent read from the spans
  table, `signoz_index_v3.parent_span_id`);
- the other's stack trace names this one's error as its cause: a line that ends with `Type: first line of
  the message`, the type whole (after the line's start, a space, a dot or a tab), or with the error code
  .NET prints between them (`SqlException (0x80131904): ...`): Java's `Caused by:`, a Python chain's,
  .NET's ` ---> `;
- the other is this one recorded again on its span after it went up the stack: after its first line, this
  one's stack trace is how the other's, longer one ends (Python's `record_exception` then `raise` inside
  `start_as_current_span`).

An enclosed row is not counted: only the rows nothing encloses are, the outermost, which carry the most
context. A span's error status without an exception row is not counted either when its trace and service hold
an exception: a row with a type, or an error log of an exception (the Java agent's spans when it records
exceptions as logs, `OTEL_SEMCONV_EXCEPTION_SIGNAL_OPT_IN=logs`); nor a server's or client's
(instrumentation's status for a 5xx, for a call that failed) when they hold any exception row, error log, or
error span of a lower rank (a client's under a server's; any other kind's under both). Nor is an error log of
a trace and service that hold an exception row it repeats: the row's exception, type and message (logged where
it was caught, often on another span than the one that recorded it), compared as `round.same_error.
logged_error` compares them, the type by its last dotted name and the message out of one pair of quotes
(Python's `LoggingHandler` writes `HTTPError` and `c-0` where its span wrote `requests.exceptions.HTTPError`
and a KeyError's `'c-0'`), or the last line of the log's stack trace prints the row's type and message (a
handler that wrote only the exception's first argument as the message); or the row's whole message in one of
its attributes (a middleware's log of every failed request); or a log that wraps a row's message (`checkout
failed: load cart 17: ...`) or names its error as a cause in its stack trace.

What the OTLP reader does and this does not: a log that wraps an exception's message, or names it as a cause,
is left out and the exception counted (the OTLP reader counts the log, the wrapper: the same count, another
signature), and so is a span's error status whose description wraps the exception's message (Go's
`span.SetStatus(codes.Error, err.Error())` on the span above the one that recorded it); a log's type is read
only from its `exception.type` (the OTLP reader also reads a type from a JSON body or a logged stack trace),
so an internal span's status beside such a log is counted; cycles of malformed parents (spans given as each
other's parents) leave both rows out. Only traces of at most `MAX_TRACE_ROWS` exception rows near the window
are compared (a batch job's trace of thousands would make the comparison quadratic): the others are counted
row by row. Rows are looked for `TRACE_REACH_NS` before and after the window: an error recorded again more
than that later (a request still running) is counted twice, and a row whose encloser arrives after a round
read it stays counted (a minute's count is only ever raised, `counting.py`)."""

from __future__ import annotations

from rounds_bot.grouping.stacktrace.dotnet import ERROR_CODE
from rounds_bot.sources.signoz.sql_time import MAX_SPAN_NS, bucket_window, window_ns
from rounds_bot.sources.signoz.times import NS_PER_S

ERROR_INDEX = "signoz_traces.distributed_signoz_error_index_v2"
SPANS = "signoz_traces.distributed_signoz_index_v3"
LOGS = "signoz_logs.distributed_logs_v2"
#: how far before and after the window the other rows of its traces are looked for
TRACE_REACH_NS = 300 * NS_PER_S
#: the most exception rows near the window a trace may hold to be compared
MAX_TRACE_ROWS = 200
#: OpenTelemetry's span kinds as SigNoz stores them (`kind`, the OTLP enum)
SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5
#: the error code .NET prints after an exception's type (`dotnet.ERROR_CODE`) at the end of a text, as a
#: ClickHouse string literal (RE2 reads the pattern as Python's `re` does): its braces and `$` written as
#: escapes, as `queries.sql_string` writes them, which SigNoz's variable and template rendering leaves alone
_ERROR_CODE_AT_END = (
    "'"
    + (
        (ERROR_CODE + "$")
        .replace("\\", "\\\\")
        .replace("{", "\\x7B")
        .replace("}", "\\x7D")
        .replace("$", "\\x24")
    )
    + "'"
)


def enclosed_exceptions_sql(
    start_ns: int, end_ns: int, *, end_inclusive: bool = False, reach_ns: int = TRACE_REACH_NS
) -> str:
    """The `errorID`s of the error index's rows in [start, end) (or [start, end]) that another row of their
    trace and service, within `reach_ns` of the window, encloses."""
    low, high = start_ns - reach_ns, end_ns + reach_ns
    several = _traces_of_several(low, high)
    return f"""SELECT inner_row.error_id FROM (
    SELECT error_row.errorID AS error_id, error_row.traceID AS trace_id, error_row.spanID AS span_id,
      error_row.serviceName AS service_name, error_row.exceptionType AS error_type,
      error_row.exceptionMessage AS message, error_row.exceptionStacktrace AS stacktrace,
      span_row.parent_span_id AS parent_span_id
    FROM {ERROR_INDEX} AS error_row
    LEFT JOIN ({_parents(start_ns, end_ns, several)}) AS span_row
      ON error_row.traceID = span_row.trace_id AND error_row.spanID = span_row.span_id
    WHERE {window_ns("error_row.timestamp", start_ns, end_ns, end_inclusive=end_inclusive)}
  ) AS inner_row
  INNER JOIN (
    SELECT errorID AS error_id, traceID AS trace_id, spanID AS span_id, serviceName AS service_name,
      exceptionType AS error_type, exceptionMessage AS message, exceptionStacktrace AS stacktrace
    FROM {ERROR_INDEX}
    WHERE {window_ns("timestamp", low, high, end_inclusive=True)} AND traceID IN ({several})
  ) AS outer_row
  ON inner_row.trace_id = outer_row.trace_id AND inner_row.service_name = outer_row.service_name
  WHERE outer_row.error_id != inner_row.error_id
    AND ({_wraps()} OR {_on_parent()} OR {_names_as_cause()} OR {_regrown()})"""


def status_beside_an_error_sql(start_ns: int, end_ns: int, error_logs: str) -> str:
    """True of a row of the spans table (an error span without an exception row, the window's [start, end))
    whose status is the error beside it, `round.propagated`'s ranks: an internal span's (any other kind's)
    beside an exception (a row of the error index, or an error log of an exception: `error_logs` is the
    severity rule); a client's or producer's beside those, any error log or an internal span's error; a
    server's or consumer's beside any of those or a client's error."""
    low, high = start_ns - TRACE_REACH_NS, end_ns + MAX_SPAN_NS
    span_low = start_ns - MAX_SPAN_NS

    def exceptions(condition: str) -> str:
        """The trace and service of each row of the error index near the window that meets `condition`."""
        return f"""SELECT traceID, serviceName FROM {ERROR_INDEX}
      WHERE {window_ns("timestamp", low, high, end_inclusive=False)} AND traceID != '' AND {condition}"""

    def error_spans(kinds: str) -> str:
        """The trace and service of each error span of `kinds` (a condition on `kind`) near the window."""
        return f"""SELECT trace_id, serviceName FROM {SPANS}
      WHERE {window_ns("timestamp", span_low, high, end_inclusive=False)}
        AND {bucket_window(span_low, high)} AND has_error = true AND trace_id != '' AND {kinds}"""

    def logs(condition: str) -> str:
        """The trace and service of each error log near the window that meets `condition`."""
        return f"""SELECT trace_id, resources_string['service.name'] FROM {LOGS}
      WHERE timestamp >= {low} AND timestamp < {high} AND {bucket_window(low, high)}
        AND trace_id != '' AND {error_logs} AND {condition}"""

    calls, answers = f"{CLIENT}, {PRODUCER}", f"{SERVER}, {CONSUMER}"
    return f"""(
      (trace_id, serviceName) IN ({exceptions("exceptionType != ''")})
      OR (trace_id, serviceName) IN ({logs("attributes_string['exception.type'] != ''")})
      OR (kind IN ({calls}, {answers}) AND (
        (trace_id, serviceName) IN ({exceptions("1")})
        OR (trace_id, serviceName) IN ({logs("1")})
        OR (trace_id, serviceName) IN ({error_spans(f"kind NOT IN ({calls}, {answers})")})
        OR (kind IN ({answers}) AND (trace_id, serviceName) IN ({error_spans(f"kind IN ({calls})")})))))"""


def log_beside_an_error_sql(start_ns: int, end_ns: int, error_logs: str) -> str:
    """True of a row of the logs table (an error log of [start, end), `error_logs` its severity rule) that
    repeats an exception row of its trace and service: its exception, type and message (the line logged where
    the error was caught), or the row's whole message in an attribute (`slog.Error("failed", "err", err)`).
    Types and messages are compared as `logged_error_sql` reads them.

    The attribute rule reads each attribute as a row (`arrayJoin`), not with `IN` inside a lambda: ClickHouse
    evaluates such an `IN` to 0 in a derived table or a `WHERE` (ClickHouse issue 114581, 26.8)."""
    window = window_ns("timestamp", start_ns - TRACE_REACH_NS, end_ns + TRACE_REACH_NS, end_inclusive=True)
    service = "resources_string['service.name']"
    recorded = logged_error_sql("exceptionType", "exceptionMessage")
    exceptions = f"""SELECT toString(traceID), serviceName, {recorded} FROM {ERROR_INDEX}
      WHERE {window} AND traceID != '' AND exceptionType != ''"""
    messages = f"""SELECT toString(traceID), serviceName, exceptionMessage FROM {ERROR_INDEX}
      WHERE {window} AND traceID != '' AND trimBoth(exceptionMessage) != ''"""
    attributes = f"""SELECT id, trace_id, {service} AS service,
        arrayJoin(mapValues(attributes_string)) AS value
      FROM {LOGS}
      WHERE timestamp >= {start_ns} AND timestamp < {end_ns} AND {bucket_window(start_ns, end_ns)}
        AND trace_id != '' AND {error_logs}"""
    holding = f"SELECT id FROM ({attributes}) WHERE (trace_id, service, value) IN ({messages})"
    # the log's message as `error_logs.py` reads it: its exception's, else its body
    message = "if(attributes_string['exception.message'] != '', attributes_string['exception.message'], body)"
    logged = logged_error_sql("attributes_string['exception.type']", message)
    return f"""(trace_id != '' AND (
      (attributes_string['exception.type'] != ''
        AND ((trace_id, {service}, {logged}) IN ({exceptions})
          OR (trace_id, {service}, {_last_line_error()}) IN ({exceptions})))
      OR id IN ({holding})
      OR id IN ({_logs_enclosing(start_ns, end_ns, error_logs, window, message)})))"""


def _logs_enclosing(start_ns: int, end_ns: int, error_logs: str, window: str, message: str) -> str:
    """The ids of the error logs of [start, end) that wrap an exception row's message (`checkout failed:
    load cart 17: sql: no rows in result set`) or name its error as a cause in their stack trace, the rules of
    `enclosed_exceptions_sql` with the log as the outer row. The OTLP reader counts the log and not the row;
    here the log is left out and the row counted: the same count, without reading the logs table in the
    exceptions' query."""
    logs = f"""SELECT id, trace_id, resources_string['service.name'] AS service_name,
        attributes_string['exception.type'] AS error_type, {message} AS message,
        attributes_string['exception.stacktrace'] AS stacktrace
      FROM {LOGS}
      WHERE timestamp >= {start_ns} AND timestamp < {end_ns} AND {bucket_window(start_ns, end_ns)}
        AND trace_id != '' AND {error_logs}"""
    rows = f"""SELECT toString(traceID) AS trace_id, serviceName AS service_name, exceptionType AS error_type,
        exceptionMessage AS message
      FROM {ERROR_INDEX} WHERE {window} AND traceID != ''"""
    return f"""SELECT outer_row.id FROM ({logs}) AS outer_row
      INNER JOIN ({rows}) AS inner_row
      ON outer_row.trace_id = inner_row.trace_id AND outer_row.service_name = inner_row.service_name
      WHERE {_wraps()} OR {_names_as_cause()}"""


def _last_line_error() -> str:
    """The type and message the last line of a log's stack trace prints, as `logged_error_sql` reads them
    (`round.same_error.last_line_error`: a handler that wrote only the exception's first argument as the
    log's message, or none, where the span recorded `str(e)`); a line whose type would hold a space gives an
    empty type, which no row has."""
    trace = "replaceRegexpOne(attributes_string['exception.stacktrace'], '\\\\s+$', '')"
    last = f"splitByChar('\\n', {trace})[-1]"
    at = f"position({last}, ': ')"
    error_type = f"if({at} > 0, substring({last}, 1, {at} - 1), {last})"
    message = f"if({at} > 0, substring({last}, {at} + 2), '')"
    return logged_error_sql(f"if(position({error_type}, ' ') > 0, '', {error_type})", message)


def logged_error_sql(error_type: str, message: str) -> str:
    """`round.same_error.logged_error` in SQL: the type's last dotted name and the message out of one pair of
    quotes, two columns, of the SQL expressions `error_type` and `message` (quotes are one byte each, so
    `substring`'s bytes are characters here)."""
    first, last = f"substring({message}, 1, 1)", f"substring({message}, length({message}), 1)"
    unquoted = (
        f"if(length({message}) >= 2 AND {first} IN ('\\'', '\"') AND {last} = {first}, "
        f"substring({message}, 2, length({message}) - 2), {message})"
    )
    return f"splitByChar('.', {error_type})[-1], {unquoted}"


def _traces_of_several(low: int, high: int) -> str:
    """The traces with two exception rows or more (at most `MAX_TRACE_ROWS`) in [low, high]."""
    return f"""SELECT traceID FROM {ERROR_INDEX}
      WHERE {window_ns("timestamp", low, high, end_inclusive=True)} AND traceID != ''
      GROUP BY traceID HAVING count() BETWEEN 2 AND {MAX_TRACE_ROWS}"""


def _parents(start_ns: int, end_ns: int, several: str) -> str:
    """Each span's parent, of the spans of `several` traces that may hold the window's exception events: a
    span starts at most MAX_SPAN_NS before its events."""
    low = start_ns - MAX_SPAN_NS
    return f"""SELECT trace_id, span_id, any(parent_span_id) AS parent_span_id FROM {SPANS}
      WHERE {window_ns("timestamp", low, end_ns, end_inclusive=True)} AND {bucket_window(low, end_ns)}
        AND trace_id IN ({several})
      GROUP BY trace_id, span_id"""


def _wraps() -> str:
    """The outer row's message is `context: ` and the inner row's whole message (not blank)."""
    return (
        "(trimBoth(inner_row.message) != '' AND endsWith(outer_row.message, concat(': ', inner_row.message)))"
    )


def _on_parent() -> str:
    """The outer row is the inner's error (type and message) recorded again on the inner's parent span."""
    return (
        "(inner_row.parent_span_id != '' AND outer_row.span_id = inner_row.parent_span_id "
        "AND outer_row.span_id != inner_row.span_id AND outer_row.error_type = inner_row.error_type "
        "AND outer_row.message = inner_row.message)"
    )


def _regrown() -> str:
    """The outer row is the inner's error recorded again on its span after it went up the stack: after its
    first line, the inner's stack trace is how the outer's, longer one ends (`round.same_error.grows`)."""
    rest = "substring(inner_row.stacktrace, position(inner_row.stacktrace, '\\n') + 1)"
    return (
        "(outer_row.span_id = inner_row.span_id AND outer_row.error_type = inner_row.error_type "
        "AND outer_row.message = inner_row.message AND position(inner_row.stacktrace, '\\n') > 0 "
        f"AND trimBoth({rest}) != '' AND length(outer_row.stacktrace) > length(inner_row.stacktrace) "
        f"AND endsWith(outer_row.stacktrace, {rest}))"
    )


def _names_as_cause() -> str:
    """A line of the outer row's stack trace ends with the inner's `Type: first line of the message`, the
    type whole, or with the error code .NET prints between them (`SqlException (0x80131904): ...`): the
    head of a line that ends with `: message`, without such a code at its end, ends with the type, after
    its start, a space, a dot or a tab (`round.same_error.names_as_cause`); the inner's type and message are
    not the outer's own (a retry names its own error)."""
    ending = "concat(': ', splitByChar('\\n', inner_row.message)[1])"
    lines = "splitByChar('\\n', replaceAll(outer_row.stacktrace, '\\r', ''))"
    heads = (
        f"arrayMap(line -> replaceRegexpOne(substring(line, 1, length(line) - length({ending})), "
        f"{_ERROR_CODE_AT_END}, ''), arrayFilter(line -> endsWith(line, {ending}), {lines}))"
    )
    whole_type = (
        "head -> endsWith(head, inner_row.error_type) AND (length(head) = length(inner_row.error_type) "
        "OR substring(head, length(head) - length(inner_row.error_type), 1) IN (' ', '.', '\\t'))"
    )
    return (
        "(inner_row.error_type != '' "
        "AND (outer_row.error_type != inner_row.error_type OR outer_row.message != inner_row.message) "
        f"AND arrayExists({whole_type}, {heads}))"
    )
