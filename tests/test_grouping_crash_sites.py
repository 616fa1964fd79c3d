"""Tier 3 never merges two errors whose crash sites differ: near twins in every supported runtime.

Each pair below is one error type and message raised in two different functions of the same
service, with everything around them alike, so their TF-IDF similarity is above the merge
threshold. They are two problems and must stay two signatures.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.crash_site import crash_site, may_merge_by_similarity
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import Assignment, ErrorEvent

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def python_trace(function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/app/.venv/lib/python3.12/site-packages/fastapi/routing.py", line 301, in app\n'
        "    raw_response = await run_endpoint_function(\n"
        '  File "/app/shop/api/orders.py", line 57, in place_order\n'
        "    record = store.lookup(order)\n"
        '  File "/app/shop/store.py", line 40, in lookup\n'
        f"    return {function}(order)\n"
        f'  File "/app/shop/store.py", line 88, in {function}\n'
        "    return row.id\n"
        "AttributeError: 'NoneType' object has no attribute 'id'\n"
    )


def java_trace(method: str) -> str:
    return (
        'java.lang.NullPointerException: Cannot invoke "Customer.id()" because "customer" is null\n'
        f"\tat com.acme.shop.orders.OrderService.{method}(OrderService.java:73)\n"
        "\tat com.acme.shop.orders.OrderService.place(OrderService.java:48)\n"
        "\tat com.acme.shop.orders.OrderController.post(OrderController.java:54)\n"
        "\tat org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)\n"
        "\tat java.base/java.lang.Thread.run(Thread.java:1583)\n"
    )


def node_trace(function: str) -> str:
    return (
        "TypeError: Cannot read properties of undefined (reading 'id')\n"
        f"    at {function} (/app/src/orders.js:10:15)\n"
        "    at placeOrder (/app/src/orders.js:42:7)\n"
        "    at Layer.handle (/app/node_modules/express/lib/router/layer.js:95:5)\n"
        "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
    )


def rust_trace(function: str) -> str:
    return (
        "thread 'tokio-runtime-worker' panicked at src/orders.rs:142:31:\n"
        "called `Option::unwrap()` on a `None` value\n"
        "stack backtrace:\n"
        "   0: rust_begin_unwind\n"
        "             at /rustc/07dca489ac2d933c78d3c5158e3f43beefeb02ce/library/std/src/panicking.rs:645:5\n"
        "   1: core::panicking::panic_fmt\n"
        "   2: core::option::unwrap_failed\n"
        f"   3: shop::orders::Service::{function}\n"
        "             at ./src/orders.rs:142:31\n"
        "   4: <shop::api::Handler as tower_service::Service<http::Request>>::call::{{closure}}\n"
        "             at ./src/api.rs:61:9\n"
        "   5: tokio::runtime::task::core::Core<T,S>::poll\n"
        "             at /home/dev/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokio-1.37.0"
        "/src/runtime/task/core.rs:328:17\n"
    )


def php_trace(method: str) -> str:
    return (
        "PHP Fatal error:  Uncaught TypeError: Cannot access offset of type string on null in "
        "/var/www/shop/src/Orders/Service.php:142\n"
        "Stack trace:\n"
        f"#0 /var/www/shop/src/Orders/Service.php(97): App\\Orders\\Service->{method}(NULL)\n"
        "#1 /var/www/shop/src/Api/Handler.php(61): App\\Orders\\Service->place(Array)\n"
        "#2 /var/www/shop/vendor/symfony/http-kernel/HttpKernel.php(181): "
        "App\\Api\\Handler->post(Object(Request))\n"
        "#3 /var/www/shop/public/index.php(20): "
        "Symfony\\Component\\HttpKernel\\HttpKernel->handle(Object(Request))\n"
        "#4 {main}\n"
        "  thrown in /var/www/shop/src/Orders/Service.php on line 142\n"
    )


def elixir_trace(function: str) -> str:
    return (
        "** (KeyError) key :id not found in: nil\n"
        f"    (shop 0.4.2) lib/shop/orders.ex:142: Shop.Orders.{function}/1\n"
        "    (shop 0.4.2) lib/shop/orders.ex:97: Shop.Orders.place/2\n"
        "    (shop 0.4.2) lib/shop_web/controllers/order_controller.ex:61: ShopWeb.OrderController.create/2\n"
        "    (phoenix 1.7.14) lib/phoenix/router.ex:484: Phoenix.Router.__call__/5\n"
        "    (stdlib 5.2) gen_server.erl:1131: :gen_server.try_handle_call/4\n"
    )


def dart_trace(method: str) -> str:
    return (
        "Unhandled exception:\n"
        "Null check operator used on a null value\n"
        f"#0      OrderService.{method} (package:shop/orders/order_service.dart:142:31)\n"
        "#1      OrderService.place (package:shop/orders/order_service.dart:97:12)\n"
        "#2      OrderController.create (package:shop/web/order_controller.dart:61:20)\n"
        "#3      _rootRunUnary (dart:async/zone.dart:1434:47)\n"
        "<asynchronous suspension>\n"
        "#4      main (file:///app/bin/server.dart:10:3)\n"
    )


def go_trace(method: str) -> str:
    return (
        "panic: runtime error: invalid memory address or nil pointer dereference\n\n"
        "goroutine 63 [running]:\n"
        "runtime/debug.Stack()\n"
        "\t/usr/local/go/src/runtime/debug/stack.go:26 +0x5e\n"
        "github.com/acme/shop/internal/telemetry.Recover({0x1b2e4c0, 0xc00062f1e0})\n"
        "\t/src/internal/telemetry/recover.go:34 +0x35a\n"
        "panic({0x15f3a40?, 0xc000149b68?})\n"
        "\t/usr/local/go/src/runtime/panic.go:785 +0x23e\n"
        f"github.com/acme/shop/internal/orders.(*Service).{method}(0xc00016b048)\n"
        "\t/src/internal/orders/service.go:142 +0x2c8\n"
        "github.com/acme/shop/internal/orders.(*Service).Place(0xc00016b048)\n"
        "\t/src/internal/orders/service.go:97 +0x62\n"
        "github.com/acme/shop/internal/api.(*Handler).Post(0xc000df36b0)\n"
        "\t/src/internal/api/handler.go:61 +0x2c6\n"
    )


def ruby_trace(method: str) -> str:
    return (
        f"/app/models/order.rb:10:in `{method}': undefined method `id' for nil (NoMethodError)\n"
        "\tfrom /app/models/order.rb:5:in `place'\n"
        "\tfrom /app/controllers/orders_controller.rb:7:in `create'\n"
        "\tfrom /usr/local/bundle/gems/actionpack-7.1.2/lib/action_controller/metal.rb:227:in `dispatch'\n"
    )


def dotnet_trace(method: str) -> str:
    return (
        "System.NullReferenceException: Object reference not set to an instance of an object.\n"
        f"   at Shop.Orders.OrderService.{method}(Int32 id) in /src/Orders/OrderService.cs:line 57\n"
        "   at Shop.Orders.OrderService.Place(Int32 id) in /src/Orders/OrderService.cs:line 31\n"
        "   at Shop.Api.OrdersController.Post(Int32 id) in /src/Api/OrdersController.cs:line 20\n"
        "   at Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor.Execute(Object target)\n"
    )


def ocaml_trace(function: str) -> str:
    return (
        "Fatal error: exception Not_found\n"
        'Raised at Stdlib__Hashtbl.find in file "hashtbl.ml", line 539, characters 13-28\n'
        f'Called from Dune__exe__Orders.{function} in file "bin/orders.ml", line 12, characters 2-30\n'
        'Called from Dune__exe__Orders.place in file "bin/orders.ml", line 20, characters 4-9\n'
        'Called from Dune__exe__Main.main in file "bin/main.ml", line 5, characters 0-10\n'
    )


NEAR_TWINS = {
    "python": (python_trace, "AttributeError", "find_customer", "find_invoice"),
    "java": (java_trace, "java.lang.NullPointerException", "customerOf", "invoiceOf"),
    "node": (node_trace, "TypeError", "customerOf", "invoiceOf"),
    "go": (go_trace, "panic", "customer", "invoice"),
    "ruby": (ruby_trace, "NoMethodError", "customer", "invoice"),
    "dotnet": (dotnet_trace, "System.NullReferenceException", "CustomerOf", "InvoiceOf"),
    "ocaml": (ocaml_trace, "Not_found", "customer", "invoice"),
    "rust": (rust_trace, "panic", "customer", "invoice"),
    "php": (php_trace, "TypeError", "customer", "invoice"),
    "elixir": (elixir_trace, "KeyError", "customer", "invoice"),
    "dart": (dart_trace, "TypeError", "customer", "invoice"),
}


def assign(engine: GroupingEngine, text: str, error_type: str) -> Assignment:
    return engine.assign(
        ErrorEvent(event_id="e", timestamp=EPOCH, service="shop", error_type=error_type, stacktrace=text)
    )


@pytest.mark.parametrize("runtime", sorted(NEAR_TWINS))
def test_the_same_error_raised_in_two_functions_is_two_signatures(runtime: str) -> None:
    make, error_type, one, other = NEAR_TWINS[runtime]
    engine = GroupingEngine()
    first = assign(engine, make(one), error_type)
    second = assign(engine, make(other), error_type)
    assert second.tier == "new"
    assert second.signature_id != first.signature_id
    # they are alike enough that similarity alone would have merged them
    assert f"not merged with {first.signature_id}" in second.explanation
    assert first.signature_id in second.related
    # and each keeps its own occurrences afterwards
    assert assign(engine, make(one), error_type).signature_id == first.signature_id
    assert assign(engine, make(other), error_type).signature_id == second.signature_id


@pytest.mark.parametrize("runtime", sorted(NEAR_TWINS))
def test_the_crash_site_is_the_innermost_app_frame(runtime: str) -> None:
    make, _, one, _ = NEAR_TWINS[runtime]
    trace = parse_stacktrace(make(one))
    assert trace is not None and trace.runtime == runtime
    site = crash_site(trace, InAppRules().roles(trace))
    assert site is not None and site.rsplit(":", 1)[-1].split("/")[0].endswith(one)  # Elixir adds an arity


def test_a_go_recovery_handler_is_not_the_crash_site() -> None:
    trace = parse_stacktrace(go_trace("customer"))
    assert trace is not None
    assert (
        crash_site(trace, InAppRules().roles(trace))
        == "github.com/acme/shop/internal/orders:(*Service).customer"
    )


def test_the_same_crash_site_reached_from_another_caller_is_one_problem() -> None:
    engine = GroupingEngine()
    first = assign(engine, java_trace("customerOf"), "java.lang.NullPointerException")
    rerouted = java_trace("customerOf").replace("OrderController.post", "OrderImport.run")
    second = assign(engine, rerouted, "java.lang.NullPointerException")
    assert second.fingerprint_hash != first.fingerprint_hash
    assert (second.tier, second.signature_id) == ("fingerprint", first.signature_id)
    assert "rule: the same crash site (com.acme.shop.orders.OrderService:customerOf)" in second.explanation


def test_traces_without_app_frames_are_left_to_similarity() -> None:
    assert may_merge_by_similarity(None, "shop/store.py:find")
    assert may_merge_by_similarity("a:f", None)
    assert may_merge_by_similarity("a:f", "a:f")
    assert not may_merge_by_similarity("a:f", "a:g")


def test_a_check_failing_in_a_test_has_no_crash_site() -> None:
    text = (
        "junit.framework.AssertionFailedError: expected:<1> but was:<0>\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n"
        "\tat com.acme.shop.orders.OrderServiceTest.testPlace(OrderServiceTest.java:40)\n"
        "\tat org.junit.runners.ParentRunner.run(ParentRunner.java:309)\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert crash_site(trace, InAppRules().roles(trace)) is None


def test_a_reloaded_engine_keeps_crash_sites_apart() -> None:
    original = GroupingEngine()
    first = assign(original, java_trace("customerOf"), "java.lang.NullPointerException")
    state = original.state(first.signature_id)
    assert state.crash_site == "com.acme.shop.orders.OrderService:customerOf"
    reloaded = GroupingEngine(known=[SignatureState.model_validate_json(state.model_dump_json())])
    second = assign(reloaded, java_trace("invoiceOf"), "java.lang.NullPointerException")
    assert (second.tier, second.signature_id != first.signature_id) == ("new", True)


def test_candidates_carry_their_crash_site() -> None:
    from rounds_bot.grouping.shapes import ShapeCache
    from rounds_bot.grouping.templates import TemplateMiner

    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner())
    event = ErrorEvent(event_id="e", timestamp=EPOCH, service="shop", stacktrace=node_trace("customerOf"))
    assert reader.candidate(event, None).crash_site == "orders.js:customerOf"
