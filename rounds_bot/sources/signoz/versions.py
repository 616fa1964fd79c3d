"""Which SigNoz APIs a version offers, from the version history in the API spec."""

from __future__ import annotations

import re

from pydantic import Field

from rounds_bot.models import Frozen

Version = tuple[int, int, int]

EXCEPTIONS_API_SINCE: Version = (0, 10, 0)
EXCEPTIONS_POST_SINCE: Version = (0, 18, 0)  # listErrors/countErrors: GET with query parameters before
CLICKHOUSE_SQL_VARIABLES_SINCE: Version = (0, 88, 0)  # {{.start_timestamp_nano}} and the like rendered
QUERY_RANGE_V5_SINCE: Version = (0, 87, 0)  # pkg/query-service/app/http_handler.go:484 at v0.87.0
# Before v0.87 the same clickhouse_sql runs through POST /api/v4/query_range with panelType `list`
# (querier/v2/querier.go:548 at v0.60.0 sends it to GetListResultV3, rows as `result[].list`), on a
# query service that reads the tables the SQL names: distributed_signoz_index_v3 from v0.60.0
# (clickhouseReader/options.go:50; distributed_logs_v2 from v0.55.0, options.go:45). /api/v3 is not
# used: its querier ran clickhouse_sql as time series whatever the panel type until v0.69.0
# (querier/querier.go:537 at v0.60.0).
QUERY_RANGE_SQL_SINCE: Version = (0, 60, 0)
# SIGNOZ-API-KEY is read from v0.17.0 (ee/query-service/app/server.go: `r.Header.Get("SIGNOZ-API-KEY")`);
# v0.16.0 has no API keys at all; community builds read the header from v0.85.0
API_KEYS_SINCE: Version = (0, 17, 0)
COMMUNITY_API_KEYS_SINCE: Version = (0, 85, 0)
SINGLE_PORT_SINCE: Version = (0, 76, 0)
PARSED_SPAN_EVENTS_SINCE: Version = (0, 130, 0)
RICH_ERROR_BODY_SINCE: Version = (0, 131, 0)
CLICKHOUSE_ERRORS_BY_CODE_SINCE: Version = (0, 131, 0)  # castError: 400/404/500 by ClickHouse's error code
TRACE_KEY_WARNINGS_SINCE: Version = (0, 134, 0)

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> Version | None:
    """(major, minor, patch) of `v0.138.0` or `0.138.0-cloud.1`; None when it has no number."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    return (int(match[1]), int(match[2]), int(match[3]))


def format_version(version: Version) -> str:
    return "v{}.{}.{}".format(*version)


class Capabilities(Frozen):
    """What a SigNoz instance can answer, decided once from `GET /api/v1/version`."""

    version: str
    exceptions_api: bool
    query_range_v5: bool
    query_range_path: str | None = Field(
        default=None, description="where clickhouse_sql runs: /api/v5/query_range, /api/v4/query_range, none"
    )
    parsed_span_events: bool
    exceptions_method: str = "POST"
    clickhouse_sql_variables: bool = True
    clickhouse_errors_by_code: bool = True
    notes: tuple[str, ...] = ()


def capabilities_of(version_text: str) -> Capabilities:
    """The APIs of a version. An unreadable version (a dev build) is taken as the newest."""
    version = parse_version(version_text)
    notes: list[str] = []
    if version is None:
        notes.append(
            f"SigNoz reported version {version_text!r}, which has no version number; assuming a current build"
        )
        version = (999, 0, 0)
    if version < API_KEYS_SINCE:
        notes.append(
            f"SigNoz {version_text} has no API keys (they arrived in {format_version(API_KEYS_SINCE)}): "
            "SIGNOZ_API_KEY is not used, and rounds can read this SigNoz only while it answers without "
            "authentication"
        )
    if version < QUERY_RANGE_SQL_SINCE:
        notes.append(
            f"SigNoz {version_text} has no query_range rounds can run its SQL on (it needs "
            f"{format_version(QUERY_RANGE_SQL_SINCE)}+): error spans without exception events "
            "and error logs are not read, and exceptions are counted per group, not per minute; "
            "upgrade SigNoz to read them"
        )
    return Capabilities(
        version=version_text,
        exceptions_api=version >= EXCEPTIONS_API_SINCE,
        exceptions_method="POST" if version >= EXCEPTIONS_POST_SINCE else "GET",
        clickhouse_sql_variables=version >= CLICKHOUSE_SQL_VARIABLES_SINCE,
        clickhouse_errors_by_code=version >= CLICKHOUSE_ERRORS_BY_CODE_SINCE,
        query_range_v5=version >= QUERY_RANGE_V5_SINCE,
        query_range_path=query_range_path_of(version),
        parsed_span_events=version >= PARSED_SPAN_EVENTS_SINCE,
        notes=tuple(notes),
    )


QUERY_RANGE_V5 = "/api/v5/query_range"
QUERY_RANGE_V4 = "/api/v4/query_range"


def query_range_path_of(version: Version) -> str | None:
    """The route a version runs rounds' clickhouse_sql on; None before v0.60."""
    if version >= QUERY_RANGE_V5_SINCE:
        return QUERY_RANGE_V5
    if version >= QUERY_RANGE_SQL_SINCE:
        return QUERY_RANGE_V4
    return None
