"""Whole issue bodies per runtime and per kind, as a maintainer reads them: the title from the occurrence's
own words, in-app frames linked into a real git repository, the suspect commit from its history, the trend
chart. Golden files in tests/golden/issues/ (rerun with ROUNDS_UPDATE_GOLDEN=1 when a change is meant)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from test_code_links import commit, git

from rounds_bot.code.locate import CodeLocator
from rounds_bot.code.mapping import CodeMap
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.render.issue import issue_title, render_body
from rounds_bot.round.evidence import Evidence
from rounds_bot.round.filing import IssueStyle, issue_view
from rounds_bot.round.planning import IssuePlan
from rounds_bot.round.tally import Tally
from rounds_bot.signature import Signature

GOLDEN = Path(__file__).parent / "golden" / "issues"
UPDATE = os.environ.get("ROUNDS_UPDATE_GOLDEN") == "1"
T0 = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
FIRST_SEEN = T0 + timedelta(days=3)

PYTHON = """Traceback (most recent call last):
  File "/app/.venv/lib/python3.12/site-packages/fastapi/routing.py", line 301, in app
    raw_response = await run_endpoint_function(
  File "/app/checkout/api/orders.py", line 57, in place_order
    quote = pricing.quote_cart(cart, customer)
  File "/app/checkout/pricing.py", line 112, in quote_cart
    total = apply_discount(subtotal, cart.promotion)
  File "/app/checkout/pricing.py", line 88, in apply_discount
    rate = FX_RATES[promotion["currency"]]
KeyError: 'currency'
"""
JAVA = """java.lang.NullPointerException: Cannot invoke "com.acme.inventory.warehouse.Warehouse.region()" because the return value of "com.acme.inventory.warehouse.WarehouseRegistry.find(String)" is null
\tat com.acme.inventory.routing.FulfilmentRouter.nearestWarehouse(FulfilmentRouter.java:73)
\tat com.acme.inventory.routing.FulfilmentRouter.route(FulfilmentRouter.java:48)
\tat com.acme.inventory.reservation.ReservationController.reserve(ReservationController.java:54)
\tat org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)
\tat java.base/java.lang.Thread.run(Thread.java:1583)
"""  # noqa: E501
NODE = """TypeError: Cannot read properties of undefined (reading 'id')
    at renderOrderSummary (/app/src/views/orderSummary.js:44:29)
    at Array.map (<anonymous>)
    at listOrders (/app/src/handlers/account.js:71:36)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
"""
GO = """panic: runtime error: index out of range [5] with length 5

goroutine 63 [running]:
github.com/acme/shipping-worker/internal/labels.(*Batcher).assign(0xc00016b048, {0xc000beb138, 0x5, 0x8})
\t/src/internal/labels/batcher.go:142 +0x2c8
github.com/acme/shipping-worker/internal/queue.(*Consumer).handle(0xc000df36b0, 0xc000e42658)
\t/src/internal/queue/consumer.go:88 +0x34c
"""

NPE = (
    'Cannot invoke "com.acme.inventory.warehouse.Warehouse.region()" because the return value of '
    '"com.acme.inventory.warehouse.WarehouseRegistry.find(String)" is null'
)

# The repository behind all four services: file, the line that crashes, what the "bug" commit put there.
CRASH_SITES = {
    "checkout/checkout/pricing.py": (88, '    rate = FX_RATES[promotion["currency"]]'),
    "checkout/checkout/api/orders.py": (57, "    quote = pricing.quote_cart(cart, customer)"),
    "inventory/src/main/java/com/acme/inventory/routing/FulfilmentRouter.java": (
        73,
        "        return registry.find(code).region();",
    ),
    "inventory/src/main/java/com/acme/inventory/routing/RouteCache.java": (1, "class RouteCache {}"),
    "web-gateway/src/views/orderSummary.js": (44, "  return order.customer.id;"),
    "shipping-worker/internal/labels/batcher.go": (142, "\tlabel := b.labels[i]"),
}


def source_file(line: int, text: str, length: int = 160) -> str:
    lines = [f"// line {n}" for n in range(1, length + 1)]
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def monorepo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("repo") / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = {path: source_file(line, "// not yet") for path, (line, _) in CRASH_SITES.items()}
    commit(repo, {**first, ".github/CODEOWNERS": "* @acme/core\n/checkout/ @acme/payments\n"}, "Start", T0)
    later = {path: source_file(line, text) for path, (line, text) in CRASH_SITES.items()}
    commit(repo, later, "Route by warehouse region", T0 + timedelta(days=2), author="Grace Hopper")
    commit(repo, {"README.md": "after the problem began\n"}, "Docs", T0 + timedelta(days=5))
    return repo


def occurrence(**fields) -> ErrorEvent:
    return ErrorEvent(
        event_id="e1", timestamp=FIRST_SEEN, service_version="2.3.1", environment="production", **fields
    )


SPAN_ATTRIBUTES = {
    "http.request.method": "POST",
    "url.full": "https://api.paymentsprovider.example/v1/charges",
    "server.address": "api.paymentsprovider.example",
    "http.response.status_code": 502,
}
CASES = {
    "python_exception": (
        "checkout-api",
        occurrence(error_type="KeyError", message="'currency'", stacktrace=PYTHON),
    ),
    "java_exception": (
        "inventory-service",
        occurrence(
            error_type="java.lang.NullPointerException",
            message=NPE,
            stacktrace=JAVA,
        ),
    ),
    "node_exception": (
        "web-gateway",
        occurrence(
            error_type="TypeError",
            message="Cannot read properties of undefined (reading 'id')",
            stacktrace=NODE,
        ),
    ),
    "go_panic": (
        "shipping-worker",
        occurrence(
            error_type="runtime.boundsError",
            message="runtime error: index out of range [5] with length 5",
            stacktrace=GO,
        ),
    ),
    "http_span_error": (
        "checkout-api",
        occurrence(kind="span_error", error_type="502", message="POST", attributes=SPAN_ATTRIBUTES),
    ),
    "error_log": (
        "notification-service",
        occurrence(
            kind="log",
            error_code="SMTP_421",
            message="Delivery of message <[REDACTED:email]> to customer 48317 failed: (421, b'4.7.0 "
            "mx2.relay.mailhost.example Service not available, closing transmission channel')",
        ),
    ),
}


def plan_for(service: str, event: ErrorEvent) -> IssuePlan:
    tally = Tally(
        assignment=Assignment(
            signature_id=f"sig_{service}",
            tier="new",
            fingerprint_hash="f" * 64,
            fingerprint_version="rounds-fp:1",
            explanation="+ fingerprint: rounds-fp:1",
            title="(the grouping engine's title)",
            normalized_message=normalize_uncached(event.message),
        )
    )
    for hour, count in enumerate((3, 9, 4, 0, 12)):
        moment = FIRST_SEEN + timedelta(hours=hour)
        sample = event.model_copy(update={"event_id": f"e{hour}", "timestamp": moment, "service": service})
        tally.add(sample, count or 1, moment, moment) if count else None
    return IssuePlan(
        tally.assignment.signature_id, "new", tally, Signature.first(tally, None, run_id="r", now=T0)
    )


@pytest.mark.parametrize("name", list(CASES))
def test_an_issue_body_reads_well_for_each_runtime_and_kind(name, monorepo):
    service, event = CASES[name]
    plan = plan_for(service, event)
    locator = CodeLocator(
        monorepo,
        CodeMap.of_checkout(monorepo),
        InAppRules(),
        repository="acme/shop",
        server="https://github.com",
    )
    tally = plan.tally
    assert tally is not None
    evidence = Evidence(code=locator.locate(plan.signature), occurrences=_counts(tally))
    view = issue_view(plan, None, evidence, IssueStyle(charts=True))
    head = git(monorepo, "rev-parse", "HEAD")
    text = f"# {issue_title(view)}\n\n{render_body(view)}".replace(head, "<head>")
    path = GOLDEN / f"{name}.md"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} changed; rerun with ROUNDS_UPDATE_GOLDEN=1 if meant"
    )


def test_each_traced_body_links_its_crash_site_and_names_the_suspect_commit(monorepo):
    for name in ("python_exception", "java_exception", "node_exception", "go_panic"):
        body = (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
        assert "](https://github.com/acme/shop/blob/<head>/" in body, name
        assert (
            "**Suspect commit**" in body and "Route by warehouse region" in body and "Grace Hopper" in body
        ), name
        assert "```mermaid\nxychart-beta" in body, name
    for name in ("http_span_error", "error_log"):
        body = (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
        assert "## Where it happened" not in body and "```mermaid" in body, name


def _counts(tally: Tally) -> dict[datetime, int]:
    return {datetime.fromisoformat(bucket): count for bucket, count in tally.buckets.items()}


def test_a_located_diagnosis_shows_the_fault_beside_the_crash_site(monorepo):
    from rounds_bot.diagnosis.model import Diagnosis

    service, event = CASES["python_exception"]
    plan = plan_for(service, event)
    locator = CodeLocator(
        monorepo,
        CodeMap.of_checkout(monorepo),
        InAppRules(),
        repository="acme/shop",
        server="https://github.com",
    )
    code = locator.locate(plan.signature)
    crash = next(frame for frame in code.frames if frame.repo_path and frame.line)
    located = Diagnosis.model_validate(
        {
            "classification": "server_bug",
            "root_cause": "r",
            "suggested_fix": "f",
            "confidence": "high",
            "fault_location": {"path": "checkout/app.py", "function": "place_order", "start_line": 3},
        }
    )
    body = render_body(issue_view(plan, located, Evidence(code=code), IssueStyle(charts=False)))
    assert "### Where the fault is" in body
    assert "- Fault: `checkout/app.py:3` in `place_order`" in body
    assert f"- Crash site: `{crash.repo_path}:{crash.line}`" in body
