"""A small OTLP/JSON telemetry fixture for the SigNoz emulator, at fixed times.

What it holds, so tests can say what a poll must find:
- checkout: 3 ValueError exception events on error spans; 1 KeyError recorded on a span whose
  status is not Error (handled); 2 error spans with no exception ("upstream timeout after N ms");
  log records: 2 "Payment failed for order N" ERROR logs with exception attributes, 1 FATAL log,
  1 lowercase "error" log with no severity number, 1 INFO log (not an error).
- payment-api: 1 java.lang.NullPointerException on an error span.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from signoz_emulator import SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines

from rounds_bot.sources.base import Window
from rounds_bot.sources.signoz.source import SignozSource
from rounds_bot.sources.signoz.times import ns_to_datetime

#: what only the error logs' counting query holds (`queries.error_log_groups_sql`), for a fault that answers
#: that query alone: the logs table's name is in the spans' and exceptions' queries too (enclosure rules)
ERROR_LOGS_QUERY = "AS top_severity"
T0_NS = int(datetime(2026, 5, 20, 10, 0, tzinfo=UTC).timestamp()) * 1_000_000_000
SECOND = 1_000_000_000

PY_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/app/checkout/views.py", line 88, in post\n'
    '    qty = int(request.json["qty"])\n'
    "ValueError: invalid literal for int() with base 10: 'abc'\n"
)
JAVA_TRACE = (
    'java.lang.NullPointerException: Cannot invoke "String.length()" because "token" is null\n'
    "\tat com.acme.pay.TokenService.validate(TokenService.java:42)\n"
    "\tat com.acme.pay.PaymentController.charge(PaymentController.java:77)\n"
)
VALUE_ERROR = "invalid literal for int() with base 10: 'abc'"
NPE_MESSAGE = 'Cannot invoke "String.length()" because "token" is null'


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            wrapped: dict[str, Any] = {"boolValue": value}
        elif isinstance(value, int):
            wrapped = {"intValue": str(value)}
        else:
            wrapped = {"stringValue": value}
        out.append({"key": key, "value": wrapped})
    return out


def _hex(seed: str, length: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def _resource(service: str) -> dict[str, Any]:
    return {
        "attributes": _attrs(
            {"service.name": service, "service.version": "1.4.2", "deployment.environment": "production"}
        )
    }


def _span(
    name: str,
    at: int,
    *,
    error: bool,
    events: list[dict[str, Any]] | None = None,
    message: str = "",
    attributes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    seed = f"{name}{at}"
    span: dict[str, Any] = {
        "traceId": _hex("t" + seed, 32),
        "spanId": _hex("s" + seed, 16),
        "name": name,
        "kind": 2,
        "startTimeUnixNano": str(at),
        "endTimeUnixNano": str(at + 48_213_000),
        "attributes": _attrs(attributes or {}),
        "events": events or [],
        "status": {"code": 2, "message": message} if error else {},
    }
    return span


def _exception(at: int, exc_type: str, message: str, stack: str) -> dict[str, Any]:
    return {
        "timeUnixNano": str(at),
        "name": "exception",
        "attributes": _attrs(
            {
                "exception.type": exc_type,
                "exception.message": message,
                "exception.stacktrace": stack,
                "exception.escaped": "False",
            }
        ),
    }


def _log(
    at: int, severity: str, number: int, body: str, attributes: dict[str, Any] | None = None
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "timeUnixNano": str(at),
        "observedTimeUnixNano": str(at + 1000),
        "severityText": severity,
        "body": {"stringValue": body},
        "attributes": _attrs(attributes or {}),
    }
    if number:
        record["severityNumber"] = number
    return record


def otlp_lines() -> list[str]:
    checkout_spans = []
    for index, at in enumerate(
        (T0_NS + 60 * SECOND, T0_NS + 600 * SECOND + 123_456_789, T0_NS + 1200 * SECOND + 987_654_321)
    ):
        checkout_spans.append(
            _span(
                "POST /api/checkout",
                at,
                error=True,
                message=f"ValueError: {VALUE_ERROR}",
                attributes={
                    "http.request.method": "POST",
                    "url.full": "/api/checkout",
                    "http.response.status_code": 500,
                    "attempt": index,
                },
                events=[_exception(at + 5_000_000, "ValueError", VALUE_ERROR, PY_TRACE)],
            )
        )
    checkout_spans.append(
        _span(
            "GET /api/cart",
            T0_NS + 300 * SECOND,
            error=False,
            events=[
                _exception(
                    T0_NS + 300 * SECOND + 1,
                    "KeyError",
                    "'sku'",
                    "Traceback (most recent call last):\nKeyError: 'sku'\n",
                )
            ],
        )
    )
    for at, millis in ((T0_NS + 400 * SECOND, 3000), (T0_NS + 900 * SECOND, 3500)):
        checkout_spans.append(
            _span(
                "GET /api/inventory",
                at,
                error=True,
                message=f"upstream timeout after {millis} ms",
                attributes={
                    "http.request.method": "GET",
                    "url.full": "/api/inventory",
                    "http.response.status_code": 504,
                },
            )
        )
    payment_span = _span(
        "POST /charge",
        T0_NS + 700 * SECOND,
        error=True,
        message="NullPointerException",
        events=[
            _exception(T0_NS + 700 * SECOND + 7, "java.lang.NullPointerException", NPE_MESSAGE, JAVA_TRACE)
        ],
    )
    traces = {
        "resourceSpans": [
            {
                "resource": _resource("checkout"),
                "scopeSpans": [{"scope": {"name": "checkout"}, "spans": checkout_spans}],
            },
            {
                "resource": _resource("payment-api"),
                "scopeSpans": [{"scope": {"name": "pay"}, "spans": [payment_span]}],
            },
        ]
    }
    payment_stack = 'Traceback (most recent call last):\n  File "/app/pay.py", line 9\nPaymentDeclined\n'
    logs = {
        "resourceLogs": [
            {
                "resource": _resource("checkout"),
                "scopeLogs": [
                    {
                        "scope": {"name": "checkout.views"},
                        "logRecords": [
                            _log(
                                T0_NS + 100 * SECOND,
                                "ERROR",
                                17,
                                "Payment failed for order 1234",
                                {
                                    "exception.type": "PaymentDeclined",
                                    "exception.message": "card declined",
                                    "exception.stacktrace": payment_stack,
                                },
                            ),
                            _log(
                                T0_NS + 800 * SECOND,
                                "ERROR",
                                17,
                                "Payment failed for order 5678",
                                {
                                    "exception.type": "PaymentDeclined",
                                    "exception.message": "card declined",
                                    "exception.stacktrace": payment_stack,
                                },
                            ),
                            _log(T0_NS + 1000 * SECOND, "FATAL", 21, "database connection lost"),
                            _log(T0_NS + 1100 * SECOND, "error", 0, "cache miss storm on shard 7"),
                            _log(T0_NS + 1150 * SECOND, "INFO", 9, "request served in 12 ms"),
                        ],
                    }
                ],
            }
        ]
    }
    return [json.dumps(traces), json.dumps(logs)]


def write_fixture(path: Path) -> Path:
    path.write_text("\n".join(otlp_lines()) + "\n", encoding="utf-8")
    return path


WINDOW_START_NS = T0_NS
WINDOW_END_NS = T0_NS + 3600 * SECOND


# -- helpers shared by the SigNoz tests ---------------------------------------------------------


def fixture_dataset() -> Dataset:
    dataset = Dataset()
    load_otlp_lines(otlp_lines(), dataset, where="signoz_fixtures")
    return dataset


def fixture_window() -> Window:
    return Window(start=ns_to_datetime(WINDOW_START_NS), end=ns_to_datetime(WINDOW_END_NS))


class RecordedSleep:
    """Stands in for time.sleep: remembers each wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def source_for(emulator: SignozEmulator, api_key: str | None = "test-key", **options: Any) -> SignozSource:
    options.setdefault("sleep", RecordedSleep())
    return SignozSource(emulator.url, api_key, **options)
