"""web-gateway: a Node.js 20 Express backend-for-frontend (OpenTelemetry JS 1.28)."""

from __future__ import annotations

import random

from opentelemetry._logs import SeverityNumber

from tools.demo.fleet import PRODUCTION, SERVICES, STAGING, instance
from tools.demo.plan import (
    BASE_NS,
    NS_PER_S,
    Instance,
    LogPlan,
    Occurrence,
    Scope,
    SpanPlan,
    burst_instant,
    error_status,
    exception_event,
    instant,
    millis,
)
from tools.demo.scenarios.common import Scenario, Traffic, http_server_span, pick
from tools.demo.stacktraces import NodeFrame, node_stack

SERVICE = "web-gateway"
HTTP = Scope("@opentelemetry/instrumentation-http", "0.56.0")
LOGGER = Scope("web-gateway")

#: Source positions per version (1.9.0 reworked the views; columns move with the code).
POSITIONS = {
    "1.8.2": {
        "renderOrderSummary": "orderSummary.js:42:31",
        "getOrder": "orders.js:41:18",
        "listOrders": "account.js:67:36",
    },
    "1.9.0": {
        "renderOrderSummary": "orderSummary.js:44:29",
        "getOrder": "orders.js:43:18",
        "listOrders": "account.js:71:36",
    },
}

_TICKS = NodeFrame("node:internal/process/task_queues:95:5", "process.processTicksAndRejections")
_WRAP_ASYNC = NodeFrame("/app/src/middleware/wrapAsync.js:6:7", "wrapAsync", is_async=True)


def _fail(span: SpanPlan, rng: random.Random, error_type: str, message: str, stack: str) -> SpanPlan:
    span.events.append(exception_event(span.end_ns - millis(rng, 0.1, 0.8), error_type, message, stack))
    span.status = error_status(message)
    span.carries_error = True
    return span


# --- gateway-order-summary-undefined ----------------------------------------------------------


def _order_summary_undefined(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    positions = POSITIONS[where.version]
    render = NodeFrame(f"/app/src/views/{positions['renderOrderSummary']}", "renderOrderSummary")
    if rng.random() < 0.55:
        order = rng.randrange(1_000_000, 9_999_999)
        frames = [
            render,
            NodeFrame(f"/app/src/handlers/{positions['getOrder']}", "getOrder"),
            _TICKS,
            _WRAP_ASYNC,
        ]
        span = http_server_span(
            HTTP, "GET", "/orders/:orderId", f"/orders/{order}", 500, time_ns, millis(rng, 30, 160)
        )
    else:
        frames = [
            render,
            NodeFrame("<anonymous>", "Array.map"),
            NodeFrame(f"/app/src/handlers/{positions['listOrders']}", "listOrders"),
            _TICKS,
            _WRAP_ASYNC,
        ]
        span = http_server_span(
            HTTP, "GET", "/account/orders", "/account/orders", 500, time_ns, millis(rng, 40, 220)
        )
    message = "Cannot read properties of undefined (reading 'id')"
    return Occurrence(
        time_ns, where, root=_fail(span, rng, "TypeError", message, node_stack("TypeError", message, frames))
    )


# --- gateway-price-null-tofixed ---------------------------------------------------------------


def _price_null_tofixed(rng: random.Random, time_ns: int) -> Occurrence:
    # Only 1.9.0 has this bug: staging all day, production after the deploy.
    deployed = time_ns >= BASE_NS + SERVICES[SERVICE].deploy_offset_s * NS_PER_S
    environment = PRODUCTION if deployed and rng.random() < 0.8 else STAGING
    where = instance(rng, SERVICE, time_ns, environment=environment)
    category = pick(rng, ("garden", "kitchen", "lighting", "outdoor", "storage"))
    frames = [
        NodeFrame("/app/src/lib/money.js:17:22", "formatPrice"),
        NodeFrame("/app/src/views/productCard.js:29:24"),
        NodeFrame("<anonymous>", "Array.map"),
        NodeFrame("/app/src/views/productGrid.js:12:30", "renderProductGrid"),
        NodeFrame("/app/src/handlers/catalog.js:54:20", "getCategory"),
        _TICKS,
        _WRAP_ASYNC,
    ]
    span = http_server_span(
        HTTP, "GET", "/catalog/:category", f"/catalog/{category}", 500, time_ns, millis(rng, 25, 120)
    )
    message = "Cannot read properties of null (reading 'toFixed')"
    return Occurrence(
        time_ns, where, root=_fail(span, rng, "TypeError", message, node_stack("TypeError", message, frames))
    )


def _after_gateway_deploy_or_staging(rng: random.Random) -> int:
    return instant(rng, 1800, 6 * 3600)


# --- gateway-session-redis-refused ------------------------------------------------------------


def _session_redis_refused(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns, environment=PRODUCTION)
    address = pick(rng, ("10.42.3.17:6379", "10.42.5.9:6379"))
    message = f"connect ECONNREFUSED {address}"
    stack = node_stack(
        "Error", message, [NodeFrame("node:net:1607:16", "TCPConnectWrapper.afterConnect [as oncomplete]")]
    )
    span = http_server_span(HTTP, "GET", "/api/session", "/api/session", 500, time_ns, millis(rng, 3, 15))
    # The session middleware copies Node's `err.code` onto the span before recording the error.
    span.attributes["error.code"] = "ECONNREFUSED"
    return Occurrence(time_ns, where, root=_fail(span, rng, "Error", message, stack))


# --- gateway-recommendations-timeout ----------------------------------------------------------


def _recommendations_timeout(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    elapsed_ms = 2000 + rng.randrange(1, 40)
    product = rng.randrange(100_000, 999_999)
    span = http_server_span(
        HTTP,
        "GET",
        "/api/recommendations/:productId",
        f"/api/recommendations/{product}",
        504,
        time_ns,
        millis(rng, elapsed_ms + 1, elapsed_ms + 4),
        **{"error.type": "504"},
    )
    span.status = error_status(f"upstream recommendations-service timed out after {elapsed_ms}ms")
    span.carries_error = True
    return Occurrence(time_ns, where, root=span)


def _two_slow_periods(rng: random.Random) -> int:
    centre = 1.5 * 3600 if rng.random() < 0.5 else 4.25 * 3600
    return burst_instant(rng, centre, 900)


SCENARIOS = [
    Scenario("gateway-order-summary-undefined", instant, _order_summary_undefined),
    Scenario("gateway-price-null-tofixed", _after_gateway_deploy_or_staging, _price_null_tofixed),
    Scenario(
        "gateway-session-redis-refused",
        lambda rng: burst_instant(rng, 2.7 * 3600, 300),
        _session_redis_refused,
    ),
    Scenario("gateway-recommendations-timeout", _two_slow_periods, _recommendations_timeout),
]


# --- ordinary traffic -------------------------------------------------------------------------


def _page_served(rng: random.Random, time_ns: int) -> Occurrence:
    where: Instance = instance(rng, SERVICE, time_ns)
    route, path = pick(
        rng,
        (
            ("/orders/:orderId", f"/orders/{rng.randrange(1_000_000, 9_999_999)}"),
            ("/catalog/:category", "/catalog/garden"),
            ("/api/recommendations/:productId", f"/api/recommendations/{rng.randrange(100_000, 999_999)}"),
            ("/api/session", "/api/session"),
        ),
    )
    status = 404 if route == "/orders/:orderId" and rng.random() < 0.15 else 200
    span = http_server_span(HTTP, "GET", route, path, status, time_ns, millis(rng, 8, 180))
    return Occurrence(time_ns, where, root=span)


def _upstream_retry_warning(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    log = LogPlan(
        time_ns,
        SeverityNumber.WARN,
        f"recommendations-service answered slowly ({rng.randrange(800, 1900)}ms); serving cached results",
        LOGGER,
        {"pid": 1, "hostname": where.host},
    )
    return Occurrence(time_ns, where, logs=[log])


TRAFFIC = [
    Traffic("gateway pages", 50, _page_served),
    Traffic("gateway slow upstream warnings", 30, _upstream_retry_warning),
]
