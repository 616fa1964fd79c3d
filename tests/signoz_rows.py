"""OTLP/JSON rows for SigNoz stream tests and the parity bench: an exception, an error span and an error
log of one service, at a given instant."""

from __future__ import annotations

import json
from typing import Any

from signoz_emulator.data import Dataset, load_otlp_lines

SERVICE = {"service.name": "orders", "deployment.environment": "production"}


def attributes(values: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]


def exception_span(index: int, at: int, message: str = "bad order") -> dict[str, Any]:
    return {
        "traceId": f"{index + 1:032x}",
        "spanId": f"{index + 1:016x}",
        "name": "POST /orders",
        "startTimeUnixNano": str(at),
        "endTimeUnixNano": str(at + 1000),
        "status": {"code": 2},
        "events": [
            {
                "name": "exception",
                "timeUnixNano": str(at + 500),
                "attributes": attributes({"exception.type": "ValueError", "exception.message": message}),
            }
        ],
    }


def error_span(index: int, at: int) -> dict[str, Any]:
    return {
        "traceId": f"{index + 10_000:032x}",
        "spanId": f"{index + 10_000:016x}",
        "name": "GET /stock",
        "startTimeUnixNano": str(at),
        "endTimeUnixNano": str(at + 1000),
        "status": {"code": 2, "message": "upstream timed out"},
    }


def error_log(at: int) -> dict[str, Any]:
    return {"timeUnixNano": str(at), "severityText": "ERROR", "body": {"stringValue": "payment declined"}}


def otlp_lines(spans: list[dict[str, Any]], logs: list[dict[str, Any]]) -> list[str]:
    resource = {"attributes": attributes(SERVICE)}
    return [
        json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}),
        json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": logs}]}]}),
    ]


def one_of_each(at: int, index: int) -> Dataset:
    dataset = Dataset()
    load_otlp_lines(
        otlp_lines([exception_span(index, at), error_span(index, at)], [error_log(at)]), dataset, where="rows"
    )
    return dataset
