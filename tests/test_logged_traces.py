"""A stack trace a log record carries without an SDK's `exception.*` attributes (a console's crash report in
its body; a structured logger's trace field, which the collector's JSON parser made an attribute) is read as
the exception an SDK would have recorded: its stack trace is that text, its type and message those of the
exception raised. So it is titled by its exception, grouped by its frames, and a signature an earlier release
made from the body as a message keeps receiving its events."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from known_states import KnownStates
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import T0_NS, fixture_window, source_for

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.logged_traces import LOG_BODY, TRACE_FROM, LoggedException, logged_exception
from rounds_bot.headline import headline
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource

T0 = datetime(2026, 11, 1, tzinfo=UTC)
EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


def _traceback(cart: str, line: int = 12) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/app/shop/views.py", line {line}, in checkout\n'
        "    order = build(cart)\n"
        '  File "/app/shop/orders.py", line 40, in build\n'
        '    raise ValueError(f"cart {cart_id} is empty")\n'
        f"ValueError: cart {cart} is empty"
    )


JAVA_LOGGED = (
    "2026-11-27 12:00:00.123 ERROR [http-nio-8080-exec-1] c.s.Orders - charge failed\n"
    "java.lang.IllegalStateException: card declined\n"
    "\tat com.shop.Orders.charge(Orders.java:42)\n"
    "\tat com.shop.Api.post(Api.java:10)"
)
GO_PANIC = (
    "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n"
    "main.handler(...)\n\t/app/main.go:12 +0x1d\nmain.main()\n\t/app/main.go:20 +0x25\nexit status 2"
)
#: net/http's log of a handler's panic it recovered (net/http/server.go, `conn.serve`), after the standard
#: logger's date and time
GO_SERVED = (
    "2024/05/01 12:00:00 http: panic serving 10.0.0.1:5123: order 42 not found\ngoroutine 7 [running]:\n"
    "net/http.(*conn).serve.func1()\n\t/usr/local/go/src/net/http/server.go:1947 +0xbe\n"
    "main.handler({0x7a1b20?, 0xc0001b6000?}, 0xc0001c4000?)\n\t/app/main.go:12 +0x1d"
)
DOTNET_CONSOLE = (  # Microsoft.Extensions.Logging's console formatter, above the exception it logs
    "fail: Microsoft.AspNetCore.Server.Kestrel[13]\n"
    '      Connection id "0HN", Request id "0HN:00000001": '
    "An unhandled exception was thrown by the application.\n"
    "      System.NullReferenceException: Object reference not set to an instance of an object.\n"
    "         at Shop.Controllers.CartController.Get(Int32 id)"
    " in /src/Shop/Controllers/CartController.cs:line 25"
)
# what node prints on an uncaught exception: the source line, a caret, the error, node's version
NODE_UNCAUGHT = (
    "/app/server.js:12\n    throw new Error('boom');\n    ^\n\nError: boom\n"
    "    at Object.<anonymous> (/app/server.js:12:11)\n"
    "    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n\nNode.js v18.17.0"
)
ANDROID = (
    "FATAL EXCEPTION: main\nProcess: com.example.shop, PID: 12345\n"
    "java.lang.NullPointerException: Attempt to invoke a virtual method on a null object reference\n"
    "\tat com.example.shop.CartActivity.onCreate(CartActivity.kt:42)\n"
    "\tat android.app.Activity.performCreate(Activity.java:8000)"
)
NODE_ERROR = (
    "TypeError: Cannot read properties of undefined (reading 'id')\n"
    "    at getUser (/app/src/users.js:12:20)\n    at /app/src/server.js:40:5"
)


# --- reading a body ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (_traceback("c-17"), ("ValueError", "cart c-17 is empty")),
        (JAVA_LOGGED, ("java.lang.IllegalStateException", "card declined")),
        (GO_PANIC, ("panic (index out of range)", "runtime error: index out of range [3] with length 3")),
        (GO_SERVED, ("panic (value)", "order 42 not found")),
        (NODE_ERROR, ("TypeError", "Cannot read properties of undefined (reading 'id')")),
        (
            DOTNET_CONSOLE,
            ("System.NullReferenceException", "Object reference not set to an instance of an object."),
        ),
        (NODE_UNCAUGHT, ("Error", "boom")),
        (
            ANDROID,
            (
                "java.lang.NullPointerException",
                "Attempt to invoke a virtual method on a null object reference",
            ),
        ),
        (  # a sanitizer's report: its line names the kind of error first, said once
            "==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55d4\n"
            "    #0 0x55d4c1a2b3c4 in Parser::next() /src/proj/src/parser.cc:142:12\n"
            "    #1 0x55d4c1a2c7e8 in main /src/proj/src/main.cc:31:3",
            ("AddressSanitizer: heap-use-after-free", "on address 0x602000000010 at pc 0x55d4"),
        ),
        (  # the log line before the traceback is part of the report, not its exception
            "ERROR handling request\n" + _traceback("c-18"),
            ("ValueError", "cart c-18 is empty"),
        ),
    ],
)
def test_a_body_with_a_stack_trace_reports_the_exception_it_raised(
    body: str, expected: tuple[str, str]
) -> None:
    assert logged_exception(body, {}) == LoggedException(*expected, body, LOG_BODY)


@pytest.mark.parametrize(
    "body",
    [
        "ValueError: cart c-17 is empty",  # one line: a message
        "failed to connect to db-1\nretrying in 5s",  # lines, no frame
        "order 12 failed\n  at step validate",  # an `at` that is no frame
        "Traceback (most recent call last):\n",  # a header without a frame
        "",
    ],
)
def test_a_body_without_a_frame_is_a_message(body: str) -> None:
    assert logged_exception(body, {}) is None


def test_a_traceback_cut_before_its_exception_line_is_still_read_by_its_frames() -> None:
    """(A collector's record size limit cuts the end off: the frames still say where it failed.)"""
    cut = _traceback("c-1").rsplit("\n", 1)[0]
    assert logged_exception(cut, {}) == ("Exception", "", cut, LOG_BODY)


@pytest.mark.parametrize(
    "field",
    ["error.stack_trace", "stack_trace", "err.stack", "error.stack", "stack", "exception", "exc_info", "@x"],
)
def test_a_structured_loggers_trace_field_reports_the_exception_before_the_body(field: str) -> None:
    trace = _traceback("c-2")
    found = logged_exception(_traceback("c-9"), {"other": trace, field: trace})
    assert found == ("ValueError", "cart c-2 is empty", trace, field)


def test_a_trace_field_of_one_line_or_not_text_is_passed_over_for_the_body() -> None:
    body = _traceback("c-3")
    found = logged_exception(body, {"exception": "TimeoutError", "stack": 3, "err.stack": "no frames\nhere"})
    assert found == ("ValueError", "cart c-3 is empty", body, LOG_BODY)


# --- the OTLP file source ----------------------------------------------------------------------


def _log_line(records: list[dict[str, object]]) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}
    return json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": records}]}]})


def _record(body: str, at: int, **attributes: str) -> dict[str, object]:
    return {
        "timeUnixNano": str(1_773_480_413_000_000_000 + at),
        "severityNumber": 17,
        "body": {"stringValue": body},
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


def test_an_otlp_log_whose_body_is_a_traceback_becomes_that_exception(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl"
    path.write_text(_log_line([_record(_traceback("c-17"), 1)]) + "\n")
    (event,) = OtlpFileSource(path).poll(EVERYTHING, frozenset()).events
    assert (event.kind, event.error_type, event.message) == ("log", "ValueError", "cart c-17 is empty")
    assert event.stacktrace == _traceback("c-17")
    assert event.attributes[TRACE_FROM] == LOG_BODY and "log.body" not in event.attributes
    assert headline(event) == "ValueError: cart c-17 is empty"


def test_an_sdks_exception_and_a_plain_body_are_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl"
    recorded = _record(
        "charge failed\nsee the trace",
        1,
        **{"exception.type": "CardError", "exception.stacktrace": _traceback("c-1")},
    )
    plain = _record("failed to connect to db-1\nretrying in 5s", 2)
    path.write_text(_log_line([recorded, plain]) + "\n")
    events = OtlpFileSource(path).poll(EVERYTHING, frozenset()).events
    by_body = {event.message: event for event in events}
    sdk = by_body["charge failed\nsee the trace"]  # the SDK said what the exception was: its words stand
    assert (sdk.error_type, sdk.stacktrace) == ("CardError", _traceback("c-1"))
    message = by_body["failed to connect to db-1\nretrying in 5s"]
    assert (message.error_type, message.stacktrace) == (None, None)
    assert TRACE_FROM not in sdk.attributes and TRACE_FROM not in message.attributes


def test_an_otlp_log_with_a_pino_error_field_becomes_that_exception_with_its_line_as_context(
    tmp_path: Path,
) -> None:
    record = _record("charge failed", 1)
    record["attributes"] = [
        {
            "key": "err",
            "value": {
                "kvlistValue": {
                    "values": [
                        {"key": "type", "value": {"stringValue": "TypeError"}},
                        {"key": "stack", "value": {"stringValue": NODE_ERROR}},
                    ]
                }
            },
        },
    ]
    path = tmp_path / "logs.jsonl"
    path.write_text(_log_line([record]) + "\n")
    (event,) = OtlpFileSource(path).poll(EVERYTHING, frozenset()).events
    assert (event.error_type, event.stacktrace) == ("TypeError", NODE_ERROR)
    assert event.message == "Cannot read properties of undefined (reading 'id')"
    assert event.attributes[TRACE_FROM] == "err.stack" and "err.stack" not in event.attributes
    assert event.attributes["log.body"] == "charge failed" and event.attributes["err.type"] == "TypeError"


# --- the SigNoz source -------------------------------------------------------------------------


def _signoz_log_event(record: dict[str, object]) -> ErrorEvent:
    """The one log event the SigNoz source reads of `record`, served by the emulator."""
    dataset = Dataset()
    load_otlp_lines([_log_line([record])], dataset, where="log records")
    with (
        SignozEmulator(dataset, Behaviour(api_key="test-key")) as emulator,
        source_for(emulator) as source,
    ):
        events = source.poll(fixture_window(), frozenset()).events
    (event,) = [event for event in events if event.kind == "log"]
    return event


def test_a_signoz_log_whose_body_is_a_traceback_becomes_that_exception() -> None:
    record = {
        "timeUnixNano": str(T0_NS + 100 * 10**9),
        "observedTimeUnixNano": str(T0_NS + 100 * 10**9 + 1000),
        "severityText": "ERROR",
        "severityNumber": 17,
        "body": {"stringValue": _traceback("c-17")},
    }
    event = _signoz_log_event(record)
    assert (event.error_type, event.message) == ("ValueError", "cart c-17 is empty")
    assert event.stacktrace == _traceback("c-17") and event.attributes[TRACE_FROM] == LOG_BODY


def test_a_signoz_log_with_an_ecs_trace_field_becomes_that_exception() -> None:
    record = {
        "timeUnixNano": str(T0_NS + 100 * 10**9),
        "severityText": "ERROR",
        "severityNumber": 17,
        "body": {"stringValue": "charge failed"},
        "attributes": [{"key": "error.stack_trace", "value": {"stringValue": JAVA_LOGGED}}],
    }
    event = _signoz_log_event(record)
    assert (event.error_type, event.message) == ("java.lang.IllegalStateException", "card declined")
    assert event.stacktrace == JAVA_LOGGED and event.attributes[TRACE_FROM] == "error.stack_trace"
    assert event.attributes["log.body"] == "charge failed" and "error.stack_trace" not in event.attributes


# --- grouping ----------------------------------------------------------------------------------


def _read(n: int, cart: str, line: int = 12) -> ErrorEvent:
    """The event this release makes of a traceback body."""
    return ErrorEvent(
        event_id=f"r{n}",
        timestamp=T0,
        service="shop",
        kind="log",
        error_type="ValueError",
        message=f"cart {cart} is empty",
        stacktrace=_traceback(cart, line),
        severity="ERROR",
        attributes={TRACE_FROM: LOG_BODY},
    )


def _as_message(n: int, cart: str) -> ErrorEvent:
    """The event an earlier release made of the same body: a message, of no type."""
    return ErrorEvent(
        event_id=f"m{n}", timestamp=T0, service="shop", kind="log", message=_traceback(cart), severity="ERROR"
    )


def test_one_crash_site_is_one_signature_whatever_the_values_and_two_are_two() -> None:
    other = _read(3, "c-3").model_copy(
        update={"stacktrace": _traceback("c-3").replace("orders.py", "payments.py")}
    )
    placed = GroupingEngine().assign_all([_read(1, "c-1"), _read(2, "c-2", line=14), other])
    assert placed[0].signature_id == placed[1].signature_id != placed[2].signature_id
    assert placed[1].tier == "fingerprint"


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_body_keeps_receiving_its_events(how: str) -> None:
    before = GroupingEngine()
    made = before.assign(_as_message(0, "c-0"))
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_read(1, "c-1"), _read(2, "c-2", line=13)])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)


def test_without_an_earlier_signature_the_body_trace_is_a_signature_of_its_own() -> None:
    before = GroupingEngine()
    made = before.assign(_as_message(0, "c-0").model_copy(update={"service": "billing"}))
    engine = GroupingEngine(known=[before.state(made.signature_id)])
    (found,) = engine.assign_all([_read(1, "c-1")])
    assert found.signature_id != made.signature_id and found.tier == "new"


def test_a_signature_an_earlier_release_made_from_a_structured_log_keeps_receiving_it() -> None:
    """Earlier, a record with a trace field went as its body (the log line), of no type, the field kept."""
    before = GroupingEngine()
    then = ErrorEvent(
        event_id="m0",
        timestamp=T0,
        service="shop",
        kind="log",
        message="charge failed for cart c-0",
        severity="ERROR",
        attributes={"stack": _traceback("c-0")},
    )
    made = before.assign(then)
    engine = GroupingEngine(lookup=KnownStates([before.state(made.signature_id)]))
    now = [
        _read(n, f"c-{n}").model_copy(
            update={"attributes": {TRACE_FROM: "stack", LOG_BODY: f"charge failed for cart c-{n}"}}
        )
        for n in (1, 2)
    ]
    found = engine.assign_all(now)
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
