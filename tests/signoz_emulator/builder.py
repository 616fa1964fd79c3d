"""v5 builder queries as the SELECT statements SigNoz's statement builders write for them.

Raw trace rows: `SELECT timestamp, trace_id, span_id, <select fields AS their names> FROM
signoz_traces.distributed_signoz_index_v3 WHERE (<filter>) AND timestamp >= '<ns>' AND timestamp < '<ns>'
AND ts_bucket_start >= <s - 1800> AND ts_bucket_start <= <s> ORDER BY ... LIMIT n OFFSET m`; raw logs select
SigNoz's default log columns from `signoz_logs.distributed_logs_v2` (integer ns `timestamp`); scalar
queries aggregate `count()` per group-by key. Resource fields a row lacks come back as NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rounds_bot.sources.signoz.times import NS_PER_MS

from .engine import ClickHouseError, Engine, sql_literal
from .filters import FieldMapper, where_clause
from .ties import order_by

SPANS = "signoz_traces.distributed_signoz_index_v3"
LOGS = "signoz_logs.distributed_logs_v2"
SPAN_COLUMNS = frozenset(
    [
        "has_error",
        "status_code",
        "status_code_string",
        "status_message",
        "name",
        "kind",
        "kind_string",
        "duration_nano",
        "trace_id",
        "span_id",
        "parent_span_id",
        "timestamp",
        "http_method",
        "http_url",
        "http_host",
        "response_status_code",
        "events",
        "links",
        "db_name",
        "db_operation",
        "trace_state",
        "flags",
        "is_remote",
        "external_http_url",
        "external_http_method",
    ]
)
LOG_COLUMNS = frozenset(
    [
        "severity_text",
        "severity_number",
        "body",
        "trace_id",
        "span_id",
        "id",
        "timestamp",
        "trace_flags",
        "scope_name",
        "scope_version",
        "observed_timestamp",
    ]
)
LOG_DEFAULT_FIELDS = [
    "timestamp",
    "id",
    "trace_id",
    "span_id",
    "trace_flags",
    "severity_text",
    "severity_number",
    "scope_name",
    "scope_version",
    "body",
    "attributes_string",
    "attributes_number",
    "attributes_bool",
    "resources_string",
    "scope_string",
]
SPAN_DEFAULT_FIELDS = ("name", "service.name", "duration_nano", "has_error", "status_code", "status_message")


@dataclass(frozen=True)
class Statement:
    sql: str
    signal: str
    selected: list[str]


def mapper_for(engine: Engine, signal: str, *, unescapes_quoted: bool = True) -> FieldMapper:
    table = SPANS if signal == "traces" else LOGS
    known: dict[str, bool] = {}

    def key_exists(key: str) -> bool:
        # SigNoz looks keys up in its metadata of keys seen; here: any row that has the key
        if key not in known:
            literal = sql_literal(key)
            maps = ("resources_string", "attributes_string", "attributes_number", "attributes_bool")
            condition = " OR ".join(f"mapContains({column}, {literal})" for column in maps)
            known[key] = bool(
                engine.query(f"SELECT count() AS n FROM {table} WHERE {condition}").rows[0]["n"]
            )
        return known[key]

    intrinsic = SPAN_COLUMNS if signal == "traces" else LOG_COLUMNS
    return FieldMapper(
        signal=signal, intrinsic=intrinsic, key_exists=key_exists, unescapes_quoted=unescapes_quoted
    )


def _window(signal: str, start_ms: int, end_ms: int) -> str:
    start_ns, end_ns = start_ms * NS_PER_MS, end_ms * NS_PER_MS
    buckets = f"ts_bucket_start >= {start_ms // 1000 - 1800} AND ts_bucket_start <= {end_ms // 1000}"
    return (
        f"timestamp >= {sql_literal(str(start_ns))} AND timestamp < {sql_literal(str(end_ns))} AND {buckets}"
    )


def _where(spec: dict[str, Any], mapper: FieldMapper, start_ms: int, end_ms: int) -> str:
    expression = ((spec.get("filter") or {}).get("expression") or "").strip()
    window = _window(mapper.signal, start_ms, end_ms)
    return f"({where_clause(expression, mapper)}) AND {window}" if expression else window


def raw_statement(
    spec: dict[str, Any],
    mapper: FieldMapper,
    start_ms: int,
    end_ms: int,
    *,
    log_fields_selectable: bool = True,
    tie_salt: int | None = None,
    json_body: bool = False,
) -> Statement:
    """`log_fields_selectable`: SigNoz honours a logs query's selectFields (v0.95+); before, its list query
    selects the default columns whatever is named (pkg/telemetrylogs/statement_builder.go at v0.88.0,
    buildListQuery: `sb.Select("timestamp, id, trace_id, ...")`). `tie_salt`: how this query orders the rows
    its ORDER BY leaves tied, as ClickHouse may order them differently on each query (`ties`).
    `json_body`: SigNoz's `use_json_body` flag: the default columns take `body_v2 as body`
    (logsstatementbuilder/statement_builder.go bodyAliasExpression) and a named `body` is `body_v2.message`
    (logstelemetryschema/field_mapper.go getColumn)."""
    signal = spec["signal"]
    table = SPANS if signal == "traces" else LOGS
    fields = spec.get("selectFields") or []
    names = [field.get("name", "") for field in fields]
    # a resource field is selected as its resource expression even when no row has it (then NULL)
    contexts = {field.get("name", ""): field.get("fieldContext", "") for field in fields}
    types = {field.get("name", ""): field.get("fieldDataType", "") for field in fields}
    _one_expression_an_alias(fields)
    if signal == "logs":
        # timestamp and id always lead a named selection (buildListQuery: "Select timestamp and id by
        # default", then each field but those two)
        named = ["timestamp", "id"] + [name for name in names if name not in ("timestamp", "id")]
        names = named if names and log_fields_selectable else list(LOG_DEFAULT_FIELDS)
    else:
        names = ["timestamp", "trace_id", "span_id"] + [
            name
            for name in (names or SPAN_DEFAULT_FIELDS)
            if name not in ("timestamp", "trace_id", "span_id")
        ]
    selected = [
        f"{_named(name, contexts.get(name, ''), types.get(name, ''), mapper)} AS `{name}`" for name in names
    ]
    if json_body and signal == "logs" and "body" in names:
        whole = not fields or not log_fields_selectable
        selected[names.index("body")] = "body_v2 AS `body`" if whole else "body_v2.message AS `body`"
    order = ", ".join(
        f"{_select(item.get('key', {}).get('name', 'timestamp'), mapper)} {item.get('direction', 'desc')}"
        for item in spec.get("order") or []
    )
    sql = f"SELECT {', '.join(selected)} FROM {table} WHERE {_where(spec, mapper, start_ms, end_ms)}"
    sql += order_by(order, signal, tie_salt)
    sql += f" LIMIT {spec.get('limit') or 100}"
    if spec.get("offset"):
        sql += f" OFFSET {spec['offset']}"
    return Statement(sql, signal, names)


def _one_expression_an_alias(fields: list[dict[str, Any]]) -> None:
    """SigNoz selects a named field as `<expression> AS name` (telemetrylogs field_mapper
    ColumnExpressionFor), so one name named with two contexts or types is two expressions under one alias,
    which ClickHouse refuses (MULTIPLE_EXPRESSIONS_FOR_ALIAS)."""
    expressions: dict[str, tuple[str, str]] = {}
    for field in fields:
        name = field.get("name", "")
        shape = (field.get("fieldContext", ""), field.get("fieldDataType", ""))
        if expressions.setdefault(name, shape) != shape:
            raise ClickHouseError(
                179, "MULTIPLE_EXPRESSIONS_FOR_ALIAS", f"Different expressions with the same alias {name}"
            )


# an attribute named with its type is read from that type's map, whether or not any row has the key
# (logstelemetryschema/field_mapper.go getColumn: FieldContextAttribute by FieldDataType; FieldFor:
# `attributes_string['key']`, which is '' where the row lacks it)
_TYPED_MAPS = {
    "string": "attributes_string",
    "int64": "attributes_number",
    "float64": "attributes_number",
    "number": "attributes_number",
    "bool": "attributes_bool",
}


def _named(name: str, context: str, data_type: str, mapper: FieldMapper) -> str:
    if context == "resource":
        return mapper.resource(name)
    if context == "attribute" and data_type in _TYPED_MAPS:
        return f"{_TYPED_MAPS[data_type]}[{sql_literal(name)}]"
    return _select(name, mapper)


def _select(name: str, mapper: FieldMapper) -> str:
    if name in LOG_DEFAULT_FIELDS and mapper.signal == "logs":
        return name
    if name in ("attributes_string", "attributes_number", "attributes_bool", "resources_string"):
        return name
    return mapper.column(name)


def scalar_statement(spec: dict[str, Any], mapper: FieldMapper, start_ms: int, end_ms: int) -> Statement:
    table = SPANS if spec["signal"] == "traces" else LOGS
    keys = [group.get("name", "") for group in spec.get("groupBy") or []]
    aggregations = spec.get("aggregations") or [{"expression": "count()"}]
    columns = [f"toString({mapper.column(key)}) AS `{key}`" for key in keys]
    columns += [f"{item.get('expression', 'count()')} AS __result_{i}" for i, item in enumerate(aggregations)]
    sql = f"SELECT {', '.join(columns)} FROM {table} WHERE {_where(spec, mapper, start_ms, end_ms)}"
    if keys:
        sql += f" GROUP BY {', '.join(f'`{key}`' for key in keys)} ORDER BY __result_0 DESC"
    return Statement(sql, spec["signal"], keys + [f"__result_{i}" for i in range(len(aggregations))])
