"""Dart and Flutter stack traces: the VM's `StackTrace.toString()` under an uncaught exception, Flutter's
report of an error the framework caught, a stack printed alone and package:stack_trace's layout. Read to the
exception the text names and the frames; Dart's core libraries and Flutter's are not the app's; one crash
site is one signature; and a signature an earlier release made from such a trace's message (it could not read
it) keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.code.mapping import CodeMap
from rounds_bot.fixing.patchtests import is_test_file
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.logged_traces import LOG_BODY, LoggedException, logged_exception
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace, runtime_of_line
from rounds_bot.grouping.stacktrace.browser import HEADERLESS
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)

VM = """Unhandled exception:
Bad state: No element
#0      ListBase.first (dart:collection/list.dart:52:5)
#1      CartService.checkout (package:shop/cart_service.dart:42:7)
#2      _rootRunUnary (dart:async/zone.dart:1434:47)
<asynchronous suspension>
#3      main (file:///app/bin/server.dart:10:3)"""

FLUTTER = """══╡ EXCEPTION CAUGHT BY WIDGETS LIBRARY ╞════════════════════════════════════════════════
The following _TypeError was thrown building CartPage(dirty):
Null check operator used on a null value

The relevant error-causing widget was:
  CartPage
  CartPage:file:///app/lib/main.dart:20:14

When the exception was thrown, this was the stack:
#0      CartPage.build (package:shop/cart_page.dart:20:30)
#1      StatelessElement.build (package:flutter/src/widgets/framework.dart:4949:28)
#2      ComponentElement.performRebuild (package:flutter/src/widgets/framework.dart:4878:15)
(elided 3 frames from class _RawReceivePortImpl, class _Timer, and dart:async-patch)

The following RenderObject was being processed when the exception was fired: RenderFlex#1a2b3
#0      Other.frame (package:shop/other.dart:1:1)
════════════════════════════════════════════════════════════════════════════════════════════════════"""

ALONE = """#0      CartService.checkout (package:shop/cart_service.dart:42:7)
#1      main (file:///app/bin/server.dart:10)"""

ASSERTED = "'package:shop/cart.dart': Failed assertion: line 12 pos 7: 'items.isNotEmpty': is not true."
STACK_TRACE_PACKAGE = """package:shop/cart_service.dart 42:7       CartService.checkout
dart:async/zone.dart 1434:47               _rootRunUnary
===== asynchronous gap ===========================
package:shop/main.dart 10:3                main"""


def test_an_uncaught_exception_is_read_to_its_type_message_and_frames() -> None:
    trace = parse_stacktrace(VM)
    assert trace is not None and trace.runtime == "dart"
    (exception,) = trace.exceptions
    assert (exception.type, exception.value) == ("StateError", "Bad state: No element")
    assert exception.frames == (
        Frame("ListBase.first", filename="dart:collection/list.dart", lineno=52),
        Frame("CartService.checkout", filename="package:shop/cart_service.dart", lineno=42),
        Frame("_rootRunUnary", filename="dart:async/zone.dart", lineno=1434),
        Frame("main", filename="file:///app/bin/server.dart", lineno=10),  # after the asynchronous suspension
    )


def test_flutters_report_names_the_type_and_only_its_first_stack_is_read() -> None:
    trace = parse_stacktrace(FLUTTER)
    assert trace is not None and trace.runtime == "dart"
    (exception,) = trace.exceptions
    # Flutter names the core library's private class; the public type is what the VM's text reads as
    assert (exception.type, exception.value) == ("TypeError", "Null check operator used on a null value")
    assert [frame.function for frame in exception.frames] == [
        "CartPage.build",
        "StatelessElement.build",
        "ComponentElement.performRebuild",
    ]


@pytest.mark.parametrize(
    ("text", "frames"),
    [
        (ALONE, ["CartService.checkout", "main"]),
        (STACK_TRACE_PACKAGE, ["CartService.checkout", "_rootRunUnary", "main"]),
    ],
    ids=["vm", "stack_trace"],
)
def test_a_stack_printed_alone_names_no_type_so_the_events_does(text: str, frames: list[str]) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "dart"
    assert HEADERLESS in trace.notes
    assert [frame.function for frame in trace.exceptions[0].frames] == frames


@pytest.mark.parametrize(
    ("header", "error_type", "value"),
    [
        (
            "FormatException: Unexpected character (at character 1)",
            "FormatException",
            "Unexpected character (at character 1)",
        ),
        ("Null check operator used on a null value", "TypeError", "Null check operator used on a null value"),
        (
            "type 'Null' is not a subtype of type 'String'",
            "TypeError",
            "type 'Null' is not a subtype of type 'String'",
        ),
        (
            "Invalid argument(s): amount must be positive",
            "ArgumentError",
            "Invalid argument(s): amount must be positive",
        ),
        (
            "RangeError (index): Index out of range: index should be less than 3: 5",
            "RangeError",
            "RangeError (index): Index out of range: index should be less than 3: 5",
        ),
        ("Exception: payment declined", "Exception", "payment declined"),
        (  # the Flutter engine's line for an uncaught error
            "[ERROR:flutter/runtime/dart_vm_initializer.cc(41)] Unhandled Exception: Bad state: No element",
            "StateError",
            "Bad state: No element",
        ),
        ("SocketException: Connection refused", "SocketException", "Connection refused"),
        (
            "ERROR: checkout failed\nBad state: No element",
            "StateError",
            "Bad state: No element",
        ),  # a log line first
        ("Instance of 'CartEmpty'", "CartEmpty", "Instance of 'CartEmpty'"),
        (ASSERTED, "AssertionError", ASSERTED),
    ],
)
def test_the_line_before_the_frames_names_the_exception(header: str, error_type: str, value: str) -> None:
    trace = parse_stacktrace(f"{header}\n{ALONE}")
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == (error_type, value)
    assert HEADERLESS not in trace.notes


@pytest.mark.parametrize(
    ("frame", "role"),
    [
        (Frame("_rootRunUnary", filename="dart:async/zone.dart"), "library"),
        (Frame("StatelessElement.build", filename="package:flutter/src/widgets/framework.dart"), "library"),
        (Frame("testWidgets", filename="package:flutter_test/src/widget_tester.dart"), "library"),
        (Frame("CartService.checkout", filename="package:shop/cart_service.dart"), "app"),
        (Frame("main", filename="file:///app/bin/server.dart"), "app"),
        (Frame("main.<fn>", filename="file:///app/test/cart_service_test.dart"), "test"),
        # the web compiler's paths, in package:stack_trace's layout
        (
            Frame("throw_", filename="dart-sdk/lib/_internal/js_dev_runtime/private/ddc_runtime/errors.dart"),
            "library",
        ),
        (Frame("<fn>", filename="packages/flutter/src/widgets/framework.dart"), "library"),
        (Frame("Cart.total", filename="packages/shop/cart.dart"), "app"),
    ],
)
def test_darts_and_flutters_libraries_are_not_the_apps(frame: Frame, role: str) -> None:
    assert InAppRules().frame_role(frame, "dart").role == role


@pytest.mark.parametrize(
    ("files", "printed", "repo_path"),
    [
        (
            ["lib/cart_service.dart", "bin/server.dart"],
            "package:shop/cart_service.dart",
            "lib/cart_service.dart",
        ),
        (["lib/src/orders/order.dart"], "package:shop/src/orders/order.dart", "lib/src/orders/order.dart"),
        (
            ["packages/shop/lib/cart.dart", "packages/web/lib/cart.dart"],
            "package:shop/cart.dart",
            "packages/shop/lib/cart.dart",
        ),
        (["lib/cart_service.dart", "bin/server.dart"], "file:///app/bin/server.dart", "bin/server.dart"),
        (["lib/zone.dart"], "dart:async/zone.dart", None),
    ],
)
def test_a_dart_frame_is_linked_to_its_packages_lib_folder(
    files: list[str], printed: str, repo_path: str | None
) -> None:
    assert CodeMap(files).repo_path(Frame("f", filename=printed)) == repo_path


def test_a_dart_test_file_is_a_test_for_the_fix_checks_too() -> None:
    assert is_test_file("test/cart_service_test.dart")
    assert not is_test_file("lib/cart_service.dart")


@pytest.mark.parametrize(
    ("line", "runtime"),
    [
        ("#0      ListMixin.first (dart:collection/list.dart:167:5)", "dart"),
        ("package:shop/main.dart 10:3                main", "dart"),
        ("#0 /var/www/src/Checkout.php(88): App\\Billing\\Charge->capture(Object(App\\Order), 1999)", "php"),
        ("    #0 0x4c0e3b in Parser::next() /src/parser.cc:142:12", "native"),
        ("#1  handle_request (conn=0x5555555592a0) at src/server.c:142", "native"),
        ("see lib/cart.dart for details", None),
    ],
)
def test_a_dart_frame_is_darts_alone(line: str, runtime: str | None) -> None:
    assert runtime_of_line(line) == runtime


def _vm(site: str, file: str, line: int, framework: str = "StatelessElement.build") -> str:
    return f"""Unhandled exception:
Bad state: No element
#0      ListBase.first (dart:collection/list.dart:52:5)
#1      {site} (package:shop/{file}:{line}:7)
#2      {framework} (package:flutter/src/widgets/framework.dart:{4949 + line}:28)
#3      main (file:///app/bin/server.dart:10:3)"""


def _event(n: int, stacktrace: str | None) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="StateError",
        message="Bad state: No element",
        stacktrace=stacktrace,
    )


def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    placed = GroupingEngine().assign_all(
        [
            _event(1, _vm("CartService.checkout", "cart_service.dart", 42)),
            _event(2, _vm("CartService.checkout", "cart_service.dart", 45, "StatefulElement.build")),
            _event(3, _vm("Basket.total", "basket.dart", 12)),
        ]
    )
    assert placed[0].signature_id == placed[1].signature_id != placed[2].signature_id
    assert "crash site package:shop/basket.dart:Basket.total" in placed[2].explanation


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_dart_traces(how: str) -> None:
    """No release before read these traces: their events went to their message's template, and that
    signature keeps receiving them (it is not split into trace signatures, which would file duplicates)."""
    before = GroupingEngine()
    made = before.assign(_event(0, None))  # (what an unread trace gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all(
        [
            _event(1, _vm("CartService.checkout", "cart_service.dart", 42)),
            _event(2, _vm("Basket.total", "basket.dart", 12)),
        ]
    )
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)


def test_a_trace_printed_to_the_console_and_shipped_as_a_log_body_is_read_as_its_exception() -> None:
    assert logged_exception(VM, {}) == LoggedException("StateError", "Bad state: No element", VM, LOG_BODY)
    assert logged_exception(FLUTTER, {}) == LoggedException(
        "TypeError", "Null check operator used on a null value", FLUTTER, LOG_BODY
    )
