"""Rows that reach SigNoz while a round reads them: the collector's batch processor writes a batch when it
is full or when its timeout passes (OpenTelemetry Collector processor/batchprocessor README: `timeout`, "Time
duration after which a batch will be sent regardless of size"; SigNoz ships `batch: send_batch_size: 10000,
timeout: 10s`, deploy/docker/otel-collector-config.yaml), and the exporter retries a failed batch
(exporterhelper `retry_on_failure`), so a record is stored seconds or minutes after its own timestamp, with
that timestamp: between two page queries of one read, anywhere in the order the reader pages through.
"""

from __future__ import annotations

from dataclasses import dataclass

from .data import Dataset


@dataclass
class LateRows:
    """`rows` arrive just before the request to `path` that follows `after` such requests answered (only
    requests whose body holds `body_contains` count)."""

    rows: Dataset
    after: int = 1
    path: str = "/api/v5/query_range"
    body_contains: str = ""


def due(arrivals: list[LateRows], path: str, body: bytes) -> list[Dataset]:
    """The rows that arrive before this request is answered (taken off `arrivals`); counts it for the rest."""
    arrived: list[Dataset] = []
    for late in list(arrivals):
        if not path.startswith(late.path) or late.body_contains.encode() not in body:
            continue
        if late.after > 0:
            late.after -= 1
            continue
        arrivals.remove(late)
        arrived.append(late.rows)
    return arrived
