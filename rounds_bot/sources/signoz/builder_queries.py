"""The builder `raw` queries rounds sends to `/api/v5/query_range` where the key may not run
`clickhouse_sql`: error spans and error log records one by one, newest first, for the reader to group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rounds_bot.grouping.log_template import TEMPLATE_ATTRIBUTES
from rounds_bot.grouping.logged_traces import TRACE_ATTRIBUTES
from rounds_bot.settings.error_codes import DEFAULT_ERROR_CODE_ATTRIBUTES
from rounds_bot.sources.signoz.queries import error_severity_filter


def filter_string(text: str) -> str:
    """`text` as a string of a v5 filter expression, read back as `text` by every SigNoz with the v5 API
    when it can be.

    SigNoz's filter grammar reads `"..."` and `'...'`, in which a backslash takes the next character with it
    (grammar/FilterQuery.g4 QUOTED_TEXT); pkg/querybuilder/where_clause_visitor.go trimQuotes then drops
    the quotes and binds the rest as a query argument, from v0.91.0 after unescaping `\\\\` and `\\'`
    (v0.87.0-v0.90.1 unescape nothing). So a text without `\\\\` or `\\'`, not ending in a backslash, reads
    back verbatim on every version inside a quote it lacks (single, else double: `o'brien\\shop`).
    Any other text is escaped, which only v0.91.0+ reads back: before it a name holding both quotes, a
    `\\\\`, a `\\'` or a trailing backslash is not findable. rounds does not learn the version at a
    look-up, so it picks the form every version reads whenever there is one.

    Not a ClickHouse literal: its `\\n` or `queries.sql_string`'s template-safe `\\x24` would be searched for
    as written, and a service named `${OTEL_SERVICE_NAME}` never found. A filter expression is not rendered
    as a template, and `$name` inside quotes names no variable unless the request defines one (rounds
    defines none)."""
    if "\\\\" not in text and "\\'" not in text and not text.endswith("\\"):
        if "'" not in text:
            return f"'{text}'"
        if '"' not in text:
            return f'"{text}"'
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


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


# The order rounds pages raw rows in by offset. ClickHouse returns rows tied on a query's ORDER BY "in an
# arbitrary and non-deterministic order" (ClickHouse docs, ORDER BY Clause), a new one for each page's query:
# with `timestamp` alone, spans sharing a timestamp across a page boundary came on two pages or on none (lost,
# counted nowhere). So each order ends in what tells two rows apart. A span: its trace and span ids (a
# collector's retried copy shares both and is the same record, `queries.SPAN_IDENTITY`). SigNoz orders a raw
# trace list by any key it can map (telemetrytraces statement_builder.go buildListQuery: "`name` direction"
# in v0.87, the field mapper's ColumnExpressionFor from v0.88, both columns of signoz_index_v3 there), checks
# no raw order key against the aggregations (querybuildertypesv5 validation.go), and with `timestamp` first
# still pages the list window by window (pkg/querier/builder_query.go isWindowList). A log record: the id its
# exporter gives it; SigNoz's window paging of logs asks for exactly `timestamp, id` in one direction. Rows
# written late (the collector batches) only push the rows after them down: read twice, counted once.
ERROR_SPAN_ORDER = ("timestamp", "trace_id", "span_id")
ERROR_LOG_ORDER = ("timestamp", "id")


def _newest_first(keys: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"key": {"name": key}, "direction": "desc"} for key in keys]


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
            "order": _newest_first(ERROR_SPAN_ORDER),
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
            "order": _newest_first(ERROR_LOG_ORDER),
            "limit": limit,
            "offset": offset,
        },
    }


def _log_field(name: str, context: str, data_type: str = "") -> dict[str, str]:
    field = {"name": name, "fieldContext": context, "signal": "logs"}
    if data_type:
        field["fieldDataType"] = data_type
    return field


# What rounds reads of a log record, named one by one for a record SigNoz cannot answer whole (a NaN or
# infinite number in its attributes: `row_pages`). An attribute named with its context and type is read
# from that type's map whether or not SigNoz has seen the key (logstelemetryschema/field_mapper.go getColumn,
# FieldFor), so naming one no record has costs nothing. SigNoz selects `timestamp` and `id` itself.
NAMED_LOG_COLUMNS = ("trace_id", "span_id", "severity_text", "severity_number", "body")
NAMED_LOG_RESOURCES = (
    "service.name",
    "service.version",
    "deployment.environment",
    "deployment.environment.name",
)
NAMED_LOG_ATTRIBUTES = (
    "exception.type",
    "exception.message",
    "exception.stacktrace",
    "message",
    *TRACE_ATTRIBUTES,
    *TEMPLATE_ATTRIBUTES,  # the log statement's template: grouping reads it before the body (`log_template`)
)
#: where the number forms of a named read's attributes are joined to its row (`row_pages.named_reader`)
NUMBERS = "__numbers"
#: set on a row `NamedLogQueries.row` rebuilt from a read by name: its maps hold the named keys only
READ_BY_NAME = "read_by_name"


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class NamedLogQueries:
    """The queries that read a log record by name: its string fields, then the number forms of the
    attributes that hold an error code (`code_attributes`, `ROUNDS_ERROR_CODE_ATTRIBUTES`), which a
    record may store as either type. SigNoz answers a named field under its name alone
    (`<expression> AS name`, telemetrylogs field_mapper ColumnExpressionFor), and ClickHouse refuses two
    expressions with one alias, so the two types of one key need two queries."""

    code_attributes: tuple[str, ...] = DEFAULT_ERROR_CODE_ATTRIBUTES

    @property
    def strings(self) -> tuple[str, ...]:
        return _unique((*NAMED_LOG_ATTRIBUTES, *self.code_attributes))

    def string_fields(self, limit: int, offset: int) -> dict[str, Any]:
        """`error_logs_raw` naming only the string fields rounds reads: the same rows in the same order."""
        fields = [
            *(_log_field(name, "log") for name in NAMED_LOG_COLUMNS),
            *(_log_field(name, "resource", "string") for name in NAMED_LOG_RESOURCES),
            *(_log_field(name, "attribute", "string") for name in self.strings),
        ]
        query = error_logs_raw(limit, offset)
        query["spec"]["selectFields"] = fields
        return query

    def number_fields(self, limit: int, offset: int) -> dict[str, Any]:
        """The same rows with the number form of each error-code attribute (bools are never codes)."""
        query = error_logs_raw(limit, offset)
        query["spec"]["selectFields"] = [
            _log_field(name, "attribute", "number") for name in _unique(self.code_attributes)
        ]
        return query

    def queries(self) -> tuple[Callable[[int, int], dict[str, Any]], ...]:
        if not self.code_attributes:
            return (self.string_fields,)
        return (self.string_fields, self.number_fields)

    def row(self, data: dict[str, Any]) -> dict[str, Any]:
        """A row of the named queries in the shape of a whole one (its maps rebuilt from the named keys it
        holds; a key the record lacks comes back empty or null); a whole row as it is."""
        if "attributes_string" in data:
            return data
        named = self.strings + NAMED_LOG_RESOURCES
        row = {key: value for key, value in data.items() if key not in named and key != NUMBERS}
        row["attributes_string"] = _present(data, self.strings)
        row["resources_string"] = _present(data, NAMED_LOG_RESOURCES)
        row["attributes_number"] = _numbers(data.get(NUMBERS) or {}, self.code_attributes)
        row[READ_BY_NAME] = True
        return row

    def named_part(
        self, attributes: dict[str, str], resources: dict[str, str]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The string attributes and resources a read by name holds of a record, from a whole read's maps
        (the same keys, an empty value dropped as `row` drops it): a copy read whole and one read by name
        are compared on these (`record_identity`)."""
        return _present(attributes, self.strings), _present(resources, NAMED_LOG_RESOURCES)


def _present(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: data[name] for name in names if data.get(name) not in (None, "")}


def _numbers(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A number map's named keys. ClickHouse reads a key a map lacks as the type's default, so a number
    attribute of 0 is one the record does not have: 0 is no error code."""
    return {name: data[name] for name in names if isinstance(data.get(name), int | float) and data[name] != 0}
