"""checkout-api: a Python 3.12 FastAPI service (OpenTelemetry Python instrumentation)."""

from __future__ import annotations

import random

from opentelemetry._logs import SeverityNumber
from opentelemetry.trace import SpanKind, StatusCode

from tools.demo.fleet import instance
from tools.demo.plan import (
    EventPlan,
    Instance,
    LogPlan,
    Occurrence,
    Scope,
    SpanPlan,
    error_status,
    exception_event,
    instant,
    millis,
    uuid4,
)
from tools.demo.scenarios.common import Scenario, Traffic, db_span, http_server_span
from tools.demo.stacktraces import (
    PY_DIRECT_CAUSE,
    PY_DURING_HANDLING,
    PyException,
    PyFrame,
    python_traceback,
)

SERVICE = "checkout-api"
FASTAPI = Scope("opentelemetry.instrumentation.fastapi", "0.54b0")
SQLALCHEMY = Scope("opentelemetry.instrumentation.sqlalchemy", "0.54b0")
HTTPX = Scope("opentelemetry.instrumentation.httpx", "0.54b0")
WORKER = Scope("checkout.workers.replay")
ORDERS_LOGGER = Scope("checkout.api.orders")
PAYMENTS_LOGGER = Scope("checkout.api.payments")
VENV = "/app/.venv/lib/python3.12/site-packages"

#: Where the application's lines moved between the two versions (2.3.1 added a guard clause
#: and logging near the top of each module).
LINES = {
    "2.3.0": {
        "apply_discount": 88,
        "quote_cart": 112,
        "place_order.quote": 57,
        "place_order.create": 61,
        "preview_cart": 34,
        "create_order": 139,
        "insert_order.flush": 64,
        "insert_order.raise": 67,
        "replay_one": 48,
        "loyalty_summary": 33,
        "points_per_dollar": 42,
    },
    "2.3.1": {
        "apply_discount": 91,
        "quote_cart": 115,
        "place_order.quote": 59,
        "place_order.create": 63,
        "preview_cart": 36,
        "create_order": 142,
        "insert_order.flush": 64,
        "insert_order.raise": 67,
        "replay_one": 51,
        "loyalty_summary": 35,
        "points_per_dollar": 44,
    },
}

_FRAMEWORK = (
    PyFrame(
        f"{VENV}/fastapi/routing.py",
        301,
        "app",
        "raw_response = await run_endpoint_function(",
    ),
    PyFrame(
        f"{VENV}/fastapi/routing.py",
        212,
        "run_endpoint_function",
        "return await dependant.call(**values)",
        "await dependant.call(**values)",
    ),
)


def _endpoint_failure(
    rng: random.Random,
    time_ns: int,
    where: Instance,
    method: str,
    route: str,
    path: str,
    event: EventPlan,
    *,
    duration_ms: tuple[float, float] = (20, 90),
) -> Occurrence:
    """A request whose handler raised: FastAPI's span records the exception and answers 500."""
    duration = millis(rng, *duration_ms)
    span = http_server_span(FASTAPI, method, route, path, 500, time_ns, duration)
    if rng.random() < 0.25:
        span.children.append(
            db_span(
                SQLALCHEMY,
                "SELECT",
                "carts",
                "SELECT carts.id, carts.customer_id, carts.promotion FROM carts WHERE carts.id = %(id)s",
                time_ns + millis(rng, 1, 4),
                millis(rng, 1, 6),
            )
        )
    event.time_ns = time_ns + duration - millis(rng, 0.2, 1)
    span.events.append(event)
    span.status = error_status(
        f"{event.attributes['exception.type']}: {event.attributes['exception.message']}"
    )
    span.carries_error = True
    return Occurrence(time_ns, where, root=span)


# --- checkout-discount-currency-keyerror ------------------------------------------------------


def _currency_keyerror(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    lines = LINES[where.version]
    cart_id = rng.randrange(40_000, 60_000)
    if rng.random() < 0.65:
        method, route, path = "POST", "/api/v1/checkout", "/api/v1/checkout"
        entry = PyFrame(
            "/app/checkout/api/orders.py",
            lines["place_order.quote"],
            "place_order",
            "quote = pricing.quote_cart(cart, customer)",
            "pricing.quote_cart(cart, customer)",
        )
    else:
        method, route = "GET", "/api/v1/carts/{cart_id}/preview"
        path = f"/api/v1/carts/{cart_id}/preview"
        entry = PyFrame(
            "/app/checkout/api/cart.py",
            lines["preview_cart"],
            "preview_cart",
            "return CartPreview.from_quote(pricing.quote_cart(cart, customer))",
            "pricing.quote_cart(cart, customer)",
        )
    frames = (
        *_FRAMEWORK,
        entry,
        PyFrame(
            "/app/checkout/pricing.py",
            lines["quote_cart"],
            "quote_cart",
            "total = apply_discount(subtotal, cart.promotion)",
            "apply_discount(subtotal, cart.promotion)",
        ),
        PyFrame(
            "/app/checkout/pricing.py",
            lines["apply_discount"],
            "apply_discount",
            'rate = FX_RATES[promotion["currency"]]',
            'promotion["currency"]',
            "~~~~~~~~~^^^^^^^^^^^^",
        ),
    )
    trace = python_traceback(PyException(frames, "KeyError", "'currency'"))
    event = exception_event(0, "KeyError", "'currency'", trace, **{"exception.escaped": "True"})
    occurrence = _endpoint_failure(rng, time_ns, where, method, route, path, event)
    occurrence.root.attributes["app.cart.id"] = cart_id  # type: ignore[union-attr]
    return occurrence


# --- checkout-duplicate-order -----------------------------------------------------------------


def _duplicate_order(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    lines = LINES[where.version]
    cart_id = rng.randrange(40_000, 60_000)
    order_id = uuid4(rng)
    key = uuid4(rng)
    violation = (
        'duplicate key value violates unique constraint "orders_idempotency_key_key"\n'
        f"DETAIL:  Key (idempotency_key)=({key}) already exists."
    )
    driver = PyException(
        (
            PyFrame(
                f"{VENV}/sqlalchemy/engine/base.py", 1967, "_exec_single_context", "self.dialect.do_execute("
            ),
            PyFrame(
                f"{VENV}/sqlalchemy/engine/default.py",
                941,
                "do_execute",
                "cursor.execute(statement, parameters)",
            ),
            PyFrame(f"{VENV}/psycopg/cursor.py", 97, "execute", "raise ex.with_traceback(None)"),
        ),
        "psycopg.errors.UniqueViolation",
        violation,
    )
    wrapped = PyException(
        (
            PyFrame(
                "/app/checkout/repository.py", lines["insert_order.flush"], "insert_order", "session.flush()"
            ),
            PyFrame(f"{VENV}/sqlalchemy/orm/session.py", 4352, "flush", "self._flush(objects)"),
            PyFrame(
                f"{VENV}/sqlalchemy/engine/base.py", 1967, "_exec_single_context", "self.dialect.do_execute("
            ),
        ),
        "sqlalchemy.exc.IntegrityError",
        f"(psycopg.errors.UniqueViolation) {violation}\n"
        "[SQL: INSERT INTO orders (id, cart_id, customer_id, idempotency_key, total_cents, currency) "
        "VALUES (%(id)s::UUID, %(cart_id)s, %(customer_id)s, %(idempotency_key)s::UUID, "
        "%(total_cents)s, %(currency)s)]\n"
        "(Background on this error at: https://sqlalche.me/e/20/gkpj)",
    )
    message = f"order {order_id} already exists for cart {cart_id}"
    from_api = rng.random() < 0.8
    if from_api:
        caller = PyFrame(
            "/app/checkout/api/orders.py",
            lines["place_order.create"],
            "place_order",
            "order = ordering.create_order(cart, quote, idempotency_key)",
            "ordering.create_order(cart, quote, idempotency_key)",
        )
    else:
        caller = PyFrame(
            "/app/checkout/workers/replay.py",
            lines["replay_one"],
            "replay_one",
            "ordering.create_order(pending.cart, pending.quote, pending.idempotency_key)",
        )
    raised = PyException(
        (
            caller,
            PyFrame(
                "/app/checkout/services/ordering.py",
                lines["create_order"],
                "create_order",
                "repository.insert_order(order)",
            ),
            PyFrame(
                "/app/checkout/repository.py",
                lines["insert_order.raise"],
                "insert_order",
                'raise DuplicateOrderError(f"order {order.id} already exists for cart {order.cart_id}")',
            ),
        ),
        "checkout.errors.DuplicateOrderError",
        message,
    )
    trace = python_traceback(driver, (PY_DIRECT_CAUSE, wrapped), (PY_DURING_HANDLING, raised))
    log_time = time_ns + millis(rng, 15, 60)
    if from_api:
        root = http_server_span(FASTAPI, "POST", "/api/v1/checkout", "/api/v1/checkout", 409, time_ns, 0)
        logger, body, function = ORDERS_LOGGER, f"Failed to place order for cart {cart_id}", "place_order"
    else:
        root = SpanPlan("replay_pending_orders", SpanKind.INTERNAL, WORKER, time_ns, 0)
        logger, body, function = WORKER, f"Replaying pending order {order_id} failed", "replay_one"
    root.end_ns = log_time + millis(rng, 1, 5)
    root.logs.append(
        LogPlan(
            log_time,
            SeverityNumber.ERROR,
            body,
            logger,
            {
                "code.file.path": caller.path,
                "code.function.name": function,
                "code.line.number": caller.line,
                "exception.type": "checkout.errors.DuplicateOrderError",
                "exception.message": message,
                "exception.stacktrace": trace,
            },
        )
    )
    return Occurrence(time_ns, where, root=root)


# --- checkout-loyalty-zero-division -----------------------------------------------------------


def _loyalty_zero_division(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns, environment="production")
    lines = LINES[where.version]
    frames = (
        *_FRAMEWORK,
        PyFrame(
            "/app/checkout/api/loyalty.py",
            lines["loyalty_summary"],
            "loyalty_summary",
            "rate = loyalty.points_per_dollar(account)",
            "loyalty.points_per_dollar(account)",
        ),
        PyFrame(
            "/app/checkout/loyalty.py",
            lines["points_per_dollar"],
            "points_per_dollar",
            "return account.points_earned / account.dollars_spent",
            "account.points_earned / account.dollars_spent",
            "~~~~~~~~~~~~~~~~~~~~~~^~~~~~~~~~~~~~~~~~~~~~~",
        ),
    )
    trace = python_traceback(PyException(frames, "ZeroDivisionError", "division by zero"))
    event = exception_event(
        0, "ZeroDivisionError", "division by zero", trace, **{"exception.escaped": "True"}
    )
    account = rng.randrange(100_000, 999_999)
    return _endpoint_failure(
        rng, time_ns, where, "GET", "/api/v1/loyalty/{account_id}", f"/api/v1/loyalty/{account}", event
    )


# --- checkout-payment-provider-502 ------------------------------------------------------------


def _payment_provider_502(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    order_id = uuid4(rng)
    call_start = time_ns + millis(rng, 3, 8)
    call = SpanPlan(
        "POST",
        SpanKind.CLIENT,
        HTTPX,
        call_start,
        call_start + millis(rng, 150, 900),
        attributes={
            "http.request.method": "POST",
            "url.full": "https://api.paymentsprovider.example/v1/charges",
            "server.address": "api.paymentsprovider.example",
            "server.port": 443,
            "http.response.status_code": 502,
            "error.type": "502",
        },
        # The httpx instrumentation marks a 5xx answer as an error without a description.
        status=error_status(None),
        carries_error=True,
    )
    root = http_server_span(
        FASTAPI, "POST", "/api/v1/payments", "/api/v1/payments", 202, time_ns, 0, **{"app.order.id": order_id}
    )
    root.end_ns = call.end_ns + millis(rng, 2, 6)
    root.children.append(call)
    root.logs.append(
        LogPlan(
            call.end_ns + millis(rng, 0.5, 1.5),
            SeverityNumber.WARN,
            f"Payment provider unavailable (HTTP 502); order {order_id} queued for retry",
            PAYMENTS_LOGGER,
        )
    )
    return Occurrence(time_ns, where, root=root)


SCENARIOS = [
    Scenario("checkout-discount-currency-keyerror", instant, _currency_keyerror),
    Scenario("checkout-duplicate-order", instant, _duplicate_order),
    Scenario(
        "checkout-loyalty-zero-division", lambda rng: instant(rng, 2 * 3600, 4 * 3600), _loyalty_zero_division
    ),
    Scenario("checkout-payment-provider-502", instant, _payment_provider_502),
]


# --- ordinary traffic -------------------------------------------------------------------------


def _order_placed(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    order_id = uuid4(rng)
    duration = millis(rng, 25, 140)
    root = http_server_span(FASTAPI, "POST", "/api/v1/checkout", "/api/v1/checkout", 201, time_ns, duration)
    root.children.append(
        db_span(
            SQLALCHEMY,
            "INSERT",
            "orders",
            "INSERT INTO orders (id, cart_id, customer_id, total_cents) "
            "VALUES (%(id)s::UUID, %(cart_id)s, ...)",
            time_ns + millis(rng, 5, 15),
            millis(rng, 2, 9),
        )
    )
    root.logs.append(
        LogPlan(
            time_ns + duration - millis(rng, 1, 3),
            SeverityNumber.INFO,
            f"Order {order_id} placed for cart {rng.randrange(40_000, 60_000)}",
            ORDERS_LOGGER,
        )
    )
    return Occurrence(time_ns, where, root=root)


def _cart_viewed(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    cart_id = rng.randrange(40_000, 60_000)
    found = rng.random() < 0.85
    root = http_server_span(
        FASTAPI,
        "GET",
        "/api/v1/carts/{cart_id}",
        f"/api/v1/carts/{cart_id}",
        200 if found else 404,
        time_ns,
        millis(rng, 4, 30),
    )
    if rng.random() < 0.3:
        root.events.append(
            EventPlan("cache.miss", time_ns + millis(rng, 0.5, 2), {"cache.key": f"cart:{cart_id}"})
        )
    if found and rng.random() < 0.2:
        root.status = (StatusCode.OK, None)
    return Occurrence(time_ns, where, root=root)


def _slow_query_warning(rng: random.Random, time_ns: int) -> Occurrence:
    where = instance(rng, SERVICE, time_ns)
    log = LogPlan(
        time_ns,
        SeverityNumber.WARN,
        f"Slow query on orders took {rng.randrange(500, 2500)}ms (threshold 500ms)",
        Scope("checkout.db"),
    )
    return Occurrence(time_ns, where, logs=[log])


TRAFFIC = [
    Traffic("checkout orders placed", 35, _order_placed),
    Traffic("checkout carts viewed", 35, _cart_viewed),
    Traffic("checkout slow queries", 25, _slow_query_warning),
]
