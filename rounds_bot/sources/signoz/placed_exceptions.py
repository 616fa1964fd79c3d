"""Where an exception row of SigNoz's error index is counted: at its event, or at its span's end.

The collector stores an exception row at its event's time (signoz-otel-collector
exporter/clickhousetracesexporter/writer.go writeErrorBatchV3: `time.Unix(0, Event.TimeUnixNano)`) but
writes it with its span, when the span has ended and been exported (WriteBatchOfSpansV3 writes the span and
its error rows together). An exception recorded early in a span that runs longer than the rounds' overlap is
therefore written behind every minute a later round re-reads, and a window of event times never counts it.

So a row is *placed* where SigNoz can first hold it: at its event, or, when its span ran at least
LONG_SPAN_NS, at the later of its event and its span's end (`timestamp + duration_nano` in the spans table,
which the collector writes in the same batch). A round counts the rows placed in its window, in the minute
they are placed in, so a re-read minute holds the same rows and a late one raises its count once
(`counting.py`). Its first and last seen stay the events' times, when the error happened, as the OTLP
reader has them.

Only long spans are looked up: a shorter span's row arrives within a minute of its event, as any row a
pipeline delivers late, and the error index is read by event time as before. Rows before the window are read
only back to the earliest start of a long span that ends in it (a scalar subquery ClickHouse folds into a
constant before it prunes by the error index's primary key, `timestamp`), so a round without such a span reads
no exception row a second time.
"""

from __future__ import annotations

from rounds_bot.sources.signoz.sql_time import MAX_SPAN_NS, bucket_window, window_ns
from rounds_bot.sources.signoz.times import NS_PER_S

ERROR_INDEX = "signoz_traces.distributed_signoz_error_index_v2"
SPANS = "signoz_traces.distributed_signoz_index_v3"
#: a span this long may end in a later minute than its exception's: its rows are placed at its end
LONG_SPAN_NS = 60 * NS_PER_S
# How a span's `events` column marks an event the collector also wrote to the error index (`queries.
# INDEXED_EVENT`: populateEventsV3 sets `isError` on exactly those events).
_INDEXED_EVENT = "'\"isError\":true'"
_ROW_NS = "toUnixTimestamp64Nano(error_row.timestamp)"


def long_spans_sql(start_ns: int, end_ns: int) -> str:
    """The spans of at least LONG_SPAN_NS that carry an indexed exception and end at or after `start_ns`,
    started up to MAX_SPAN_NS before it (a longer span's rows are placed at their events), with their ends.
    A retried batch writes a span twice: one row each."""
    low = start_ns - MAX_SPAN_NS
    return f"""SELECT trace_id, span_id, max(toUnixTimestamp64Nano(timestamp) + duration_nano) AS end_ns,
      min(toUnixTimestamp64Nano(timestamp)) AS start_ns
    FROM {SPANS}
    WHERE {window_ns("timestamp", low, end_ns, end_inclusive=False)}
      AND {bucket_window(low, end_ns)}
      AND duration_nano >= {LONG_SPAN_NS}
      AND toUnixTimestamp64Nano(timestamp) + duration_nano >= {start_ns}
      AND arrayExists(event -> position(event, {_INDEXED_EVENT}) > 0, events)
    GROUP BY trace_id, span_id"""


def placed_exception_rows_sql(start_ns: int, end_ns: int) -> str:
    """The error index's rows placed in [start, end), with their columns and `placed_ns`."""
    spans = long_spans_sql(start_ns, end_ns)
    # the rows of a long span that ends in the window may be older than it: read back to its start
    low = f"least({start_ns}, (SELECT ifNull(minOrNull(start_ns), {start_ns}) FROM ({spans})))"
    placed = f"if(long_span.end_ns > 0, greatest({_ROW_NS}, long_span.end_ns), {_ROW_NS})"
    return f"""SELECT * FROM (
    SELECT error_row.errorID AS errorID, error_row.groupID AS groupID, error_row.serviceName AS serviceName,
      error_row.timestamp AS timestamp, error_row.traceID AS traceID, error_row.spanID AS spanID,
      error_row.exceptionType AS exceptionType, error_row.exceptionMessage AS exceptionMessage,
      error_row.resourceTagsMap AS resourceTagsMap, {placed} AS placed_ns
    FROM {ERROR_INDEX} AS error_row
    LEFT JOIN ({spans}) AS long_span
      ON error_row.traceID = long_span.trace_id AND error_row.spanID = long_span.span_id
    WHERE error_row.timestamp >= fromUnixTimestamp64Nano(toInt64({low}))
      AND error_row.timestamp < fromUnixTimestamp64Nano(toInt64({end_ns}))
  )
  WHERE placed_ns >= {start_ns} AND placed_ns < {end_ns}"""
