"""Pieces every service's scenarios share: the scenario record and the usual span shapes."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from opentelemetry.trace import SpanKind

from tools.demo.plan import NS_PER_MS, Attributes, Occurrence, Scope, SpanPlan, instant

T = TypeVar("T")

When = Callable[[random.Random], int]
Build = Callable[[random.Random, int], Occurrence]


@dataclass(frozen=True)
class Scenario:
    """How one demo bug happens: when (a time distribution) and what gets recorded."""

    bug_id: str
    when: When
    build: Build


@dataclass(frozen=True)
class Traffic:
    """Ordinary traffic around the bugs: `count` occurrences that must not read as errors."""

    name: str
    count: int
    build: Build
    when: When = instant


def pick(rng: random.Random, options: Sequence[T]) -> T:
    return options[rng.randrange(len(options))]


def http_server_span(
    scope: Scope,
    method: str,
    route: str,
    path: str,
    status_code: int,
    start_ns: int,
    duration_ns: int,
    **attributes: Any,
) -> SpanPlan:
    """A SERVER span named `METHOD route`, with the stable HTTP semantic conventions."""
    span_attributes: Attributes = {
        "http.request.method": method,
        "http.route": route,
        "url.path": path,
        "url.scheme": "http",
        "http.response.status_code": status_code,
        **attributes,
    }
    return SpanPlan(
        name=f"{method} {route}",
        kind=SpanKind.SERVER,
        scope=scope,
        start_ns=start_ns,
        end_ns=start_ns + duration_ns,
        attributes=span_attributes,
    )


def db_span(
    scope: Scope, operation: str, table: str, query: str, start_ns: int, duration_ns: int
) -> SpanPlan:
    """A CLIENT span for one SQL statement on the shop's PostgreSQL."""
    return SpanPlan(
        name=f"{operation} {table}",
        kind=SpanKind.CLIENT,
        scope=scope,
        start_ns=start_ns,
        end_ns=start_ns + duration_ns,
        attributes={
            "db.system.name": "postgresql",
            "db.namespace": "shop",
            "db.operation.name": operation,
            "db.collection.name": table,
            "db.query.text": query,
            "server.address": "postgres-primary.shop.svc.cluster.local",
        },
    )


def ms(value: float) -> int:
    return int(value * NS_PER_MS)
