"""ClickHouse's rule for rows tied on a query's ORDER BY: "Rows with identical values for a sort expressions
are returned in an arbitrary and non-deterministic order. If the ORDER BY clause is omitted in a SELECT
statement, the row order is also arbitrary and non-deterministic" (ClickHouse docs, SELECT > ORDER BY Clause).

chDB in one process answers a small table in one repeatable order, which would hide a reader that pages over
tied rows by offset: each page is a new query, free to place the tied rows differently, so a row can fall on
two pages or on none. The emulator therefore orders the rows a builder list query leaves tied by a hash
salted afresh for each query, the salts drawn from a seed so that a test fails the same way every run.
Rows equal on the hashed key too (a collector's retried copy of a span) keep chDB's order: one record.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

#: what tells two rows of a table apart: a span by its trace and span ids, a log record by the id the
#: collector's exporter gives it (signoz-otel-collector exporter/clickhouselogsexporter, `ksuid`)
ROW_KEYS = {"traces": "trace_id, span_id", "logs": "id"}


@dataclass
class TieOrder:
    """The salts of the queries an emulator answers; `seed` None keeps chDB's own order (no rule)."""

    seed: int | None = 0
    _random: random.Random | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def salt(self) -> int | None:
        """The next query's salt."""
        if self.seed is None:
            return None
        with self._lock:
            if self._random is None:
                self._random = random.Random(self.seed)
            return self._random.getrandbits(32)


def order_by(order: str, signal: str, salt: int | None) -> str:
    """The ORDER BY clause of a list query: its own keys, then the salted hash that breaks their ties."""
    terms = [order] if order else []
    if salt is not None:
        terms.append(f"cityHash64({ROW_KEYS[signal]}, {salt})")
    return f" ORDER BY {', '.join(terms)}" if terms else ""
