"""The emulator's ClickHouse: a real ClickHouse engine in this process (chDB), with SigNoz's tables.

chDB keeps one data path per process, so there is one `Engine` per process (`Engine.shared()`);
tests truncate its tables between uses (`truncate()`). The tables come from `schema.sql`, the DDL of
signoz-otel-collector's schema migrator (see `extract_schema.py`), with TTL merges stopped so fixture
rows older than the tables' TTL stay readable.

Every query answers a `QueryResult` with ClickHouse's own statistics (rows and bytes read), or raises
`ClickHouseError` with ClickHouse's error code and message; `Engine.reads()` totals those statistics
over the queries one thread runs (the emulator's per-request figures). After a failed query chDB prepends the
failed query's partial output to the next result; the engine reads and drops it at once.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from chdb import session as chdb_session

SCHEMA = Path(__file__).with_name("schema.sql")
DATABASES = ("signoz_traces", "signoz_logs")
_ERROR = re.compile(r"Code: (\d+)\. DB::Exception: (.*?)(?: \((\w+)\))?(?: \(version [^)]*\))?\.?\s*$", re.S)


class ClickHouseError(Exception):
    """ClickHouse refused or failed a query: its numeric code, its name and its message."""

    def __init__(self, code: int, name: str, message: str):
        super().__init__(f"code: {code}, message: {message}")
        self.code = code
        self.name = name
        self.message = message


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class QueryResult:
    columns: list[Column]
    rows: list[dict[str, Any]]
    rows_read: int
    bytes_read: int
    elapsed_seconds: float


def schema_statements(text: str) -> list[str]:
    """The statements of schema.sql: comment lines dropped, split at `;` ending a line."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    return [statement.strip() for statement in re.split(r";\s*$", body, flags=re.M) if statement.strip()]


def sql_literal(value: Any) -> str:
    """A ClickHouse literal for a Python value (strings quoted and escaped)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


@dataclass
class Reads:
    """ClickHouse's own statistics, totalled over some queries."""

    queries: int = 0
    rows: int = 0
    bytes: int = 0


class Engine:
    """One chDB session holding SigNoz's tables; thread-safe (queries run one at a time)."""

    _shared: ClassVar[Engine | None] = None
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self._session = chdb_session.Session()
        self._lock = threading.Lock()
        self._tallies = threading.local()
        # denormals quoted: a NaN or infinity comes back as "nan", "inf" or "-inf", not as JSON null, so the
        # emulator sees the float clickhouse-go would scan (`replies.go_value`)
        for setting in (
            "session_timezone = 'UTC'",
            "output_format_json_quote_64bit_integers = 0",
            "output_format_json_quote_denormals = 1",
        ):
            self.execute(f"SET {setting}")
        for database in DATABASES:
            self.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
        for statement in schema_statements(SCHEMA.read_text(encoding="utf-8")):
            self.execute(statement)
        self.execute("SYSTEM STOP TTL MERGES")
        self.execute("SYSTEM STOP MERGES")
        self.tables = [
            f"{row['database']}.{row['name']}"
            for row in self.query(
                "SELECT database, name FROM system.tables WHERE database IN "
                f"({', '.join(sql_literal(d) for d in DATABASES)}) ORDER BY database, name"
            ).rows
        ]

    @classmethod
    def shared(cls) -> Engine:
        """The process's engine, created on first use."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = Engine()
                atexit.register(cls._shared.close)
            return cls._shared

    def close(self) -> None:
        """End the chDB session (at exit: left open, chDB may crash the interpreter on its way out)."""
        with self._lock:
            self._session.close()

    def version(self) -> str:
        return str(self.query("SELECT version() AS v").rows[0]["v"])

    def truncate(self) -> None:
        for table in self.tables:
            self.execute(f"TRUNCATE TABLE {table}")

    def execute(self, sql: str) -> None:
        self._run(sql, "TabSeparated")

    def query(self, sql: str) -> QueryResult:
        text = self._run(sql, "JSON")
        payload = json.loads(text)
        statistics = payload.get("statistics") or {}
        result = QueryResult(
            columns=[Column(meta["name"], meta["type"]) for meta in payload.get("meta", [])],
            rows=payload.get("data", []),
            rows_read=int(statistics.get("rows_read", 0)),
            bytes_read=int(statistics.get("bytes_read", 0)),
            elapsed_seconds=float(statistics.get("elapsed", 0.0)),
        )
        tally: Reads | None = getattr(self._tallies, "current", None)
        if tally is not None:
            tally.queries += 1
            tally.rows += result.rows_read
            tally.bytes += result.bytes_read
        return result

    @contextlib.contextmanager
    def reads(self) -> Iterator[Reads]:
        """Totals what the queries this thread runs inside the block read."""
        previous = getattr(self._tallies, "current", None)
        self._tallies.current = tally = Reads()
        try:
            yield tally
        finally:
            self._tallies.current = previous

    def insert(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Insert rows given as JSON objects keyed by column; columns left out take their defaults."""
        lines = [json.dumps(row, separators=(",", ":"), ensure_ascii=False) for row in rows]
        if lines:
            self.execute(f"INSERT INTO {table} FORMAT JSONEachRow\n" + "\n".join(lines))
        return len(lines)

    def _run(self, sql: str, output_format: str) -> str:
        with self._lock:
            try:
                result = self._session.query(sql, output_format)
            except RuntimeError as error:
                self._drop_partial_output()
                raise _clickhouse_error(str(error)) from None
            return str(result)

    def _drop_partial_output(self) -> None:
        # the failed query's partial output is prepended to whatever runs next: read it and drop it
        with contextlib.suppress(RuntimeError):
            self._session.query("SELECT 1", "TabSeparated")


def _clickhouse_error(text: str) -> ClickHouseError:
    match = _ERROR.search(text.strip())
    if match is None:
        return ClickHouseError(1001, "STD_EXCEPTION", text.strip())
    return ClickHouseError(int(match[1]), match[3] or "", match[2].strip())
