"""What a failed span without an exception was doing: its operation's target, by the OpenTelemetry
semantic conventions.

A span's name is low-cardinality by convention, so an HTTP client span is often named by its
method alone (`GET`) and a failing call to one host looks like a failing call to any other. The
attributes the conventions define say what was called:
- HTTP client: `server.address` (and `server.port` when not the scheme's default) and
  `url.template`; `peer.service` names the remote service;
- HTTP server: `http.route`;
- RPC: `rpc.system`, `rpc.service`, `rpc.method`;
- database: `db.system.name` (or the older `db.system`), `db.namespace`, `db.collection.name`,
  `db.operation.name`; messaging: `messaging.system`, `messaging.destination.name`.
Two failed spans are one problem only when they agree on all of these (`url.full` and other
per-request values are never part of it).
"""

from __future__ import annotations

from collections.abc import Mapping

from rounds_bot.models import AttributeValue

_TARGET_ATTRIBUTES = (
    "peer.service",
    "server.address",
    "server.port",
    "url.template",
    "http.route",
    "rpc.system",
    "rpc.service",
    "rpc.method",
    "db.system.name",
    "db.system",
    "db.namespace",
    "db.collection.name",
    "db.operation.name",
    "messaging.system",
    "messaging.destination.name",
)
_DEFAULT_PORTS = frozenset(("80", "443"))


def operation_target(attributes: Mapping[str, AttributeValue]) -> str | None:
    """`name=value` of each target attribute the span carries, in a fixed order (None: none)."""
    parts = []
    for name in _TARGET_ATTRIBUTES:
        value = attributes.get(name)
        if value is None or value == "":
            continue
        text = str(value)
        if name == "server.port" and text in _DEFAULT_PORTS:
            continue
        parts.append(f"{name}={text}")
    return " ".join(parts) or None
