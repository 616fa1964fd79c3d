""".NET local functions are named by Roslyn with two ordinals (`<Compute>g__ApplyDiscount|4_0`: the containing
method's and the function's, `GeneratedNames.MakeLocalFunctionName`), which change when a method is added to
the class. They are left out, as a lambda's and a state machine's are, so one bug across builds is one
signature; a signature the previous release made with the ordinals keeps receiving its events."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import ParsedException, ParsedTrace, as_read_before, parse_stacktrace
from rounds_bot.grouping.stacktrace.dotnet import split_symbol
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MESSAGE = "Value does not fall within the expected range."


def _discount(ordinals: str) -> str:
    return f"""System.ArgumentException: {MESSAGE}
   at Acme.Shop.Pricing.PriceCalculator.<Compute>g__ApplyDiscount|{ordinals}(Decimal price, Discount d) in /src/Acme.Shop/Pricing/PriceCalculator.cs:line 50
   at Acme.Shop.Pricing.PriceCalculator.Compute(Cart cart) in /src/Acme.Shop/Pricing/PriceCalculator.cs:line 30
   at Acme.Shop.Program.<Main>$(String[] args) in /src/Acme.Shop/Program.cs:line 12"""  # noqa: E501


DISCOUNT = _discount("4_0")
#: the hashes the previous release stored for a signature it made from `DISCOUNT` (its `GroupingEngine`
#: assigned an event of service `shop` with that stack trace, and its `state` of the signature held these; no
#: text reads so in this version, which leaves the ordinals out of every name)
PREVIOUS_RELEASE_HASHES = (
    "39e6bc2f9ac623a9d7f2025ab50f00fa6d542181b2b0edaf5223c1195b7c76e8",
    "6c6216830e4c90e646ddbde67e11ff0d392653628aa9d4243a322e8df22c54f0",
)


@pytest.mark.parametrize(
    ("symbol", "split"),
    [
        (
            "Acme.Shop.Pricing.PriceCalculator.<Compute>g__ApplyDiscount|4_0",
            ("Acme.Shop.Pricing.PriceCalculator", "<Compute>g__ApplyDiscount"),
        ),
        (  # ASP.NET Core's, in every controller's trace
            "Microsoft.AspNetCore.Mvc.Infrastructure.ControllerActionInvoker.<InvokeActionMethodAsync>g__Awaited|12_0",
            (
                "Microsoft.AspNetCore.Mvc.Infrastructure.ControllerActionInvoker",
                "<InvokeActionMethodAsync>g__Awaited",
            ),
        ),
        (  # in a closure class: the function's ordinal alone
            "Acme.Shop.Orders.<>c__DisplayClass5_0.<Place>g__Reserve|0",
            ("Acme.Shop.Orders.<>c", "<Place>g__Reserve"),
        ),
        (  # an async local function's state machine, as earlier runtimes print it
            "Acme.Shop.Calc.<<Compute>g__ApplyAsync|4_0>d.MoveNext",
            ("Acme.Shop.Calc.<<Compute>g__ApplyAsync>d", "MoveNext"),
        ),
        (  # a lambda of the same method, as before
            "Acme.Shop.Pricing.PriceCalculator.<>c.<Compute>b__4_0",
            ("Acme.Shop.Pricing.PriceCalculator.<>c", "<Compute>b"),
        ),
    ],
)
def test_a_local_functions_ordinals_are_left_out_of_its_name(symbol: str, split: tuple[str, str]) -> None:
    assert split_symbol(symbol) == split


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="System.ArgumentException",
        message=MESSAGE,
        stacktrace=stacktrace,
    )


def test_one_bug_across_builds_that_renumbered_its_local_function_is_one_signature() -> None:
    found = GroupingEngine().assign_all([_event(1, DISCOUNT), _event(2, _discount("7_0"))])
    assert found[0].signature_id == found[1].signature_id
    assert found[1].tier == "fingerprint"


def test_two_local_functions_of_one_method_stay_two() -> None:
    other = DISCOUNT.replace("g__ApplyDiscount|4_0", "g__ApplyCoupon|4_1")
    found = GroupingEngine().assign_all([_event(1, DISCOUNT), _event(2, other)])
    assert found[0].signature_id != found[1].signature_id


def test_the_previous_reading_names_the_frame_as_printed() -> None:
    trace = parse_stacktrace(DISCOUNT)
    assert trace is not None
    (exception,) = trace.exceptions
    assert exception.frames[0].function == "<Compute>g__ApplyDiscount"
    first, *rest = exception.frames
    printed = ParsedException(
        exception.type, exception.value, (replace(first, function="<Compute>g__ApplyDiscount|4_0"), *rest)
    )
    assert as_read_before(trace) == ParsedTrace("dotnet", (printed,))
    assert as_read_before(parse_stacktrace(_discount("7_0")) or trace) != as_read_before(trace)


def test_a_trace_without_ordinals_reads_as_before() -> None:
    text = DISCOUNT.replace("<Compute>g__ApplyDiscount|4_0", "ApplyDiscount")
    trace = parse_stacktrace(text)
    assert trace is not None and not trace.notes and as_read_before(trace) is None


def test_without_a_signature_before_the_trace_starts_one_of_its_own() -> None:
    """This version's hashes are not those pinned: a signature the previous release made is found by the
    previous reading's alone (below)."""
    found = GroupingEngine().assign_all([_event(1, DISCOUNT), _event(2, DISCOUNT)])
    assert found[0].signature_id == found[1].signature_id and found[0].tier == "new"
    assert found[0].fingerprint_hash not in PREVIOUS_RELEASE_HASHES


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_trace(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="ArgumentException", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, DISCOUNT), _event(2, DISCOUNT)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)
    registered = engine.state("sig_before").hashes
    assert set(PREVIOUS_RELEASE_HASHES) < set(registered)
    assert found[0].fingerprint_hash in registered
    # and a later build, its ordinals renumbered, finds it by this version's hashes
    later = engine.assign(_event(3, _discount("7_0")))
    assert (later.signature_id, later.tier) == ("sig_before", "fingerprint")
