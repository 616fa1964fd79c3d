"""Synthetic exception load generated inside ClickHouse (`numbers()`), not through Python JSON.

`events` rows of the error index, in `groups` groups, spread evenly over [start, end): occurrence
`n` belongs to group `n % groups` and happens at `start + n * step`, `step = (end - start) // events`.
Group ids are SigNoz's (md5 of service + type + message), stack traces are Python tracebacks 18 frames deep.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPES = (
    "ValueError",
    "KeyError",
    "java.lang.NullPointerException",
    "TimeoutError",
    "sqlalchemy.exc.OperationalError",
    "TypeError",
)
SERVICES = 25
DEPTH = 18


@dataclass(frozen=True)
class SyntheticExceptions:
    events: int
    groups: int
    start_ns: int
    end_ns: int

    def __post_init__(self) -> None:
        if self.groups <= 0 or self.events < self.groups:
            raise ValueError("synthetic data needs at least one event per group")

    def insert_sql(self, table: str) -> str:
        types = "[" + ", ".join(f"'{name}'" for name in TYPES) + "]"
        step = max(1, (self.end_ns - self.start_ns) // self.events)
        return f"""INSERT INTO {table}
  (timestamp, errorID, groupID, traceID, spanID, serviceName, exceptionType, exceptionMessage,
   exceptionStacktrace, exceptionEscaped, resourceTagsMap)
SELECT fromUnixTimestamp64Nano(toInt64({self.start_ns} + number * {step})),
  lower(hex(MD5(concat(toString(g), ':', toString(number))))) AS error_id,
  lower(hex(MD5(concat(service, exception_type, message)))),
  lower(hex(MD5(error_id))), substring(error_id, 1, 16),
  service, exception_type, message,
  concat('Traceback (most recent call last):\\n',
    arrayStringConcat(arrayMap(level -> concat('  File "/app/service_', toString(g % 41), '/module_',
      toString((g + level) % 97), '.py", line ', toString(10 + (g * 7 + level * 13) % 400), ', in handler_',
      toString((g + level) % 53), '\\n    result = step_', toString(level), '(payload, options)\\n'),
      range({DEPTH}))),
    exception_type, ': failure ', toString(g), '\\n'),
  false, map('service.name', service, 'deployment.environment', 'bench')
FROM (
  SELECT number, number % {self.groups} AS g,
    concat('service-', toString(g % {SERVICES})) AS service,
    arrayElement({types}, (g % {len(TYPES)}) + 1) AS exception_type,
    concat('synthetic failure ', toString(g), ' while handling request kind ', toString(g % 13)) AS message
  FROM numbers({self.events})
)"""
