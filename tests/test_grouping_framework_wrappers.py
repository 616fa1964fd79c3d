"""A framework's wrapper is no part of the problem it wraps: Spring's DispatcherServlet wraps a controller's
exception in a `ServletException`, so the Java agent records the wrapper on the server span and the exception
itself on the controller's span, one occurrence in two events. Both are one signature, whichever comes
first; a wrapper over two root causes is still two problems, and a signature an earlier release made from the
wrapped trace keeps receiving it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
NPE = 'Cannot invoke "com.shop.Cart.items()" because "cart" is null'
SPRING = (
    "\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java)\n"
    "\tat org.springframework.web.method.support.InvocableHandlerMethod.invoke(InvocableHandlerMethod.java)\n"
    "\tat org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)\n"
    "\tat org.springframework.web.servlet.FrameworkServlet.processRequest(FrameworkServlet.java:1014)\n"
    "\tat jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658)"
)
#: the site hash releases before this one gave `_wrapped(_cause())` (computed with them): the wrapper's type
#: was hashed with its cause's
SITE_HASH_BEFORE = "8ad392d1bad362d895535f1670fdb424c5350620022d16e889d5c9674b897198"


def _cause(site: str = "CartService.total(CartService.java:42)", kind: str = "NullPointerException") -> str:
    return (
        f"java.lang.{kind}: {NPE}\n\tat com.shop.{site}\n"
        "\tat com.shop.CartController.checkout(CartController.java:28)\n" + SPRING
    )


def _wrapped(cause: str) -> str:
    return (
        f"jakarta.servlet.ServletException: Request processing failed: {cause.splitlines()[0]}\n"
        "\tat org.springframework.web.servlet.FrameworkServlet.processRequest(FrameworkServlet.java:1022)\n"
        "\tat jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658)\n"
        "\tat org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:205)\n"
        f"Caused by: {cause}\n\t... 3 more"
    )


def _event(n: int, stacktrace: str) -> ErrorEvent:
    wrapper = stacktrace.startswith("jakarta")
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="jakarta.servlet.ServletException" if wrapper else "java.lang.NullPointerException",
        message=stacktrace.splitlines()[0].split(": ", 1)[1],
        stacktrace=stacktrace,
    )


@pytest.mark.parametrize("wrapper_first", [False, True])
def test_the_wrapped_and_the_bare_exception_are_one_signature_whichever_comes_first(
    wrapper_first: bool,
) -> None:
    events = [_event(1, _cause()), _event(2, _wrapped(_cause()))]
    placed = GroupingEngine().assign_all(events[::-1] if wrapper_first else events)
    assert placed[0].signature_id == placed[1].signature_id
    assert placed[1].tier == "fingerprint" and "the same crash site" in placed[1].explanation


def test_a_wrapper_over_two_root_causes_is_two_problems() -> None:
    other = _cause("PaymentService.charge(PaymentService.java:7)", "IllegalStateException")
    placed = GroupingEngine().assign_all([_event(1, _wrapped(_cause())), _event(2, _wrapped(other))])
    assert placed[0].signature_id != placed[1].signature_id


def test_an_apps_own_wrapper_is_part_of_the_problem() -> None:
    """A wrapper raised in the app's code names another problem than its cause alone (its own site)."""
    own = (
        "com.shop.CheckoutFailed: checkout failed\n"
        "\tat com.shop.CheckoutService.run(CheckoutService.java:9)\n"
        + SPRING
        + f"\nCaused by: {_cause()}\n\t... 5 more"
    )
    placed = GroupingEngine().assign_all([_event(1, _cause()), _event(2, own)])
    assert placed[0].signature_id != placed[1].signature_id


def test_a_dotnet_aggregate_exception_is_its_inner_exceptions_problem() -> None:
    inner = (
        "System.InvalidOperationException: Sequence contains no elements\n"
        "   at Shop.Cart.Total() in /src/Shop/Cart.cs:line 12\n"
        "   at Shop.Api.Checkout() in /src/Shop/Api.cs:line 30"
    )
    aggregate = (
        "System.AggregateException: One or more errors occurred. (Sequence contains no elements)\n"
        f" ---> {inner}\n   --- End of inner exception stack trace ---\n"
        "   at System.Threading.Tasks.Task.Wait()"
    )
    placed = GroupingEngine().assign_all(
        [
            ErrorEvent(event_id="a", timestamp=T0, service="shop", message="x", stacktrace=inner),
            ErrorEvent(event_id="b", timestamp=T0, service="shop", message="y", stacktrace=aggregate),
        ]
    )
    assert placed[0].signature_id == placed[1].signature_id


def test_a_signature_an_earlier_release_made_from_the_wrapped_trace_keeps_receiving_it() -> None:
    before = GroupingEngine()
    made = before.assign(_event(0, _wrapped(_cause())))
    # as the previous release stored it: its site hash was the wrapped one
    state = before.state(made.signature_id)
    then = state.model_copy(update={"hashes": [SITE_HASH_BEFORE]})
    engine = GroupingEngine(lookup=KnownStates([then]))
    found = engine.assign_all([_event(1, _wrapped(_cause())), _event(2, _cause())])
    assert {a.signature_id for a in found} == {made.signature_id}
    assert "an earlier version" in found[0].explanation
