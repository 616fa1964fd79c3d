"""Extract the ClickHouse DDL of the tables rounds reads from signoz-otel-collector's schema migrator.

The collector keeps its schema as Go values (`cmd/signozschemamigrator/schema_migrator/*.go`):
migration records holding operations such as `CreateTableOperation{...}` or `AlterTableAddColumn{...}`.
This script reads those Go composite literals, evaluates them (string constants, `fmt.Sprintf`, the
package's one-line helper functions) and writes the SQL each operation renders, in the order the
migrator runs them: the squashed traces migrations then the later traces migrations, the
custom-retention (squashed) logs migrations then the later logs migrations.

Only the tables rounds queries are kept. A `distributed_*` table (engine Distributed, which needs a
cluster) becomes a local MergeTree copy of its local table, created after every migration ran on
the local one (`CREATE TABLE ... AS ...`); the operations on the distributed table are listed in
the output as comments.

    python tests/signoz_emulator/extract_schema.py --collector PATH_TO_GIT_DIR_OR_CHECKOUT [--commit REV]

writes tests/signoz_emulator/schema.sql.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MIGRATOR = "cmd/signozschemamigrator/schema_migrator"
CONSTANTS = "constants/constants.go"
# (database, the migration lists in the order the migrator runs them)
SEQUENCES = (
    ("signoz_traces", ("squashed_traces_migrations.go", "SquashedTracesMigrations"),
     ("traces_migrations.go", "TracesMigrations")),
    ("signoz_logs", ("v2_squashed_logs_migration.go", "CustomRetentionLogsMigrations"),
     ("logs_migrations.go", "LogsMigrations")),
)  # fmt: skip
TABLES = {
    "signoz_traces": ("signoz_error_index_v2", "signoz_index_v3"),
    "signoz_logs": ("logs_v2",),
}
OUTPUT = Path(__file__).with_name("schema.sql")


# -- reading Go values ----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""(?P<space>\s+|//[^\n]*|/\*.*?\*/)
    |(?P<raw>`[^`]*`)
    |(?P<string>"(?:[^"\\\n]|\\.)*")
    |(?P<number>\d+(?:\.\d+)?)
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    |(?P<punct>[{}\[\]():,&*+=<>!-])""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}


@dataclass
class Composite:
    """A Go composite literal: its type name, its keyed fields and its positional items."""

    type: str
    fields: dict[str, Any] = field(default_factory=dict)
    items: list[Any] = field(default_factory=list)

    def get(self, name: str, default: Any = "") -> Any:
        return self.fields.get(name, default)


def tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot read Go source at {text[position : position + 40]!r}")
        position = match.end()
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append((kind, match.group()))
    return tokens


def _go_string(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), literal[1:-1])


class GoReader:
    """Evaluates Go expressions made of literals, constants and simple helper calls."""

    def __init__(self, tokens: list[tuple[str, str]], names: dict[str, Any], helpers: dict[str, str]):
        self.tokens = tokens
        self.position = 0
        self.names = names
        self.helpers = helpers

    def peek(self, offset: int = 0) -> tuple[str, str]:
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else ("end", "")

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, found {token[1]!r} at token {self.position}")
        self.position += 1
        return token

    def type_name(self) -> str:
        """`[]T`, `map[K]V`, `*T`, `T` or `pkg.T[U]`, as text."""
        kind, value = self.peek()
        if value == "[":
            self.take("[")
            self.take("]")
            return "[]" + self.type_name()
        if value == "*":
            self.take("*")
            return "*" + self.type_name()
        if value == "map":
            self.take()
            self.take("[")
            key = self.type_name()
            self.take("]")
            return f"map[{key}]{self.type_name()}"
        if kind != "ident":
            raise ValueError(f"expected a type, found {value!r}")
        self.take()
        return value

    def value(self) -> Any:
        left = self.operand()
        while self.peek()[1] == "+":
            self.take("+")
            left = left + self.operand()
        return left

    def operand(self) -> Any:
        kind, text = self.peek()
        if text == "&":
            self.take("&")
            return self.operand()
        if text == "-":
            self.take("-")
            return -self.operand()
        if text == "{":
            return self.composite("")
        if kind in ("string", "raw"):
            self.take()
            return _go_string(text)
        if kind == "number":
            self.take()
            return float(text) if "." in text else int(text)
        if text == "[" or text == "map":
            type_name = self.type_name()
            return self.composite(type_name)
        if kind == "ident":
            return self.named()
        raise ValueError(f"unexpected {text!r} at token {self.position}")

    def named(self) -> Any:
        name = self.take()[1]
        if self.peek()[1] == "[":  # generic type arguments: ToPointer[uint](0)
            while self.take()[1] != "]":
                pass
        if self.peek()[1] == "{":
            return self.composite(name)
        if self.peek()[1] == "(":
            return self.call(name)
        if name in ("true", "false"):
            return name == "true"
        if name == "nil":
            return None
        if name.startswith("ColumnType"):
            return Composite("PrimitiveColumnType", {"Type": name.removeprefix("ColumnType")})
        if name in self.names:
            return self.names[name]
        raise ValueError(f"unknown Go name {name}")

    def call(self, name: str) -> Any:
        self.take("(")
        args: list[Any] = []
        while self.peek()[1] != ")":
            args.append(self.value())
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        if name == "fmt.Sprintf":
            return go_sprintf(args[0], args[1:])
        if name in ("utils.ToPointer", "uint", "uint64", "int", "string"):
            return args[0]
        if name in self.helpers:
            return go_sprintf(self.helpers[name], args)
        raise ValueError(f"cannot evaluate the Go call {name}(...)")

    def composite(self, type_name: str) -> Composite:
        literal = Composite(type_name)
        self.take("{")
        while self.peek()[1] != "}":
            if self.peek()[0] == "ident" and self.peek(1)[1] == ":":
                key = self.take()[1]
                self.take(":")
                literal.fields[key] = self.value()
            else:
                literal.items.append(self.value())
            if self.peek()[1] == ",":
                self.take(",")
        self.take("}")
        return literal


def go_sprintf(template: str, args: list[Any]) -> str:
    values = iter(args)
    return re.sub(r"%[sdv]", lambda _: str(next(values)), template)


def string_constants(source: str) -> dict[str, str]:
    """`Name = "value"` declarations (const and var blocks)."""
    return {m[1]: _go_string(m[2]) for m in re.finditer(r'^\s*(\w+)\s*=\s*("(?:[^"\\]|\\.)*")', source, re.M)}


def sprintf_helpers(source: str) -> dict[str, str]:
    """`func Name(x string) string { return fmt.Sprintf("...", x) }` as Name -> format."""
    pattern = r'func (\w+)\(\w+ string\) string \{\s*return fmt\.Sprintf\(("(?:[^"\\]|\\.)*"), \w+\)\s*\}'
    return {m[1]: _go_string(m[2]) for m in re.finditer(pattern, source)}


def migration_records(
    source: str, variable: str, reader_context: tuple[dict[str, Any], dict[str, str]]
) -> Any:
    match = re.search(rf"\b{variable}\s*=\s*", source)
    if match is None:
        raise ValueError(f"no {variable} in the migrator source")
    tokens = tokenize(source[match.end() :])
    return GoReader(tokens, *reader_context).value()


# -- rendering SQL, as each operation's ToSQL does ------------------------------------------------


def column_type(value: Composite) -> str:
    kind, fields, items = value.type, value.fields, value.items
    if kind == "PrimitiveColumnType":
        return str(fields["Type"])
    if kind == "FixedStringColumnType":
        return f"FixedString({fields['Length']})"
    if kind == "DateTimeColumnType":
        return f"DateTime({fields['Timezone']})" if fields.get("Timezone") else "DateTime"
    if kind == "DateTime64ColumnType":
        zone = f", {fields['Timezone']}" if fields.get("Timezone") else ""
        return f"DateTime64({fields['Precision']}{zone})"
    wrappers = {"ArrayColumnType": "Array", "LowCardinalityColumnType": "LowCardinality",
                "NullableColumnType": "Nullable"}  # fmt: skip
    if kind in wrappers:
        element = fields.get("ElementType", items[0] if items else None)
        return f"{wrappers[kind]}({column_type(element)})"
    if kind == "MapColumnType":
        key, val = (fields.get("KeyType"), fields.get("ValueType")) if fields else items
        return f"Map({column_type(key)}, {column_type(val)})"
    if kind == "TupleColumnType":
        elements = fields.get("ElementTypes", items[0] if items else Composite("[]ColumnType"))
        return f"Tuple({', '.join(column_type(e) for e in elements.items)})"
    if kind == "JSONColumnType":
        params = []
        if fields.get("MaxDynamicPaths") is not None:
            params.append(f"max_dynamic_paths={fields['MaxDynamicPaths']}")
        if fields.get("MaxDynamicTypes") is not None:
            params.append(f"max_dynamic_types={fields['MaxDynamicTypes']}")
        for column in fields.get("Columns", Composite("")).items:
            params.append(f"{column.get('Name')} {column_type(column.get('Type'))}")
        return f"JSON({', '.join(params)})"
    if kind in ("SimpleAggregateFunction", "AggregateFunction"):
        arguments = ", ".join(column_type(a) for a in fields["Arguments"].items)
        return f"{kind}({fields['FunctionName']}, {arguments})"
    if kind == "EnumerationColumnType":
        return f"Enum{fields['Size']}({', '.join(fields['Values'].items)})"
    raise ValueError(f"unknown column type {kind}")


def column_sql(column: Composite) -> str:
    sql = f"{column.get('Name')} {column_type(column.get('Type'))}"
    for key, word in (("Alias", "ALIAS"), ("Default", "DEFAULT"), ("Materialized", "MATERIALIZED")):
        if column.get(key):
            sql += f" {word} {column.get(key)}"
    if column.get("Codec"):
        sql += f" CODEC({column.get('Codec')})"
    if column.get("TTL"):
        sql += f" TTL {column.get('TTL')}"
    if column.get("Settings", None) is not None:
        sql += f" SETTINGS {settings_sql(column.get('Settings'))}"
    if column.get("Comment"):
        sql += f" COMMENT {column.get('Comment')}"
    return sql


def settings_sql(settings: Composite) -> str:
    return ", ".join(f"{s.get('Name')} = {s.get('Value')}" for s in settings.items)


def index_sql(index: Composite) -> str:
    return (
        f"INDEX {index.get('Name')} {index.get('Expression')} TYPE {index.get('Type')} "
        f"GRANULARITY {index.get('Granularity')}"
    )


def engine_sql(engine: Composite) -> str:
    base = engine.get("MergeTree", None) or engine
    name = engine.type
    if engine.type == "ReplacingMergeTree" and engine.get("Version"):
        name += f"({engine.get('Version')})"
    parts = [name]
    for key, word in (("PrimaryKey", "PRIMARY KEY"), ("OrderBy", "ORDER BY"), ("PartitionBy", "PARTITION BY"),
                      ("SampleBy", "SAMPLE BY"), ("TTL", "TTL")):  # fmt: skip
        if base.get(key):
            parts.append(f"{word} {base.get(key)}")
    if base.get("Settings", None) is not None and base.get("Settings").items:
        parts.append(f"SETTINGS {settings_sql(base.get('Settings'))}")
    return " ".join(parts)


def operation_sql(op: Composite) -> str:
    target = f"{op.get('Database')}.{op.get('Table')}"
    kind = op.type
    if kind == "CreateTableOperation":
        parts = [column_sql(c) for c in op.get("Columns").items]
        parts += [index_sql(i) for i in op.get("Indexes", Composite("")).items]
        parts += [
            f"PROJECTION {p.get('Name')} ({p.get('Query')})"
            for p in op.get("Projections", Composite("")).items
        ]
        engine = engine_sql(op.get("Engine"))
        return f"CREATE TABLE IF NOT EXISTS {target} ({', '.join(parts)}) ENGINE = {engine}"
    if kind == "DropTableOperation":
        return f"DROP TABLE IF EXISTS {target}"
    alter = f"ALTER TABLE {target}"
    column = op.get("Column", None)
    index = op.get("Index", None)
    if kind == "AlterTableAddColumn":
        after = f" AFTER {op.get('After').get('Name')}" if op.get("After", None) else ""
        return f"{alter} ADD COLUMN IF NOT EXISTS {column_sql(column)}{after}"
    if kind == "AlterTableDropColumn":
        return f"{alter} DROP COLUMN IF EXISTS {column.get('Name')}"
    if kind == "AlterTableModifyColumn":
        sql = f"{alter} MODIFY COLUMN IF EXISTS {column.get('Name')}"
        if column.get("Type", None) is not None:
            sql += f" {column_type(column.get('Type'))}"
        if column.get("Default"):
            sql += f" DEFAULT {column.get('Default')}"
        if column.get("Codec"):
            sql += f" CODEC({column.get('Codec')})"
        if column.get("TTL"):
            sql += f" TTL {column.get('TTL')}"
        return sql
    if kind == "AlterTableModifyColumnRemove":
        return f"{alter} MODIFY COLUMN IF EXISTS {column.get('Name')} REMOVE {op.get('Property')}"
    if kind == "AlterTableMaterializeColumn":
        return f"{alter} MATERIALIZE COLUMN {column.get('Name')}"
    if kind == "AlterTableAddIndex":
        return (
            f"{alter} ADD INDEX IF NOT EXISTS {index.get('Name')} {index.get('Expression')} "
            f"TYPE {index.get('Type')} GRANULARITY {index.get('Granularity')}"
        )
    if kind == "AlterTableDropIndex":
        return f"{alter} DROP INDEX IF EXISTS {index.get('Name')}"
    if kind == "AlterTableMaterializeIndex":
        partition = f" IN PARTITION {op.get('Partition')}" if op.get("Partition") else ""
        return f"{alter} MATERIALIZE INDEX IF EXISTS {index.get('Name')}{partition}"
    if kind == "AlterTableModifySettings":
        return f"{alter} MODIFY SETTING {settings_sql(op.get('Settings'))}"
    if kind == "AlterTableModifyTTL":
        return f"{alter} MODIFY TTL {op.get('TTL')}"
    raise ValueError(f"no SQL rendering for {kind} on {target}")


# -- choosing and ordering ------------------------------------------------------------------------


class Source:
    """The collector's files at one commit, from a git directory or a checkout."""

    def __init__(self, root: Path, commit: str):
        self.root = root
        self.commit = self._git("rev-parse", commit).strip()

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self._git_dir()), *args], check=True, capture_output=True, text=True
        ).stdout

    def _git_dir(self) -> Path:
        return self.root / ".git" if (self.root / ".git").exists() else self.root

    def read(self, path: str) -> str:
        return self._git("show", f"{self.commit}:{path}")


def extract(source: Source) -> str:
    migrator = "\n".join(source.read(f"{MIGRATOR}/{name}") for name in ("manager.go", "index_operations.go"))
    names: dict[str, Any] = dict(string_constants(migrator))
    names.update({f"constants.{k}": v for k, v in string_constants(source.read(CONSTANTS)).items()})
    context = (names, sprintf_helpers(migrator))
    lines = [
        "-- The tables rounds reads, as signoz-otel-collector's schema migrator creates them.",
        f"-- signoz-otel-collector commit {source.commit}",
        "-- extracted by tests/signoz_emulator/extract_schema.py (do not edit by hand; run it again).",
        "-- distributed_* tables are local MergeTree copies of their local tables (no cluster here).",
        "",
    ]
    for database, *sequence in SEQUENCES:
        wanted = TABLES[database]
        for file_name, variable in sequence:
            lines.append(f"-- {database}: {variable} ({MIGRATOR}/{file_name})")
            records = migration_records(source.read(f"{MIGRATOR}/{file_name}"), variable, context)
            for record in records.items:
                for op in record.get("UpItems", Composite("")).items:
                    table = op.get("Table") or op.get("ViewName")
                    if op.get("Database") != database or table.removeprefix("distributed_") not in wanted:
                        continue
                    statement = operation_sql(op)
                    migration = record.get("MigrationID")
                    if table.startswith("distributed_"):
                        lines.append(f"-- migration {migration}, on the distributed table: {statement}")
                    else:
                        lines.append(f"-- migration {migration}\n{statement};")
        for table in wanted:
            lines.append(
                f"-- the distributed table as a local copy\n"
                f"CREATE TABLE IF NOT EXISTS {database}.distributed_{table} AS {database}.{table};"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collector", type=Path, required=True, help="git dir or checkout of the collector")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    args.output.write_text(extract(Source(args.collector, args.commit)), encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
