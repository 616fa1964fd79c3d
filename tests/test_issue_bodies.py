"""Whole issue bodies per runtime and per kind, as a maintainer reads them: the title from the occurrence's
own words (a log's from its template), the frames from the crash site the grouping engine chose, linked into a
real git repository, the suspect commit and owners of that line, the request a failed span made or served, a
log record's logger and source location, a cascade's cause and effect linked to each other, the trend chart
and a next step. Golden files in tests/golden/issues/ (rerun with ROUNDS_UPDATE_GOLDEN=1 when a change is
meant, and read the diff)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_code_links import commit, git

from rounds_bot.code.locate import CodeLocator
from rounds_bot.code.mapping import CodeMap
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import Assignment, ContextRecord, ErrorEvent
from rounds_bot.render.cascade_section import Cascade
from rounds_bot.render.issue import issue_title, render_body
from rounds_bot.render.telemetry import log_rows, other_attributes, request_rows, table
from rounds_bot.round.cascade import carry_over, causal_order, correlate_traces
from rounds_bot.round.evidence import IssueEvidence
from rounds_bot.round.filing import IssueStyle, issue_view
from rounds_bot.round.planning import IssuePlan
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.signature import Signature
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import CascadeLinks
from rounds_bot.tally import Tally
from rounds_bot.tracker.dryrun import DryRunTracker

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
JAVA_DRIVER = """org.springframework.dao.DataIntegrityViolationException: could not execute statement [ERROR: new row for relation "stock_levels" violates check constraint "stock_levels_quantity_check"]
\tat org.springframework.orm.jpa.vendor.HibernateJpaDialect.convertHibernateAccessException(HibernateJpaDialect.java:290)
\tat org.springframework.orm.jpa.JpaTransactionManager.doCommit(JpaTransactionManager.java:566)
\tat com.acme.inventory.stock.StockLedger$$SpringCGLIB$$0.decrement(<generated>)
\tat com.acme.inventory.reservation.ReservationService.reserve(ReservationService.java:88)
\tat com.acme.inventory.reservation.ReservationController.reserve(ReservationController.java:54)
\tat org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)
\tat java.base/java.lang.Thread.run(Thread.java:1583)
Caused by: org.postgresql.util.PSQLException: ERROR: new row for relation "stock_levels" violates check constraint "stock_levels_quantity_check"
\tat org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2733)
\tat org.postgresql.jdbc.PgPreparedStatement.executeUpdate(PgPreparedStatement.java:155)
\tat com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeUpdate(HikariProxyPreparedStatement.java)
\tat com.acme.inventory.stock.StockLedger.decrement(StockLedger.java:41)
\t... 5 more
"""  # noqa: E501
# A panic caught by a recovery helper: the helper's frames come first, above the runtime's `panic`.
GO = """panic: runtime error: index out of range [5] with length 5

goroutine 63 [running]:
runtime/debug.Stack()
\t/usr/local/go/src/runtime/debug/stack.go:26 +0x3c9
github.com/acme/shipping-worker/internal/telemetry.RecoverSpan({0x1b2e4c0, 0xc00062f1e0})
\t/src/internal/telemetry/recover.go:34 +0x35a
panic({0x15f3a40?, 0xc000149b68?})
\t/usr/local/go/src/runtime/panic.go:785 +0x23e
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
    "inventory/src/main/java/com/acme/inventory/reservation/ReservationService.java": (
        88,
        "        ledger.decrement(sku, warehouse, quantity);",
    ),
    "inventory/src/main/java/com/acme/inventory/stock/StockLedger.java": (41, "        repository.flush();"),
    "web-gateway/src/views/orderSummary.js": (44, "  return order.customer.id;"),
    "shipping-worker/internal/labels/batcher.go": (142, "\tlabel := b.labels[i]"),
    "shipping-worker/internal/telemetry/recover.go": (34, '\tlog.Printf("panic: %v\\n%s", r, debug.Stack())'),
    "notification/notification/tasks/email.py": (
        77,
        '        log.error("Delivery of message %s failed", mid)',
    ),
}
CODEOWNERS = (
    "* @acme/core\n/checkout/ @acme/payments\n/shipping-worker/ @acme/shipping\n"
    "/shipping-worker/internal/telemetry/ @acme/observability\n/notification/ @acme/messaging\n"
)


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
    commit(repo, {**first, ".github/CODEOWNERS": CODEOWNERS}, "Start", T0)
    later = {path: source_file(line, text) for path, (line, text) in CRASH_SITES.items()}
    commit(repo, later, "Route by warehouse region", T0 + timedelta(days=2), author="Grace Hopper")
    commit(repo, {"README.md": "after the problem began\n"}, "Docs", T0 + timedelta(days=5))
    return repo


def occurrence(**fields) -> ErrorEvent:
    return ErrorEvent(
        event_id="e1", timestamp=FIRST_SEEN, service_version="2.3.1", environment="production", **fields
    )


TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = {
    "http.request.method": "POST",
    "url.full": "https://api.paymentsprovider.example/v1/charges",
    "server.address": "api.paymentsprovider.example",
    "server.port": 443,
    "http.response.status_code": 502,
    "telemetry.sdk.language": "python",
}
SERVER_SPAN = {
    "http.request.method": "GET",
    "http.route": "/api/recommendations/:productId",
    "url.path": "/api/recommendations/369931",
    "url.scheme": "http",
    "http.response.status_code": 504,
    "telemetry.sdk.language": "nodejs",
}
SMTP = (
    "Delivery of message <[REDACTED:email]> to customer 48317 failed: (421, b'4.7.0 "
    "mx2.relay.mailhost.example Service not available, closing transmission channel')"
)
LOG_ATTRIBUTES = {
    "otel.scope.name": "notification.tasks.email",
    "smtp.relay": "mx2.relay.mailhost.example",
    "app.customer.id": 48317,
    "telemetry.sdk.language": "python",
}
CODE_ATTRIBUTES = {
    "code.file.path": "/app/notification/tasks/email.py",
    "code.function.name": "send_receipt",
    "code.line.number": 77,
}
NEIGHBOURS = [
    ContextRecord(
        timestamp=datetime(2026, 10, 4, 8, 59, 58, 120_000, tzinfo=UTC),
        severity="INFO",
        body="rendering receipt template | kind=`order-confirmation`",
    ),
    ContextRecord(
        timestamp=datetime(2026, 10, 4, 8, 59, 59, 870_000, tzinfo=UTC),
        severity="WARN",
        body="smtp.relay.internal:587 answered 421, retrying in 200ms <b>once</b>",
    ),
]

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
    "java_exception_through_a_driver": (
        "inventory-service",
        occurrence(
            error_type="org.springframework.dao.DataIntegrityViolationException",
            message='could not execute statement [ERROR: new row for relation "stock_levels" violates check '
            'constraint "stock_levels_quantity_check"]',
            stacktrace=JAVA_DRIVER,
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
    "client_span_error": (
        "checkout-api",
        occurrence(
            kind="span_error",
            error_type="502",
            message="POST",
            attributes=CLIENT_SPAN,
            trace_id=TRACE_ID,
            span_id="0961e4842ddc3ebc",
            parent_span_id="2150684b6da4ad69",
            span_kind="client",
        ),
    ),
    "server_span_error": (
        "web-gateway",
        occurrence(
            kind="span_error",
            error_type="504",
            message="upstream recommendations-service timed out after 2006ms",
            attributes=SERVER_SPAN,
            trace_id="4c9171adca6945eeb4728e2370d4a65b",
            span_id="61aa5894ee5bda8e",
            span_kind="server",
        ),
    ),
    "error_log": (
        "notification-service",
        occurrence(
            kind="log", error_code="SMTP_421", severity="ERROR", message=SMTP, attributes=LOG_ATTRIBUTES
        ),
    ),
    "error_log_with_code_attributes": (
        "notification-service",
        occurrence(
            kind="log",
            error_code="SMTP_421",
            severity="ERROR",
            message=SMTP,
            attributes={**LOG_ATTRIBUTES, **CODE_ATTRIBUTES},
            trace_id="6a25b5771f22e0b028cf2b76a414dc40",
            span_id="c3275a320b71401c",
        ),
    ),
    "error_log_with_neighbours": (
        "notification-service",
        occurrence(
            kind="log",
            error_code="SMTP_421",
            severity="ERROR",
            message=SMTP,
            attributes={**LOG_ATTRIBUTES, **CODE_ATTRIBUTES},
            trace_id="6a25b5771f22e0b028cf2b76a414dc40",
            span_id="c3275a320b71401c",
            context=NEIGHBOURS,
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


def locator_for(repo: Path) -> CodeLocator:
    return CodeLocator(
        repo, CodeMap.of_checkout(repo), InAppRules(), repository="acme/shop", server="https://github.com"
    )


def rendered(repo: Path, plan: IssuePlan, cascade: Cascade | None = None, refs: dict[str, str] | None = None):
    tally = plan.tally
    assert tally is not None
    evidence = IssueEvidence(
        code=locator_for(repo).locate(plan.signature),
        occurrences=_counts(tally),
        cascade=cascade,
        refs=refs or {},
    )
    view = issue_view(plan, None, evidence, IssueStyle(charts=True, diagnosis_on=False))
    head = git(repo, "rev-parse", "HEAD")
    return f"# {issue_title(view)}\n\n{render_body(view)}".replace(head, "<head>")


def matches_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.md"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} changed; rerun with ROUNDS_UPDATE_GOLDEN=1 if meant"
    )


@pytest.mark.parametrize("name", list(CASES))
def test_an_issue_body_reads_well_for_each_runtime_and_kind(name, monorepo):
    service, event = CASES[name]
    matches_golden(name, rendered(monorepo, plan_for(service, event)))


def test_each_traced_body_links_its_crash_site_and_names_the_suspect_commit(monorepo):
    for name in (
        "python_exception",
        "java_exception",
        "node_exception",
        "go_panic",
        "java_exception_through_a_driver",
    ):
        body = (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
        assert "](https://github.com/acme/shop/blob/<head>/" in body, name
        assert (
            "**Suspect commit**" in body and "Route by warehouse region" in body and "Grace Hopper" in body
        ), name
        assert "```mermaid\nxychart-beta" in body, name
        assert "— **crash site**" in body, name
    for name in ("client_span_error", "server_span_error", "error_log"):
        body = (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
        assert "## Where it happened" not in body and "```mermaid" in body, name
        assert "**Next step:** run `git grep -n -F " in body, name  # the command that finds the code


def test_a_recovered_go_panic_points_at_the_crash_not_at_the_recovery_helper(monorepo):
    body = (GOLDEN / "go_panic.md").read_text(encoding="utf-8")
    where = body.split("## Where it happened", 1)[1].split("<details>", 1)[0]
    assert (
        "batcher.go:142`](https://github.com/acme/shop/blob/<head>/shipping-worker/internal/labels/" in where
    )
    assert "recover.go" not in where  # above the runtime's panic: the helper's, counted, not listed
    assert "3 frames above it" in where
    assert "`@acme/shipping`" in where and "observability" not in where
    assert "open [`shipping-worker/internal/labels/batcher.go:142`]" in body


def test_another_owners_frames_are_not_listed_as_the_apps(monorepo):
    for name in ("java_exception_through_a_driver", "node_exception"):
        body = (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
        where = body.split("## Where it happened", 1)[1].split("<details>", 1)[0]
        app_lines = [line for line in where.splitlines() if line.startswith("- ") and "_" not in line[:4]]
        assert not any(
            marker in line for line in app_lines for marker in ("postgresql", "zaxxer", "Array.map")
        ), name
    body = (GOLDEN / "node_exception.md").read_text(encoding="utf-8")
    assert "- _1 frame of a library or the runtime_ (`Array.map`)" in body


def test_a_log_error_shows_its_logger_and_where_its_code_attributes_say_it_was_logged(monorepo):
    body = (GOLDEN / "error_log_with_code_attributes.md").read_text(encoding="utf-8")
    assert "| Logger | `notification.tasks.email` |" in body
    assert "Logged at [`notification/notification/tasks/email.py:77`](" in body
    assert "`@acme/messaging`" in body and "**Suspect commit**" in body
    assert "| Trace | `6a25b5771f22e0b028cf2b76a414dc40` |" in body
    plain = (GOLDEN / "error_log.md").read_text(encoding="utf-8")
    assert "| Logger | `notification.tasks.email` |" in plain and "## Where it happened" not in plain


def test_a_log_error_lists_the_records_logged_before_it_as_code_under_its_table(monorepo):
    body = (GOLDEN / "error_log_with_neighbours.md").read_text(encoding="utf-8")
    table_end = body.index("| Trace | `6a25b5771f22e0b028cf2b76a414dc40` |")
    block = body.index("### Before the error")
    assert table_end < block < body.index("## Trend")
    assert "- 08:59:58.120 INFO `` rendering receipt template | kind=`order-confirmation` ``" in body
    assert "- 08:59:59.870 WARN `smtp.relay.internal:587 answered 421, retrying in 200ms <b>once</b>`" in body
    for without in ("error_log", "error_log_with_code_attributes"):
        assert "Before the error" not in (GOLDEN / f"{without}.md").read_text(encoding="utf-8")


def test_the_older_code_attribute_names_place_a_log_just_as_well(monorepo):
    older = {
        "code.filepath": "/app/notification/tasks/email.py",
        "code.function": "send_receipt",
        "code.lineno": 77,
    }
    event = occurrence(kind="log", severity="ERROR", message=SMTP, attributes={**LOG_ATTRIBUTES, **older})
    context = locator_for(monorepo).locate(plan_for("notification-service", event).signature)
    assert context.source == "attributes" and context.blamed is not None
    assert (context.blamed.repo_path, context.blamed.line) == ("notification/notification/tasks/email.py", 77)
    assert context.owners == ["@acme/messaging"]


def test_a_span_error_shows_the_request_and_its_trace(monorepo):
    client = (GOLDEN / "client_span_error.md").read_text(encoding="utf-8")
    for row in (
        "| Span | client span in checkout-api |",
        "| Method | `POST` |",
        "| URL | `https://api.paymentsprovider.example/v1/charges` |",
        "| Peer | `api.paymentsprovider.example:443` |",
        "| Status | `502` |",
        f"| Trace | `{TRACE_ID}` |",
        "| Span id | `0961e4842ddc3ebc`, parent `2150684b6da4ad69` |",
    ):
        assert row in client
    assert "\u200b" not in client.split("<!--", 1)[0]  # nothing invisible inside a URL or a word
    server = (GOLDEN / "server_span_error.md").read_text(encoding="utf-8")
    assert "| Route | `/api/recommendations/:productId` |" in server
    assert server.startswith("# [web-gateway] 504 on GET /api/recommendations/:productId: upstream")


# A request through the gateway to the checkout, where a KeyError is raised: the gateway's call fails with
# a 502. The checkout's server span is the child of the gateway's client span.
CASCADE_CAUSE = occurrence(
    error_type="KeyError",
    message="'currency'",
    stacktrace=PYTHON,
    trace_id=TRACE_ID,
    span_id="a1542a9f608eebcb",
    parent_span_id="0961e4842ddc3ebc",
    span_kind="server",
    attributes={
        "http.request.method": "POST",
        "http.route": "/api/v1/checkout",
        "http.response.status_code": 500,
    },
)
CASCADE_EFFECT = occurrence(
    kind="span_error",
    error_type="502",
    message="POST",
    trace_id=TRACE_ID,
    span_id="0961e4842ddc3ebc",
    parent_span_id="2150684b6da4ad69",
    span_kind="client",
    attributes={
        "http.request.method": "POST",
        "url.full": "http://checkout-api:8000/api/v1/checkout",
        "server.address": "checkout-api",
        "server.port": 8000,
        "http.response.status_code": 502,
    },
)


def cascade_plans() -> tuple[IssuePlan, IssuePlan, list[ErrorEvent], dict[str, str]]:
    """The two signatures, three traces each holding both errors (the checkout's first: the gateway's call
    outlives its callee), and the signature each error was counted in."""
    cause = plan_for("checkout-api", CASCADE_CAUSE)
    effect = plan_for("web-gateway", CASCADE_EFFECT)
    events, counted_in = [], {}
    for n in range(3):
        moment = FIRST_SEEN + timedelta(minutes=n)
        for plan, event, later in ((cause, CASCADE_CAUSE, 0), (effect, CASCADE_EFFECT, 40)):
            assert plan.tally is not None
            one = event.model_copy(
                update={
                    "event_id": f"{plan.signature_id}-{n}",
                    "service": plan.signature.service,
                    "trace_id": TRACE_ID if n == 0 else f"{n}{TRACE_ID[1:]}",
                    "timestamp": moment + timedelta(milliseconds=later),
                }
            )
            counted_in[one.event_id] = plan.signature_id
            events.append(one)
    return cause, effect, events, counted_in


def test_a_cascade_reads_as_one_problem_its_two_issues_linked(monorepo):
    cause, effect, events, counted_in = cascade_plans()
    after = {cause.signature_id: cause.signature, effect.signature_id: effect.signature}
    cascades = correlate_traces(events, counted_in, after)
    assert cascades[effect.signature_id].caused_by == {cause.signature_id: 3}
    assert cascades[cause.signature_id].causes == {effect.signature_id: 3}
    refs = {cause.signature_id: "#12", effect.signature_id: "#15"}
    cause_body = rendered(monorepo, cause, cascades[cause.signature_id], refs)
    effect_body = rendered(monorepo, effect, cascades[effect.signature_id], refs)
    matches_golden("cascade_cause", cause_body)
    matches_golden("cascade_effect", effect_body)
    assert "**Causes** #15 (3 traces)" in cause_body
    assert "**Caused by** #12 (3 traces)" in effect_body
    assert "**Next step:** start at #12" in effect_body
    path = effect_body.split("## Error path", 1)[1]
    assert path.index("**checkout-api**") < path.index("**web-gateway**")  # the callee's error first


def _counts(tally: Tally) -> dict[datetime, int]:
    return {datetime.fromisoformat(bucket): count for bucket, count in tally.buckets.items()}


def _span(trace: str, span: str, parent: str, name: str, kind: int, end: int, **extra: object) -> dict:
    attributes = [
        {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
        for key, value in extra.pop("attributes", {}).items()  # type: ignore[union-attr]
    ]
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(end - 50_000_000),
        "endTimeUnixNano": str(end),
        "attributes": attributes,
        "status": {"code": 2},
        **extra,
    }


def _export(service: str, spans: list[dict]) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]})


def cascade_file(path: Path, traces: int) -> Path:
    """Traces through the gateway to the checkout: the checkout raises, the gateway's call gets a 502."""
    lines = []
    start = int((FIRST_SEEN - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1e9)
    for n in range(traces):
        trace = f"{n:02x}" + TRACE_ID[2:]
        end = start + n * 60_000_000_000
        exception = {
            "timeUnixNano": str(end - 10_000_000),
            "name": "exception",
            "attributes": [
                {"key": "exception.type", "value": {"stringValue": "KeyError"}},
                {"key": "exception.message", "value": {"stringValue": "'currency'"}},
                {"key": "exception.stacktrace", "value": {"stringValue": PYTHON}},
            ],
        }
        server = _span(trace, "a1542a9f608eebcb", "0961e4842ddc3ebc", "POST /api/v1/checkout", 2, end,
                       events=[exception], attributes={"http.route": "/api/v1/checkout"})  # fmt: skip
        call = {
            "http.request.method": "POST",
            "url.full": "http://checkout-api:8000/api/v1/checkout",
            "server.address": "checkout-api",
            "http.response.status_code": 502,
        }
        client = _span(
            trace, "0961e4842ddc3ebc", "2150684b6da4ad69", "POST", 3, end + 40_000_000, attributes=call
        )
        lines += [
            _export("web-gateway", [client]),
            _export("checkout-api", [server]),
        ]  # the effect read first
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_round_files_a_cascade_as_two_issues_that_name_each_other(clean_env, fresh_db, tmp_path):
    source = OtlpFileSource(cascade_file(tmp_path / "cascade.jsonl", traces=3))
    drafts = tmp_path / "drafts"
    now = FIRST_SEEN + timedelta(hours=1)
    run_round(load_settings(), source, DryRunTracker(drafts), fresh_db, now=now, reads_whole_history=True)
    bodies = {path.name: path.read_text(encoding="utf-8") for path in drafts.glob("sig_*.md")}
    assert len(bodies) == 2
    (cause_name, cause), (effect_name, effect) = sorted(
        bodies.items(), key=lambda item: "KeyError" not in item[1]
    )
    # each names the other's draft, though one of them was filed before the other existed
    assert f"**Causes** [{cause_name}]".replace(cause_name, effect_name) in cause
    assert f"**Caused by** [{cause_name}]({cause_name}) (3 traces)" in effect
    assert f"**Next step:** start at [{cause_name}]({cause_name})" in effect
    assert "| Span id | `0961e4842ddc3ebc`, parent `2150684b6da4ad69` |" in effect
    # a URL the redaction took for a secret (`checkout-api:8000/...`) is shown as it came, never a crash
    assert "502 from POST checkout-api" in effect


def gateway_only_file(path: Path, at: datetime, traces: int) -> Path:
    """Later traces where only the gateway's call failed: no error of the checkout shares them."""
    start = int((at - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1e9)
    call = {"http.request.method": "POST", "url.full": "http://checkout-api:8000/api/v1/checkout",
            "server.address": "checkout-api", "http.response.status_code": 502}  # fmt: skip
    spans = [
        _span(
            f"f{n:x}" + TRACE_ID[2:],
            "0961e4842ddc3ebc",
            "2150684b6da4ad69",
            "POST",
            3,
            start + n * 60_000_000_000,
            attributes=call,
        )
        for n in range(traces)
    ]
    path.write_text(_export("web-gateway", spans) + "\n", encoding="utf-8")
    return path


def test_a_later_update_still_names_the_cause_a_round_saw_before(clean_env, fresh_db, tmp_path):
    drafts = tmp_path / "drafts"
    first = OtlpFileSource(cascade_file(tmp_path / "cascade.jsonl", traces=3))
    now = FIRST_SEEN + timedelta(hours=1)
    run_round(load_settings(), first, DryRunTracker(drafts), fresh_db, now=now, reads_whole_history=True)
    later = OtlpFileSource(gateway_only_file(tmp_path / "later.jsonl", now + timedelta(minutes=5), traces=2))
    run_round(load_settings(), later, DryRunTracker(drafts), fresh_db, now=now + timedelta(hours=1),
              reads_whole_history=True)  # fmt: skip
    bodies = {path.name: path.read_text(encoding="utf-8") for path in drafts.glob("sig_*.md")}
    cause_name = next(name for name, body in bodies.items() if "KeyError" in body)
    effect = next(body for body in bodies.values() if "KeyError" not in body)
    assert "| In this round | 2 |" in effect and "| Total | 5 |" in effect  # the update happened
    assert f"**Caused by** [{cause_name}]({cause_name}) (3 traces)" in effect
    assert "## Error path" not in effect  # no trace of this round shows it


def test_a_kept_cascade_link_lasts_until_either_problem_is_gone():
    kept = {
        "sig_effect": CascadeLinks(caused_by={"sig_cause": 3}),
        "sig_cause": CascadeLinks(causes={"sig_effect": 3}),
    }
    found = {"sig_effect": Cascade(caused_by={"sig_cause": 1}, trace_id="t", path=())}
    cascades, links = carry_over(found, kept, {})
    assert cascades["sig_effect"].caused_by == {"sig_cause": 4} and cascades["sig_effect"].trace_id == "t"
    assert cascades["sig_cause"].causes == {"sig_effect": 3}
    assert links["sig_effect"].caused_by == {"sig_cause": 4}
    cascades, links = carry_over({}, kept, {"sig_cause": "resolved"})
    assert "sig_effect" not in cascades and not links["sig_effect"]  # forgotten, and stored as forgotten
    assert not links["sig_cause"]
    cascades, _ = carry_over({}, kept, {"sig_effect": "merged", "sig_cause": "open"})
    assert set(cascades) == set()


def test_a_callees_error_comes_before_its_callers_whatever_the_clock_says():
    caller = occurrence(
        kind="span_error", service="web-gateway", trace_id="t", span_id="c1", parent_span_id="r"
    )
    callee = occurrence(service="checkout-api", trace_id="t", span_id="s1", parent_span_id="c1")
    # the callee's exception was recorded after its caller's span ended (clocks of two hosts disagree)
    late = callee.model_copy(update={"event_id": "late", "timestamp": FIRST_SEEN + timedelta(seconds=1)})
    ordered = causal_order([(caller, "sig_gateway"), (late, "sig_checkout")])
    assert [sid for _, sid in ordered] == ["sig_checkout", "sig_gateway"]
    looped = occurrence(trace_id="t", span_id="c1", parent_span_id="s1")  # ids that claim a cycle
    assert len(causal_order([(looped, "a"), (late, "b")])) == 2


def test_errors_of_one_service_in_one_trace_are_neighbours_not_a_cascade():
    later = FIRST_SEEN + timedelta(milliseconds=5)  # the handler logs after the exception it caught
    log = occurrence(kind="log", service="checkout-api", message="Failed to place order", trace_id="t")
    log = log.model_copy(update={"timestamp": later})
    exception = occurrence(service="checkout-api", error_type="KeyError", message="'x'", trace_id="t")
    events = [
        log.model_copy(update={"event_id": "sig_log-1"}),
        exception.model_copy(update={"event_id": "sig_exc-1"}),
    ]
    cascades = correlate_traces(events, {"sig_log-1": "sig_log", "sig_exc-1": "sig_exc"}, {})
    assert not cascades["sig_log"].caused_by and not cascades["sig_exc"].causes
    assert [step.signature_id for step in cascades["sig_log"].path] == ["sig_exc", "sig_log"]


class _Visible(HTMLParser):
    """The text a reader sees outside code, and the links, of rendered HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[str] = []
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "pre"):
            self._code += 1
        if tag == "a":
            self.links += [value or "" for name, value in attrs if name == "href"]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._code -= 1

    def handle_data(self, data: str) -> None:
        if not self._code:
            self.text.append(data)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.md")), ids=lambda path: path.stem)
def test_each_golden_body_reads_clean_as_github_renders_it(path):
    import cmarkgfm
    from cmarkgfm.cmark import Options

    body = path.read_text(encoding="utf-8").split("\n", 2)[2]  # the title is not Markdown on GitHub
    html = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    seen = _Visible()
    seen.feed(html)
    text = "".join(seen.text)
    assert (
        "\\" not in text and "[REDACTED:" not in text and "\u200b" not in text
    )  # no escape shows, no marker
    assert "rounds:marker" not in text  # the marker stays a comment
    assert html.count("<table>") == body.count("\n|---|---|\n")  # every table is one
    if "## Where it happened" in body and "](https://" in body.split("## Where it happened", 1)[1]:
        assert any(link.startswith("https://github.com/acme/shop/blob/") for link in seen.links)
    assert "<strong>Next step:</strong>" in html


def test_the_crash_site_stored_with_the_signature_decides_where_the_frames_start(monorepo):
    plan = plan_for("checkout-api", CASES["python_exception"][1])
    state = SignatureState(
        signature_id="s", service="checkout-api", seq=1, crash_site="pricing.py:quote_cart"
    )
    stored = plan.signature.model_copy(update={"grouping_state": state})
    context = locator_for(monorepo).locate(stored)
    assert context.frames[0].function == "quote_cart" and context.frames[0].crash_site
    assert context.blamed is not None and context.blamed.line == 112 and context.above == 1
    unknown = state.model_copy(update={"crash_site": "gone.py:renamed"})  # not in this trace: its own site
    context = locator_for(monorepo).locate(stored.model_copy(update={"grouping_state": unknown}))
    assert context.frames[0].function == "apply_discount"


def test_a_url_in_the_summary_copies_whole_and_links_nothing(monorepo):
    words = 'label request failed after 2 attempts: Post "https://api.parcelhub.example/v2/labels": deadline'
    event = occurrence(kind="log", severity="ERROR", message=words)
    body = rendered(monorepo, plan_for("shipping-worker", event))
    summary = body.split("\n\n", 2)[1]
    assert 'Post "`https://api.parcelhub.example/v2/labels`": deadline' in summary
    assert "\u200b" not in summary


def test_a_span_of_the_older_http_conventions_shows_the_same_request():
    older = occurrence(
        kind="span_error",
        span_kind="client",
        attributes={
            "http.method": "POST",
            "http.url": "https://pay.example/v1/charges",
            "http.status_code": 502,
        },
    )
    rows = dict(request_rows(older))
    assert rows["Method"] == "`POST`" and rows["URL"] == "`https://pay.example/v1/charges`"
    assert rows["Status"] == "`502`" and rows["Peer"] == "`pay.example`"


def test_telemetry_values_stay_inside_their_table_cell():
    import cmarkgfm

    hostile = occurrence(
        kind="log", severity="ERROR", attributes={"otel.scope.name": "a | b", "app.x": "`|` <b>x</b>"}
    )
    markdown = table([*log_rows(hostile, None), ("Attributes", other_attributes(hostile))])
    html = cmarkgfm.github_flavored_markdown_to_html(markdown)
    rows = html.split("<tr>")[2:]
    assert len(rows) == 3 and all(row.count("<td>") == 2 for row in rows)  # no value split a row
    assert "<code>a | b</code>" in html and "&lt;b&gt;" in html


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
    body = render_body(issue_view(plan, located, IssueEvidence(code=code), IssueStyle(charts=False)))
    assert "### Where the fault is" in body
    assert "- Fault: `checkout/app.py:3` in `place_order`" in body
    assert f"- Crash site: `{crash.repo_path}:{crash.line}`" in body
