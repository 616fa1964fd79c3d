"""A crash report as Android's logcat prints it, each line behind a prefix (`grouping/stacktrace/logcat.py`):
read without the prefixes by the runtime's own parser, so its frames are read and the process id's width no
longer splits one bug into two signatures; a signature an earlier release made from the body keeps receiving
it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.logged_traces import LOG_BODY, TRACE_FROM, logged_exception
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.stacktrace.logcat import unprefixed
from rounds_bot.grouping.stacktrace.model import NEWLY_READ
from rounds_bot.models import AttributeValue, ErrorEvent
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources.log_bodies import LoggedError, read_without_exception
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

T0 = datetime(2026, 11, 1, tzinfo=UTC)

FLUTTER = [
    "[ERROR:flutter/runtime/dart_vm_initializer.cc(41)] Unhandled Exception: Bad state: cart {cart} is empty",
    "#0      CartRepository.load (package:shop/cart/repository.dart:41:7)",
    "#1      CheckoutPage.build.<anonymous closure> (package:shop/checkout/page.dart:88:21)",
    "#2      _InkResponseState.handleTap (package:flutter/src/material/ink_well.dart:1183:21)",
]
ANDROID_RUNTIME = [
    "FATAL EXCEPTION: main",
    "Process: com.shop.app, PID: {pid}",
    "java.lang.IllegalStateException: cart {cart} is empty",
    "\tat com.shop.cart.CartRepository.load(CartRepository.java:41)",
    "\tat com.shop.checkout.CheckoutActivity.onClick(CheckoutActivity.java:88)",
    "\tat android.view.View.performClick(View.java:7448)",
]
#: logcat's formats (AOSP liblog `logprint.cpp`), for a line of tag `tag` and process 1234 (`{pid}`)
FORMATS = {
    "brief": "E/{tag:<8}({pid:5d}): ",
    "time": "11-28 08:00:00.123 E/{tag:<8}({pid:5d}): ",
    "threadtime": "11-28 08:00:00.123 {pid:5d} {pid:5d} E {tag:<8}: ",
    "threadtime, year and usec": "2026-11-28 08:00:00.123456 {pid:5d} {pid:5d} E {tag:<8}: ",
    "threadtime, uid": "11-28 08:00:00.123 u0_a123 {pid:5d} {pid:5d} E {tag:<8}: ",
    "thread": "E({pid:5d}:{pid:5d}) ",
    "tag": "E/{tag:<8}: ",
}


def _report(lines: list[str], layout: str, tag: str, pid: int, cart: int) -> str:
    prefix = FORMATS[layout].format(tag=tag, pid=pid)
    return "\n".join(prefix + line.format(pid=pid, cart=cart) for line in lines)


@pytest.mark.parametrize("layout", FORMATS)
def test_each_logcat_format_is_read_without_its_prefixes(layout: str) -> None:
    report = _report(ANDROID_RUNTIME, layout, "AndroidRuntime", 1234, 17)
    assert unprefixed(report.splitlines()) == [line.format(pid=1234, cart=17) for line in ANDROID_RUNTIME]
    trace = parse_stacktrace(report)
    assert trace is not None and trace.runtime == "java"
    (exception,) = trace.exceptions
    assert (exception.type, exception.value, len(exception.frames)) == (
        "java.lang.IllegalStateException",
        "cart 17 is empty",
        3,
    )
    assert NEWLY_READ in trace.notes  # no earlier release read it


def test_a_flutter_crash_behind_logcat_prefixes_is_read_as_dart() -> None:
    trace = parse_stacktrace(_report(FLUTTER, "brief", "flutter", 20931, 17))
    assert trace is not None and trace.runtime == "dart"
    assert [(e.type, e.value, len(e.frames)) for e in trace.exceptions] == [
        ("StateError", "Bad state: cart 17 is empty", 3)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "E/flutter ( 1234): one line alone is a message",
        "E/flutter ( 1234): a prefixed line\nfollowed by a line of another kind",
        "E/flutter ( 1234): brief\n11-28 08:00:00.123  1234  1234 E flutter : threadtime",
        'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\nValueError: E/x (1): y',
        "Error: boom\n    at f (/app/x.js:3:5)",
    ],
)
def test_text_that_is_not_a_whole_logcat_report_is_read_as_before(text: str) -> None:
    assert unprefixed(text.splitlines()) is None


def _log_line(body: str, n: int, at: datetime) -> str:
    """An OTLP/JSON log record a log drain wrote of a logcat report: the report its body, no exception."""
    record = {
        "timeUnixNano": str(int((at + timedelta(seconds=n)).timestamp() * 1e9)),
        "severityNumber": 17,
        "body": {"stringValue": body},
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop-android"}}]}
    return json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]})


def test_one_bug_reported_by_processes_of_every_id_width_is_one_problem(tmp_path) -> None:
    """Process ids of four and five digits: `( 1234)` and `(20931)` made two templates of one message."""
    at = datetime.now(UTC) - timedelta(minutes=10)
    reports = [
        _report(FLUTTER, "brief", "flutter", pid, cart) for pid, cart in ((1234, 17), (20931, 902), (877, 5))
    ]
    reports += [_report(ANDROID_RUNTIME, "threadtime", "AndroidRuntime", pid, 3) for pid in (4321, 10222)]
    data = tmp_path / "logs.jsonl"
    data.write_text("\n".join(_log_line(body, n, at) for n, body in enumerate(reports)) + "\n")
    store = Store.memory()
    run_round(load_settings(), OtlpFileSource(data), DryRunTracker(tmp_path / "drafts"), store)
    found = sorted((s.total_count, s.title) for s in store.signatures())
    assert [count for count, _ in found] == [2, 3]
    assert [title.split(":")[0] for _, title in found] == ["IllegalStateException", "StateError"]


def _found_by_the_signature_made_of_the_first(
    bodies: list[str], read: Callable[[str], dict[str, Any]]
) -> bool:
    """Whether the events this release makes of `bodies` (`read`: an event's fields of a body) all go to the
    signature an earlier release made of the first body as a message."""
    unread = ErrorEvent(
        event_id="m", timestamp=T0, service="shop", kind="log", message=bodies[0], severity="ERROR"
    )
    before = GroupingEngine()
    made = before.assign(unread)
    read_now = [
        unread.model_copy(update={"event_id": f"r{n}", **read(body)}) for n, body in enumerate(bodies)
    ]
    found = GroupingEngine(known=[before.state(made.signature_id)]).assign_all(read_now)
    return {a.signature_id for a in found} == {made.signature_id}


def test_a_signature_an_earlier_release_made_from_such_a_body_keeps_receiving_it() -> None:
    """An earlier release read no frame behind the prefixes: the body was the event's message."""

    def read(body: str) -> dict[str, Any]:
        logged = logged_exception(body, {})
        assert logged is not None and logged.source == LOG_BODY
        fields = {"error_type": logged.error_type, "message": logged.message, "stacktrace": logged.stacktrace}
        return {**fields, "attributes": {TRACE_FROM: LOG_BODY}}

    assert _found_by_the_signature_made_of_the_first(
        [_report(FLUTTER, "brief", "flutter", p, 17) for p in (1234, 4321)], read
    )


def test_one_log_statement_logged_by_processes_of_every_id_width_is_one_problem(tmp_path) -> None:
    """A record of one logcat line, no trace: its template is made of the line without its prefix."""
    at = datetime.now(UTC) - timedelta(minutes=10)
    bodies = [f"E/Cart    ({pid:5d}): failed to load cart {cart}" for pid, cart in ((1234, 17), (20931, 902))]
    bodies.append("11-28 08:00:00.123  4321  4321 E Cart    : failed to load cart 5")
    data = tmp_path / "logs.jsonl"
    data.write_text("\n".join(_log_line(body, n, at) for n, body in enumerate(bodies)) + "\n")
    store = Store.memory()
    run_round(load_settings(), OtlpFileSource(data), DryRunTracker(tmp_path / "drafts"), store)
    assert [(s.total_count, s.title.startswith("failed to load cart")) for s in store.signatures()] == [
        (3, True)
    ]


@pytest.mark.parametrize("body", ["I/O error: disk full", "E/x: one line whose prefix names no process"])
def test_a_line_whose_prefix_names_no_process_is_read_as_before(body: str) -> None:
    assert read_without_exception(body, {}, {}) == LoggedError(None, body, None)


def test_a_signature_an_earlier_release_made_from_a_prefixed_line_keeps_receiving_it() -> None:
    """The lines of the widths it had seen go to the signature it made of them."""

    def read(body: str) -> dict[str, Any]:
        attributes: dict[str, AttributeValue] = {}
        logged = read_without_exception(body, {}, attributes)
        assert logged.message == "failed to load cart 17"
        return {"message": logged.message, "attributes": attributes}

    bodies = [f"E/Cart    ({pid:5d}): failed to load cart 17" for pid in (1234, 4321)]
    assert _found_by_the_signature_made_of_the_first(bodies, read)
