"""Ruby 3.4 names a frame's method with its class (NEWS for 3.4.0: `'Cart#total'` for an instance method,
`'Pricing.apply'` for a singleton method, a class method); Ruby 3.3 and earlier named the method alone
(`` `apply' ``). Both spellings name one frame, so the same bug is one signature before and after an upgrade
to Ruby 3.4; two methods are two. A signature an earlier release made from a Ruby 3.4 trace, which kept a
class method's class, keeps receiving the trace."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _ruby_34(method: str = "Pricing.apply", line: int = 31) -> str:
    return (
        f"/app/app/services/pricing.rb:{line}:in 'block (2 levels) in {method}': "
        "divided by 0 (ZeroDivisionError)\n"
        "\tfrom /app/app/services/pricing.rb:30:in 'Array#each'\n"
        f"\tfrom /app/app/services/pricing.rb:30:in '{method}'\n"
        "\tfrom /app/app/controllers/carts_controller.rb:12:in 'CartsController#show'"
    )


def _ruby_33(method: str = "apply", line: int = 31) -> str:
    return (
        f"/app/app/services/pricing.rb:{line}:in `block (2 levels) in {method}': "
        "divided by 0 (ZeroDivisionError)\n"
        "\tfrom /app/app/services/pricing.rb:30:in `each'\n"
        f"\tfrom /app/app/services/pricing.rb:30:in `{method}'\n"
        "\tfrom /app/app/controllers/carts_controller.rb:12:in `show'"
    )


UPGRADED = _ruby_34()
#: the hashes the previous release stored for a signature it made from `UPGRADED` (its `GroupingEngine`
#: assigned `_event(1, UPGRADED)`, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = (
    "3a082097646ca0339ae9c44fc71e25d511de542fc5f09943144952ec28a8b00f",
    "bdf58c5cb0da75a616d14022748c7bbe92cb5eea86b8e216f1b9f6974a285f66",
)


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="ZeroDivisionError",
        message="divided by 0",
        stacktrace=stacktrace,
    )


def _functions(text: str) -> list[str | None]:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "ruby"
    return [frame.function for frame in trace.exceptions[0].frames]


@pytest.mark.parametrize(
    ("method", "read"),
    [
        ("Pricing.apply", "apply"),
        ("Billing::Pricing.apply", "apply"),
        ("Pricing.[]", "[]"),
        ("Cart#total", "total"),
    ],
)
def test_a_ruby_34_method_is_named_without_its_class(method: str, read: str) -> None:
    assert _functions(_ruby_34(method))[0] == read


def test_names_with_no_class_are_read_as_before() -> None:
    text = (
        "/app/lib/tasks/import.rb:3:in `<main>': boom (RuntimeError)\n"
        "\tfrom /app/lib/tasks/import.rb:2:in `block in <class:Importer>'\n"
        "\tfrom /app/lib/tasks/import.rb:1:in `<top (required)>'"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and not trace.notes and as_read_before(trace) is None
    assert _functions(text) == ["<main>", "<class:Importer>", "<top (required)>"]


def test_one_bug_is_one_signature_on_either_ruby_and_two_methods_are_two() -> None:
    texts = [UPGRADED, _ruby_33(line=33), _ruby_34(line=32), _ruby_34("Pricing.discount")]
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    first, *same, other = [assignment.signature_id for assignment in found]
    assert set(same) == {first} and other != first


def test_the_previous_reading_keeps_a_class_methods_class() -> None:
    trace = parse_stacktrace(UPGRADED)
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and not before.notes
    assert [frame.function for frame in before.exceptions[0].frames] == [
        "Pricing.apply",
        "each",
        "Pricing.apply",
        "show",
    ]


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_bug(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="ZeroDivisionError", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, UPGRADED)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    later = engine.assign_all([_event(2, _ruby_33())])  # a worker still on Ruby 3.3 finds it too
    assert later[0].signature_id == "sig_before"
