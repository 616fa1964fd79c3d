"""The time predicates of rounds' ClickHouse queries, and how far from its window a query looks.

    window_ns("timestamp", start, end, end_inclusive=False)   a DateTime64(9) column within [start, end)
    bucket_window(start, end)                                  SigNoz's 30-minute span buckets that hold it

Windows are written as literal nanoseconds: SigNoz renders `{{.start_timestamp_nano}}` and the like only from
v0.88, and before that ClickHouse would read them as a syntax error.
"""

from __future__ import annotations

from rounds_bot.sources.signoz.times import NS_PER_S

# A span is stored at its start; its exception event happens up to its duration later. The error
# index is searched this much past the window for the events of the window's spans.
MAX_SPAN_NS = 3600 * NS_PER_S


def window_ns(column: str, start_ns: int, end_ns: int, *, end_inclusive: bool) -> str:
    end_op = "<=" if end_inclusive else "<"
    return (
        f"{column} >= fromUnixTimestamp64Nano(toInt64({start_ns})) "
        f"AND {column} {end_op} fromUnixTimestamp64Nano(toInt64({end_ns}))"
    )


def bucket_window(start_ns: int, end_ns: int) -> str:
    """SigNoz's 30-minute `ts_bucket_start` buckets that can hold rows of [start, end)."""
    return f"ts_bucket_start >= {start_ns // NS_PER_S - 1800} AND ts_bucket_start <= {-(-end_ns // NS_PER_S)}"
