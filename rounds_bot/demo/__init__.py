"""The demo telemetry bundled with rounds, and the list of bugs hidden in it.

`demo_data_path()` is an OTLP/JSON file (the OpenTelemetry Collector's file-exporter format)
that `rounds run --demo` reads: six hours of a small shop's five services, written by the real
OpenTelemetry Python SDK (see `tools.demo.generate`, which also says how to regenerate it).

`DEMO_BUGS` says which distinct problems the file holds and how many error events each produces,
so tests can pin that grouping finds exactly these problems. The records themselves carry no
hint of which bug they belong to (that would leak into grouping); the generator writes the
mapping from event id to bug id beside the tests instead.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import Field

from rounds_bot.models import EventKind, Frozen

Runtime = Literal["python", "java", "nodejs", "go"]

DEMO_DATA_FILE = "demo.otlp.jsonl"


class DemoBug(Frozen):
    """One distinct underlying problem in the demo data."""

    id: str
    service: str
    runtime: Runtime
    kind: EventKind = Field(description="how the problem reaches telemetry")
    description: str
    expected_count: int = Field(ge=1, description="error events the demo file holds for it")


DEMO_BUGS: list[DemoBug] = [
    DemoBug(
        id="checkout-discount-currency-keyerror",
        service="checkout-api",
        runtime="python",
        kind="exception",
        description="apply_discount reads promotion['currency'], which percentage promotions lack; "
        "reached from placing an order and from the cart preview",
        expected_count=200,
    ),
    DemoBug(
        id="checkout-duplicate-order",
        service="checkout-api",
        runtime="python",
        kind="log",
        description="a retried order hits the idempotency-key unique constraint and is logged as a "
        "chained DuplicateOrderError instead of returning the existing order",
        expected_count=36,
    ),
    DemoBug(
        id="checkout-loyalty-zero-division",
        service="checkout-api",
        runtime="python",
        kind="exception",
        description="points_per_dollar divides by dollars_spent, zero for a new loyalty account",
        expected_count=1,
    ),
    DemoBug(
        id="checkout-payment-provider-502",
        service="checkout-api",
        runtime="python",
        kind="span_error",
        description="the payment provider answers 502 and the client span fails with no status "
        "message; the order is queued",
        expected_count=50,
    ),
    DemoBug(
        id="inventory-stock-check-constraint",
        service="inventory-service",
        runtime="java",
        kind="exception",
        description="StockLedger.decrement writes a negative quantity and PostgreSQL's check "
        "constraint rejects it; from reservations and from the bulk adjustment job",
        expected_count=30,
    ),
    DemoBug(
        id="inventory-unknown-warehouse-npe",
        service="inventory-service",
        runtime="java",
        kind="exception",
        description="WarehouseRegistry.find returns null for a decommissioned warehouse code and "
        "FulfilmentRouter dereferences it; from reservations and from restock planning",
        expected_count=24,
    ),
    DemoBug(
        id="inventory-startup-config-bind",
        service="inventory-service",
        runtime="java",
        kind="log",
        description="5.12.1 fails to start in staging: inventory.cache.ttl '15 minutes' cannot be "
        "bound to a Duration",
        expected_count=2,
    ),
    DemoBug(
        id="gateway-order-summary-undefined",
        service="web-gateway",
        runtime="nodejs",
        kind="exception",
        description="renderOrderSummary reads order.shipment.id for orders not yet shipped; from "
        "the order page and the account's order list",
        expected_count=100,
    ),
    DemoBug(
        id="gateway-price-null-tofixed",
        service="web-gateway",
        runtime="nodejs",
        kind="exception",
        description="1.9.0's formatPrice calls toFixed on a null price of unpriced catalogue items",
        expected_count=14,
    ),
    DemoBug(
        id="gateway-session-redis-refused",
        service="web-gateway",
        runtime="nodejs",
        kind="exception",
        description="the session store connects to a Redis replica that is down (ECONNREFUSED)",
        expected_count=30,
    ),
    DemoBug(
        id="gateway-recommendations-timeout",
        service="web-gateway",
        runtime="nodejs",
        kind="span_error",
        description="the recommendations proxy gives up after its 2 s upstream timeout",
        expected_count=60,
    ),
    DemoBug(
        id="shipping-batch-index-out-of-range",
        service="shipping-worker",
        runtime="go",
        kind="exception",
        description="Batcher.assign indexes one past the parcels of a split shipment; from the "
        "queue consumer and from the retry sweeper",
        expected_count=24,
    ),
    DemoBug(
        id="shipping-reconcile-nil-map",
        service="shipping-worker",
        runtime="go",
        kind="exception",
        description="the reconcile command writes into a CarrierTable whose map was never made",
        expected_count=1,
    ),
    DemoBug(
        id="shipping-label-timeout",
        service="shipping-worker",
        runtime="go",
        kind="log",
        description="carrier label requests exceed the 2 s client timeout and are logged as "
        "errors, with no stack trace",
        expected_count=260,
    ),
    DemoBug(
        id="shipping-routing-table-missing-fatal",
        service="shipping-worker",
        runtime="go",
        kind="log",
        description="0.15.0 in staging expects a routing table file that is not mounted and exits "
        "with a FATAL log",
        expected_count=3,
    ),
    DemoBug(
        id="notification-smtp-421",
        service="notification-service",
        runtime="python",
        kind="log",
        description="the mail relay answers 421 (try again later) and the send task logs an "
        "error with error.code SMTP_421 instead of retrying",
        expected_count=48,
    ),
]


def demo_data_path() -> Path:
    """The bundled demo file, as a path on disk."""
    resource = resources.files("rounds_bot") / "data" / DEMO_DATA_FILE
    return Path(str(resource))


def demo_bug(bug_id: str) -> DemoBug:
    """The manifest entry with this id."""
    for bug in DEMO_BUGS:
        if bug.id == bug_id:
            return bug
    raise KeyError(bug_id)
