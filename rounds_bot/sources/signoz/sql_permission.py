"""Whether the poll's API key may run `clickhouse_sql` queries, shared by every stream's reader.

Each reader tries ClickHouse SQL first, where the route runs it, and falls back to SigNoz's own list
APIs on a 403; the first refusal turns SQL off for the rest of the poll, so one refused key costs one
request, not one per stream.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SqlPermission:
    """Whether this poll may use clickhouse_sql; the first 403 turns it off for the poll."""

    allowed: bool = True


REFUSED_SQL_NOTE = (
    "the SigNoz API key may not run clickhouse_sql queries (403); rounds read {what} "
    "without them: {consequence}. Grant the key's role clickhouse_sql to aggregate inside SigNoz"
)
