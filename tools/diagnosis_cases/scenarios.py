"""Client-misuse, documentation-gap, dependency and abstain cases on a small sample service.

The service (`_repos/shop` in the case folder) is written for the eval: an order API, its validation, and
clients of a payment provider, a search cluster, a mail relay, a cache and a database. Each case is what
production telemetry would show for one situation: the log line or span of the failing call with its HTTP
attributes and, for an exception, the traceback through the service's code, its line numbers read from the
sample files so they are right. The ground truth is the class and the function that rejects the call or
calls the dependency; abstain cases carry too little to decide.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPOSITORY = "_repos/shop"
ROOT = Path(__file__).resolve().parents[2] / "evals" / "diagnosis" / "cases" / REPOSITORY
WHEN = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)

#: (file, function, a text on the line that raises) for each place the cases fail
PLACES = {
    "currency": ("shop/api/orders.py", "validate_order", '"INVALID_CURRENCY"'),
    "empty": ("shop/api/orders.py", "validate_order", '"EMPTY_ORDER"'),
    "too_many": ("shop/api/orders.py", "validate_order", '"INVALID_ORDER"'),
    "quantity": ("shop/api/orders.py", "validate_order", '"INVALID_QUANTITY"'),
    "no_token": ("shop/api/auth.py", "authenticate", '"missing bearer token"'),
    "unknown_token": ("shop/api/auth.py", "authenticate", '"unknown token"'),
    "expired": ("shop/api/auth.py", "authenticate", '"TOKEN_EXPIRED"'),
    "scope": ("shop/api/auth.py", "require_scope", '"FORBIDDEN"'),
    "rate": ("shop/api/rate_limit.py", "check_rate", '"RATE_LIMITED"'),
    "no_signature": ("shop/api/webhooks.py", "verify_signature", '"MISSING_SIGNATURE"'),
    "bad_signature": ("shop/api/webhooks.py", "verify_signature", '"BAD_SIGNATURE"'),
    "coupon_missing": ("shop/api/coupons.py", "redeem", '"COUPON_NOT_FOUND"'),
    "coupon_used": ("shop/api/coupons.py", "redeem", '"COUPON_USED"'),
    "coupon_minimum": ("shop/api/coupons.py", "redeem", '"COUPON_NOT_APPLICABLE"'),
    "page": ("shop/api/catalog.py", "list_products", '"INVALID_PAGE"'),
    "page_size": ("shop/api/catalog.py", "list_products", '"INVALID_ARGUMENT"'),
    "date": ("shop/api/deliveries.py", "parse_delivery_date", '"INVALID_DATE"'),
    "sunday": ("shop/api/deliveries.py", "schedule_delivery", '"NO_SUNDAY_DELIVERY"'),
    "payment_timeout": ("shop/clients/payments.py", "charge", "timed out after"),
    "payment_5xx": ("shop/clients/payments.py", "charge", "payment provider answered"),
    "search_down": ("shop/clients/search.py", "search_products", "search unavailable"),
    "search_5xx": ("shop/clients/search.py", "search_products", "search answered"),
    "mail": ("shop/clients/mail.py", "send_receipt", "mail relay failed"),
    "cache": ("shop/clients/cache.py", "cached_cart", "CACHE.get("),
    "db_connect": ("shop/storage/db.py", "connect", "psycopg.connect("),
    "db_insert": ("shop/storage/db.py", "insert_order", "connection.execute("),
}
#: the real fix of a place whose situation a change to the service fixes (a documentation gap): its folder in
#: `_repos/shop-fixes/`, holding `fix.patch` and the bug's tests under `repo/` (kept out of the diagnosed
#: checkout); they fail on the service as it is and pass once the patch is applied
FIXES = {
    "too_many": "too-many-items",
    "page_size": "page-size",
    "date": "delivery-date",
    "sunday": "sunday",
    "coupon_minimum": "coupon-minimum",
}
FIXES_FOLDER = "_repos/shop-fixes"
#: who calls each file's functions, outermost first: (file, function, text on the calling line)
CALLERS = {
    "shop/api/orders.py:validate_order": [("shop/api/orders.py", "create_order", "validate_order(payload)")],
    "shop/api/deliveries.py:parse_delivery_date": [
        ("shop/api/deliveries.py", "schedule_delivery", "parse_delivery_date(value)")
    ],
    "shop/clients/payments.py:charge": [("shop/api/orders.py", "create_order", "charge(order[")],
    "shop/clients/search.py:search_products": [
        ("shop/api/catalog.py", "list_products", "return search_products(")
    ],
    "shop/storage/db.py:connect": [
        ("shop/api/orders.py", "create_order", "insert_order(payload["),
        ("shop/storage/db.py", "insert_order", "with connect()"),
    ],
    "shop/storage/db.py:insert_order": [("shop/api/orders.py", "create_order", "insert_order(payload[")],
}


@dataclass(frozen=True)
class Scenario:
    id: str
    kind: str
    classification: str
    route: str
    status: int
    message: str
    place: str | None = None
    error_type: str | None = None
    traceback: bool = False
    clients: tuple[str, ...] = ("web",)
    attributes: dict[str, str | int] = field(default_factory=dict)
    missing: str = ""
    span: bool = False


def _s(*args: Any, **kwargs: Any) -> Scenario:
    return Scenario(*args, **kwargs)


MISUSE, GAP, DEPENDENCY = "client_misuse", "documentation_gap", "dependency"
API = "shop.errors.ApiError"
DEP = "shop.errors.DependencyError"
SCENARIOS = [
    _s(
        "misuse-currency-jpy",
        MISUSE,
        MISUSE,
        "POST /orders",
        400,
        "INVALID_CURRENCY currency not supported (field currency)",
        "currency",
        clients=("mobile-app",),
        attributes={"order.currency": "JPY"},
    ),
    _s(
        "misuse-currency-lowercase",
        MISUSE,
        MISUSE,
        "POST /orders",
        400,
        "INVALID_CURRENCY currency not supported (field currency)",
        "currency",
        clients=("partner-acme",),
        attributes={"order.currency": "eur"},
    ),
    _s(
        "misuse-empty-order",
        MISUSE,
        MISUSE,
        "POST /orders",
        400,
        "EMPTY_ORDER an order needs at least one item (field items)",
        "empty",
        clients=("web",),
    ),
    _s(
        "misuse-quantity-zero",
        MISUSE,
        MISUSE,
        "POST /orders",
        400,
        "INVALID_QUANTITY quantity must be at least 1 (field quantity)",
        "quantity",
        clients=("pos-terminal",),
        attributes={"item.quantity": 0},
    ),
    _s(
        "misuse-quantity-negative",
        MISUSE,
        MISUSE,
        "POST /orders",
        400,
        "INVALID_QUANTITY quantity must be at least 1 (field quantity)",
        "quantity",
        clients=("partner-acme",),
        attributes={"item.quantity": -2},
    ),
    _s(
        "misuse-no-token",
        MISUSE,
        MISUSE,
        "POST /orders",
        401,
        "UNAUTHENTICATED missing bearer token",
        "no_token",
        clients=("curl/8.4.0",),
    ),
    _s(
        "misuse-revoked-token",
        MISUSE,
        MISUSE,
        "GET /products",
        401,
        "UNAUTHENTICATED unknown token",
        "unknown_token",
        clients=("partner-globex",),
    ),
    _s(
        "misuse-expired-token",
        MISUSE,
        MISUSE,
        "POST /orders",
        401,
        "TOKEN_EXPIRED token expired",
        "expired",
        clients=("batch-importer",),
        attributes={"token.age_seconds": 5400},
    ),
    _s(
        "misuse-missing-scope",
        MISUSE,
        MISUSE,
        "POST /orders",
        403,
        "FORBIDDEN missing scope orders:write",
        "scope",
        clients=("reporting-tool",),
    ),
    _s(
        "misuse-rate-limited",
        MISUSE,
        MISUSE,
        "GET /products",
        429,
        "RATE_LIMITED too many requests",
        "rate",
        clients=("price-scraper",),
        attributes={"client.requests_last_minute": 412},
    ),
    _s(
        "misuse-webhook-no-signature",
        MISUSE,
        MISUSE,
        "POST /webhooks/payments",
        400,
        "MISSING_SIGNATURE X-Shop-Signature header is required",
        "no_signature",
        clients=("payments-sandbox",),
    ),
    _s(
        "misuse-webhook-bad-signature",
        MISUSE,
        MISUSE,
        "POST /webhooks/payments",
        401,
        "BAD_SIGNATURE signature does not match",
        "bad_signature",
        clients=("payments-relay",),
    ),
    _s(
        "misuse-coupon-unknown",
        MISUSE,
        MISUSE,
        "POST /coupons/redeem",
        404,
        "COUPON_NOT_FOUND coupon not found (field code)",
        "coupon_missing",
        clients=("web",),
    ),
    _s(
        "misuse-coupon-reused",
        MISUSE,
        MISUSE,
        "POST /coupons/redeem",
        409,
        "COUPON_USED coupon already redeemed (field code)",
        "coupon_used",
        clients=("mobile-app",),
    ),
    _s(
        "misuse-page-zero",
        MISUSE,
        MISUSE,
        "GET /products",
        400,
        "INVALID_PAGE page starts at 1 (field page)",
        "page",
        clients=("partner-globex",),
        attributes={"url.query": "q=lamp&page=0&page_size=20"},
    ),
    _s(
        "gap-too-many-items",
        GAP,
        GAP,
        "POST /orders",
        400,
        "INVALID_ORDER invalid order",
        "too_many",
        clients=("partner-acme", "bulk-buyer", "web"),
        attributes={"order.items": 64},
    ),
    _s(
        "gap-too-many-items-b2b",
        GAP,
        GAP,
        "POST /orders",
        400,
        "INVALID_ORDER invalid order",
        "too_many",
        traceback=True,
        error_type=API,
        clients=("b2b-portal", "partner-globex"),
        attributes={"order.items": 120},
    ),
    _s(
        "gap-page-size-200",
        GAP,
        GAP,
        "GET /products",
        400,
        "INVALID_ARGUMENT bad request",
        "page_size",
        clients=("partner-acme", "price-scraper"),
        attributes={"url.query": "q=&page=1&page_size=200"},
    ),
    _s(
        "gap-page-size-500",
        GAP,
        GAP,
        "GET /products",
        400,
        "INVALID_ARGUMENT bad request",
        "page_size",
        clients=("catalog-sync", "mobile-app"),
        attributes={"url.query": "page=1&page_size=500"},
    ),
    _s(
        "gap-page-size-101",
        GAP,
        GAP,
        "GET /products",
        400,
        "INVALID_ARGUMENT bad request",
        "page_size",
        traceback=True,
        error_type=API,
        clients=("web", "partner-globex"),
        attributes={"url.query": "page=3&page_size=101"},
    ),
    _s(
        "gap-date-european",
        GAP,
        GAP,
        "POST /deliveries",
        400,
        "INVALID_DATE invalid date",
        "date",
        clients=("partner-acme", "web"),
        attributes={"delivery.date": "25/12/2024"},
    ),
    _s(
        "gap-date-datetime",
        GAP,
        GAP,
        "POST /deliveries",
        400,
        "INVALID_DATE invalid date",
        "date",
        traceback=True,
        error_type=API,
        clients=("mobile-app", "pos-terminal"),
        attributes={"delivery.date": "2024-12-25T10:00"},
    ),
    _s(
        "gap-date-words",
        GAP,
        GAP,
        "POST /deliveries",
        400,
        "INVALID_DATE invalid date",
        "date",
        clients=("partner-globex", "web"),
        attributes={"delivery.date": "Dec 24 2024"},
    ),
    _s(
        "gap-sunday",
        GAP,
        GAP,
        "POST /deliveries",
        400,
        "NO_SUNDAY_DELIVERY no deliveries on Sundays",
        "sunday",
        clients=("web", "mobile-app", "partner-acme"),
        attributes={"delivery.date": "2024-03-10"},
    ),
    _s(
        "gap-sunday-partner",
        GAP,
        GAP,
        "POST /deliveries",
        400,
        "NO_SUNDAY_DELIVERY no deliveries on Sundays",
        "sunday",
        traceback=True,
        error_type=API,
        clients=("partner-globex", "b2b-portal"),
        attributes={"delivery.date": "2024-03-17"},
    ),
    _s(
        "gap-coupon-minimum",
        GAP,
        GAP,
        "POST /coupons/redeem",
        422,
        "COUPON_NOT_APPLICABLE coupon not applicable",
        "coupon_minimum",
        clients=("web", "mobile-app"),
        attributes={"order.total": 12.5},
    ),
    _s(
        "gap-coupon-minimum-b2b",
        GAP,
        GAP,
        "POST /coupons/redeem",
        422,
        "COUPON_NOT_APPLICABLE coupon not applicable",
        "coupon_minimum",
        traceback=True,
        error_type=API,
        clients=("b2b-portal", "partner-acme"),
        attributes={"order.total": 30},
    ),
    _s(
        "dep-payment-502",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        502,
        "payment provider answered 502",
        "payment_5xx",
        DEP,
        True,
        attributes={"http.upstream": "payments.example.net"},
    ),
    _s(
        "dep-payment-503",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        502,
        "payment provider answered 503",
        "payment_5xx",
        DEP,
        True,
    ),
    _s(
        "dep-payment-504",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        502,
        "payment provider answered 504",
        "payment_5xx",
        DEP,
        True,
        span=True,
    ),
    _s(
        "dep-payment-timeout",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        504,
        "payment provider timed out after 5.0s",
        "payment_timeout",
        DEP,
        True,
    ),
    _s(
        "dep-search-503",
        DEPENDENCY,
        "dependency_failure",
        "GET /products",
        503,
        "search answered 503",
        "search_5xx",
        DEP,
        True,
    ),
    _s(
        "dep-search-429",
        DEPENDENCY,
        "dependency_failure",
        "GET /products",
        503,
        "search answered 429",
        "search_5xx",
        DEP,
        True,
        attributes={"search.cluster": "products-eu"},
    ),
    _s(
        "dep-search-refused",
        DEPENDENCY,
        "dependency_failure",
        "GET /products",
        503,
        "search unavailable: [Errno 111] Connection refused",
        "search_down",
        DEP,
        True,
    ),
    _s(
        "dep-search-timeout",
        DEPENDENCY,
        "dependency_failure",
        "GET /products",
        503,
        "search unavailable: timed out",
        "search_down",
        DEP,
        True,
        span=True,
    ),
    _s(
        "dep-mail-421",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        202,
        "mail relay failed: (421, b'4.3.2 Service not available, closing transmission channel')",
        "mail",
        DEP,
        True,
    ),
    _s(
        "dep-mail-timeout",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        202,
        "mail relay failed: timed out",
        "mail",
        DEP,
        True,
    ),
    _s(
        "dep-db-refused",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        500,
        'connection failed: connection to server at "db" (10.0.3.7), port 5432 failed: Connection refused',
        "db_connect",
        "psycopg.OperationalError",
        True,
    ),
    _s(
        "dep-db-too-many-clients",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        500,
        "connection failed: FATAL:  sorry, too many clients already",
        "db_connect",
        "psycopg.OperationalError",
        True,
    ),
    _s(
        "dep-db-dns",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        500,
        'could not translate host name "db" to address: Temporary failure in name resolution',
        "db_connect",
        "psycopg.OperationalError",
        True,
    ),
    _s(
        "dep-db-disk-full",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        500,
        'could not extend file "base/16384/24576": No space left on device',
        "db_insert",
        "psycopg.errors.DiskFull",
        True,
    ),
    _s(
        "dep-cache-refused",
        DEPENDENCY,
        "dependency_failure",
        "GET /cart",
        500,
        "Error 111 connecting to cache:6379. Connection refused.",
        "cache",
        "redis.exceptions.ConnectionError",
        True,
    ),
    _s(
        "dep-cache-timeout",
        DEPENDENCY,
        "dependency_failure",
        "GET /cart",
        500,
        "Timeout reading from socket",
        "cache",
        "redis.exceptions.TimeoutError",
        True,
    ),
    _s(
        "dep-payment-502-span",
        DEPENDENCY,
        "dependency_failure",
        "POST /orders",
        502,
        "",
        "payment_5xx",
        span=True,
        attributes={"server.address": "payments.example.net", "http.response.status_code": 502},
    ),
    _s(
        "abstain-plain-500",
        "abstain",
        "unknown",
        "POST /orders",
        500,
        "Internal Server Error",
        missing="a stack trace or a log of the failing request",
    ),
    _s(
        "abstain-span-500",
        "abstain",
        "unknown",
        "GET /products",
        500,
        "",
        span=True,
        missing="any message or trace of the failed span",
    ),
    _s(
        "abstain-exit-137",
        "abstain",
        "unknown",
        "worker",
        0,
        "worker exited with code 137",
        missing="what the worker was doing, and the host's memory and OOM logs",
    ),
    _s(
        "abstain-legacy-billing",
        "abstain",
        "unknown",
        "POST /billing/sync",
        500,
        "BILLING_SYNC_FAILED",
        missing="the billing service's code and logs: it is not in this repository",
    ),
    _s(
        "abstain-client-aborted",
        "abstain",
        "unknown",
        "GET /products",
        499,
        "request aborted",
        missing="why the client closed the connection: the client's own logs",
    ),
    _s(
        "abstain-unexpected",
        "abstain",
        "unknown",
        "POST /deliveries",
        500,
        "unexpected error",
        missing="the exception behind the generic message",
    ),
]


def cases() -> list[dict[str, Any]]:
    return [_case(scenario) for scenario in SCENARIOS]


def line_of(path: str, text: str) -> int:
    """The 1-based line of `path` (in the sample repository) that holds `text`."""
    for number, line in enumerate((ROOT / path).read_text(encoding="utf-8").splitlines(), start=1):
        if text in line:
            return number
    raise LookupError(f"{text!r} is not in {path}")


def _case(scenario: Scenario) -> dict[str, Any]:
    case_id = f"scenario-{scenario.id}"
    faults = []
    if scenario.place is not None:
        path, function, marker = PLACES[scenario.place]
        line = line_of(path, marker)
        faults.append({"path": path, "function": function, "start_line": line, "end_line": line})
    events = [_event(case_id, scenario, index, client) for index, client in enumerate(scenario.clients)]
    truth: dict[str, Any] = {"classification": scenario.classification, "faults": faults}
    if scenario.kind == "abstain":
        truth.update(abstain=True, notes=f"missing: {scenario.missing}")
    if scenario.place in FIXES and scenario.kind == GAP:
        truth.update(_fix_truth(FIXES[scenario.place]))
    return {
        "format": 1,
        "id": case_id,
        "kind": scenario.kind,
        "origin": {"dataset": "scenario", "reference": scenario.id, "licence": "the project's own"},
        "service": "shop-api",
        "telemetry": events,
        "repository": {
            "revision": "sample",
            "files": sorted({fault["path"] for fault in faults}),
            "local": REPOSITORY,
        },
        "truth": truth,
    }


def _fix_truth(name: str) -> dict[str, Any]:
    folder = ROOT.parent.parent / FIXES_FOLDER / name
    patch = (folder / "fix.patch").read_text(encoding="utf-8")
    tests = sorted(str(p.relative_to(folder / "repo")) for p in (folder / "repo").rglob("test_*.py"))
    changed = sum(
        1 for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )
    return {
        "fix": {"reference": f"{FIXES_FOLDER}/{name}/fix.patch", "changed_lines": changed},
        "tests": {
            "failing_before": tests,
            "passing_after": tests,
            "command": "python -m pytest",
            "added": f"{FIXES_FOLDER}/{name}/repo",
        },
    }


def _event(case_id: str, scenario: Scenario, index: int, client: str) -> dict[str, Any]:
    method, _, route = scenario.route.partition(" ")
    attributes: dict[str, Any] = {**scenario.attributes, "user_agent.original": client}
    if route:
        attributes.update({"http.request.method": method, "http.route": route})
    if scenario.status:
        attributes.setdefault("http.response.status_code", scenario.status)
    event: dict[str, Any] = {
        "event_id": f"{case_id}-{index + 1}",
        "timestamp": (WHEN + timedelta(minutes=7 * index)).isoformat(),
        "service": "shop-api",
        "kind": "span_error" if scenario.span else ("exception" if scenario.traceback else "log"),
        "message": scenario.message,
        "attributes": attributes,
        "trace_id": hashlib.sha256(f"{case_id}-{index}".encode()).hexdigest()[:32] if scenario.span else None,
    }
    if not scenario.span and not scenario.traceback:
        event["severity"] = "ERROR" if scenario.status >= 500 or not scenario.status else "WARN"
    if scenario.traceback and scenario.place is not None:
        event["error_type"] = scenario.error_type or API
        event["stacktrace"] = _traceback(scenario)
    return {key: value for key, value in event.items() if value is not None}


def _traceback(scenario: Scenario) -> str:
    assert scenario.place is not None
    path, function, marker = PLACES[scenario.place]
    frames = [*CALLERS.get(f"{path}:{function}", []), (path, function, marker)]
    lines = ["Traceback (most recent call last):"]
    for file, name, text in frames:
        number = line_of(file, text)
        source = (ROOT / file).read_text(encoding="utf-8").splitlines()[number - 1].strip()
        lines += [f'  File "/srv/shop/{file}", line {number}, in {name}', f"    {source}"]
    lines.append(f"{scenario.error_type or API}: {scenario.message}")
    return "\n".join(lines)
