"""Headlines: an issue's title and summary from the occurrence's own words, per runtime and per kind."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.headline import ELLIPSIS, headline, summary_of, trim
from rounds_bot.models import ErrorEvent

GOLDEN = Path(__file__).parent / "golden" / "render" / "headlines.md"
UPDATE = os.environ.get("ROUNDS_UPDATE_GOLDEN") == "1"
AT = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def event(**fields) -> ErrorEvent:
    return ErrorEvent(event_id="e", timestamp=AT, **fields)


CASES = {
    "python exception": event(error_type="KeyError", message="'currency'"),
    "python exception, type in the message": event(
        error_type="builtins.KeyError", message="KeyError: 'user'"
    ),
    "java exception": event(
        error_type="java.lang.NullPointerException",
        message='Cannot invoke "com.acme.inventory.warehouse.Warehouse.region()" because the return value of '
        '"com.acme.inventory.warehouse.WarehouseRegistry.find(String)" is null',
    ),
    "node error with an error code": event(
        error_type="Error", message="connect ECONNREFUSED 10.42.3.17:6379", error_code="ECONNREFUSED"
    ),
    "go panic": event(
        error_type="runtime.boundsError", message="runtime error: index out of range [5] with length 5"
    ),
    "ruby exception": event(error_type="NoMethodError", message="undefined method `name' for nil:NilClass"),
    "dotnet exception": event(
        error_type="System.InvalidOperationException", message="Sequence contains no elements"
    ),
    "http client span error": event(
        kind="span_error",
        error_type="502",
        message="POST",
        attributes={
            "http.request.method": "POST",
            "url.full": "https://api.paymentsprovider.example/v1/charges?attempt=2",
            "server.address": "api.paymentsprovider.example",
            "http.response.status_code": 502,
        },
    ),
    "http client span error without url.full": event(
        kind="span_error",
        message="GET",
        attributes={
            "http.request.method": "GET",
            "server.address": "ledger.internal",
            "url.path": "/v1/balance",
            "http.response.status_code": 503,
        },
    ),
    "http server span error with a status message": event(
        kind="span_error",
        error_type="504",
        message="upstream recommendations-service timed out after 2006ms",
        attributes={
            "http.request.method": "GET",
            "http.route": "/api/recommendations/:productId",
            "url.path": "/api/recommendations/369931",
            "http.response.status_code": "504",
        },
    ),
    "span error without http attributes": event(kind="span_error", message="charge card"),
    "error log with an error code": event(
        kind="log",
        error_code="SMTP_421",
        message="Delivery of message <[REDACTED:email]> to customer 48317 failed: (421, b'4.7.0 "
        "mx2.relay.mailhost.example Service not available, closing transmission channel')",
    ),
    "error log without a type": event(
        kind="log", message="cannot start: load routing table: open /etc/shipping/zones.yaml: no such file"
    ),
    "empty message": event(error_type=None, message=""),
}


def render() -> str:
    lines = ["| case | headline | summary |", "|---|---|---|"]
    for name, case in CASES.items():
        lines.append(f"| {name} | {headline(case)} | {summary_of(case)} |")
    return "\n".join(lines) + "\n"


def test_headlines_per_runtime_and_kind_match_the_golden_file():
    text = render()
    if UPDATE:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), "rerun with ROUNDS_UPDATE_GOLDEN=1 if meant"


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_a_headline_has_no_normaliser_placeholders_and_fits(case):
    line = headline(case)
    assert len(line) <= 110 and "\n" not in line
    for placeholder in ("<int>", "<uuid>", "<ip>", "<version>", "<path>", "<hex>"):
        assert placeholder not in line


def test_trimming_cuts_at_a_word_boundary_with_an_ellipsis():
    text = "relation stock_levels violates check constraint stock_levels_quantity_check on update"
    cut = trim(text, 40)
    assert cut.endswith(ELLIPSIS) and len(cut) <= 40
    assert text.startswith(cut[: -len(ELLIPSIS)]) and text[len(cut) - len(ELLIPSIS)] == " "
    assert trim("short enough", 40) == "short enough"
    assert trim("x" * 100, 20) == "x" * 19 + ELLIPSIS  # one long word is cut where it stands


@pytest.mark.parametrize(
    "go_type", ["*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError"]
)
def test_gos_generic_error_types_are_not_named_a_meaningful_one_is(go_type: str) -> None:
    message = "load cart 42: sql: no rows in result set"
    assert headline(event(error_type=go_type, message=message)) == message
    assert headline(event(error_type="*pq.Error", message="duplicate key")) == "Error: duplicate key"
    assert (
        headline(event(error_type="*net.OpError", message="dial tcp: refused"))
        == "OpError: dial tcp: refused"
    )


def test_the_error_code_comes_first_unless_the_message_already_says_it():
    assert headline(event(kind="log", error_code="E42", message="disk full")) == "E42: disk full"
    assert headline(event(kind="log", error_code="E42", message="E42 disk full")) == "E42 disk full"


def test_a_log_or_span_error_is_titled_by_its_template_with_placeholders_never_its_instance():
    log = event(
        kind="log",
        message='label request for shipment SHP-2026-7471660 failed after 2 attempts: Post "https://x.example"',
    )
    template = "label request for shipment <*> failed after <*> attempts: Post <*>"
    assert headline(log, template=template) == template
    span = CASES["http server span error with a status message"]
    assert headline(span, template="upstream recommendations-service timed out after <*>") == (
        "504 on GET /api/recommendations/:productId: upstream recommendations-service timed out after <*>"
    )
    smtp = CASES["error log with an error code"]
    titled = headline(smtp, template="Delivery of message <[REDACTED:email]> to customer <int> failed")
    assert titled == "SMTP_421: Delivery of message <email> to customer <int> failed"
    assert summary_of(log) == " ".join(log.message.split())  # the instance's words stay in the body


def test_an_exception_keeps_its_own_words_but_never_a_redaction_marker():
    error = event(error_type="Error", message="connect ECONNREFUSED [REDACTED:ip_address]:6379")
    titled = headline(error, template="connect ECONNREFUSED <*>")
    assert titled == "Error: connect ECONNREFUSED <ip_address>:6379"
    assert headline(CASES["python exception"], template="<*>") == "KeyError: 'currency'"
