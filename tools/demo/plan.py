"""What the demo generator will emit, planned as plain data before the SDK records it.

Scenarios (one module per service) build `Occurrence`s: a trace (a tree of `SpanPlan`s) and/or
log records, at a planned time, on one service instance. The generator then replays them in
time order through the OpenTelemetry SDK. Planning first keeps every random choice in one
seeded sequence, so the output is the same on every run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opentelemetry._logs import SeverityNumber
from opentelemetry.trace import SpanKind, StatusCode

#: The demo's first instant; every record falls in the six hours after it.
BASE_TIME = datetime(2026, 11, 1, 10, 0, 0, tzinfo=UTC)
BASE_NS = int(BASE_TIME.timestamp()) * 1_000_000_000
SPAN_SECONDS = 6 * 3600
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000

Attributes = dict[str, Any]


@dataclass(frozen=True)
class Scope:
    """An instrumentation scope: the library that recorded the span or log."""

    name: str
    version: str = ""


@dataclass(frozen=True)
class Instance:
    """One running copy of a service: what its OpenTelemetry resource says."""

    service: str
    version: str
    environment: str
    host: str
    resource: Attributes


@dataclass
class EventPlan:
    name: str
    time_ns: int
    attributes: Attributes = field(default_factory=dict)


@dataclass
class LogPlan:
    time_ns: int
    severity: SeverityNumber
    body: Any
    scope: Scope
    attributes: Attributes = field(default_factory=dict)
    severity_text: str | None = None
    #: the collector sees a record a little after it was written
    observed_delay_ns: int = 3 * NS_PER_MS


@dataclass
class SpanPlan:
    name: str
    kind: SpanKind
    scope: Scope
    start_ns: int
    end_ns: int
    attributes: Attributes = field(default_factory=dict)
    events: list[EventPlan] = field(default_factory=list)
    status: tuple[StatusCode, str | None] | None = None
    children: list[SpanPlan] = field(default_factory=list)
    #: log records written while this span was current (they carry its trace and span id)
    logs: list[LogPlan] = field(default_factory=list)
    #: this span holds the occurrence's error (its exception event, or its error status)
    carries_error: bool = False


@dataclass
class Occurrence:
    """One thing that happened: a bug's occurrence (bug_id set) or ordinary traffic (None)."""

    time_ns: int
    instance: Instance
    bug_id: str | None = None
    root: SpanPlan | None = None
    #: log records written outside any span
    logs: list[LogPlan] = field(default_factory=list)


def exception_event(
    time_ns: int, exception_type: str, message: str, stacktrace: str, **extra: Any
) -> EventPlan:
    """A span event as every OpenTelemetry SDK records an exception."""
    attributes: Attributes = {
        "exception.type": exception_type,
        "exception.message": message,
        "exception.stacktrace": stacktrace,
    }
    attributes.update(extra)
    return EventPlan("exception", time_ns, attributes)


def error_status(message: str | None = None) -> tuple[StatusCode, str | None]:
    return (StatusCode.ERROR, message)


def instant(rng: random.Random, start_s: float = 0, end_s: float = SPAN_SECONDS) -> int:
    """A random nanosecond instant between two offsets (in seconds) from BASE_TIME."""
    return BASE_NS + int(rng.uniform(start_s, end_s) * NS_PER_S) + rng.randrange(1_000)


def burst_instant(rng: random.Random, centre_s: float, spread_s: float) -> int:
    """An instant clustered around `centre_s` (an incident), clipped to the demo's six hours."""
    offset = min(max(rng.gauss(centre_s, spread_s), 0), SPAN_SECONDS - 1)
    return BASE_NS + int(offset * NS_PER_S) + rng.randrange(1_000)


def millis(rng: random.Random, low: float, high: float) -> int:
    return int(rng.uniform(low, high) * NS_PER_MS)


def hex_string(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))


def uuid4(rng: random.Random) -> str:
    """A version-4 UUID drawn from the seeded generator (uuid.uuid4 would not be reproducible)."""
    text = hex_string(rng, 32)
    variant = "89ab"[rng.randrange(4)]
    return f"{text[:8]}-{text[8:12]}-4{text[13:16]}-{variant}{text[17:20]}-{text[20:32]}"
