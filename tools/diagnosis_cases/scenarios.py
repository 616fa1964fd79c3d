"""Client-misuse, documentation-gap, dependency and abstain cases on a small sample service.

The service (`_repos/shop` in the case folder) is written for the eval: an order API, its validation, and
clients of a payment provider, a search cluster, a mail relay, a cache and a database. Each case is what
production telemetry would show for one situation: the log line or span of the failing call with its HTTP
attributes and, for an exception, the traceback through the service's code, its line numbers read from the
sample files so they are right. The ground truth is the class and the function that rejects the call or
calls the dependency; abstain cases carry too little to decide. The situations are rows of `scenarios.toml`.
"""

from __future__ import annotations

import hashlib
import tomllib
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


#: the class of each kind of case
CLASSES = {
    "client_misuse": "client_misuse",
    "documentation_gap": "documentation_gap",
    "dependency": "dependency_failure",
    "abstain": "unknown",
}
API = "shop.errors.ApiError"
DEP = "shop.errors.DependencyError"
GAP = "documentation_gap"
TABLE = Path(__file__).with_name("scenarios.toml")


@dataclass(frozen=True)
class Scenario:
    """One row of `scenarios.toml` (its header says what each field means)."""

    id: str
    kind: str
    route: str
    status: int
    message: str
    place: str | None = None
    clients: tuple[str, ...] = ("web",)
    attributes: dict[str, str | int | float] = field(default_factory=dict)
    traceback: bool = False
    span: bool = False
    error_type: str = API
    missing: str = ""

    @property
    def classification(self) -> str:
        return CLASSES[self.kind]


def scenarios(table: Path = TABLE) -> list[Scenario]:
    """Every row of the table, kind by kind in the table's order; a row with an unknown field or place
    is an error that names it."""
    found = []
    for kind, rows in tomllib.loads(table.read_text(encoding="utf-8")).items():
        if kind not in CLASSES:
            raise ValueError(f"{table.name}: [[{kind}]] is not a case kind ({', '.join(CLASSES)})")
        for row in rows:
            defaults: dict[str, Any] = {"traceback": True, "error_type": DEP} if kind == "dependency" else {}
            try:
                scenario = Scenario(
                    kind=kind, **{**defaults, **row, "clients": tuple(row.get("clients", ["web"]))}
                )
            except TypeError as error:  # a field the table does not have, or a required one left out
                raise ValueError(f"{table.name}: {row.get('id', f'a [[{kind}]] row')}: {error}") from None
            if scenario.place is not None and scenario.place not in PLACES:
                raise ValueError(f"{table.name}: {scenario.id}: no place {scenario.place!r} in PLACES")
            found.append(scenario)
    return found


def cases() -> list[dict[str, Any]]:
    return [_case(scenario) for scenario in scenarios()]


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
        event["error_type"] = scenario.error_type
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
    lines.append(f"{scenario.error_type}: {scenario.message}")
    return "\n".join(lines)
