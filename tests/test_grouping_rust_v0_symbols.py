"""Rust backtraces of symbols mangled the v0 way (`-C symbol-mangling-version=v0`, nightly's default): a full
backtrace (`RUST_BACKTRACE=full`) prints each crate with its disambiguator (`shop[5e4d3c2b1a098765]::orders`),
a hash of the crate's name and metadata that Cargo changes with its version, features and profile, and a
closure with its index among its parent's closures (`{closure#0}`, where the legacy mangling prints
`{{closure}}`). Neither names other code: one panic site is one signature whatever the build, and whether it
was mangled the legacy or the v0 way; two sites are two. A signature an earlier release made with the
disambiguators keeps receiving the trace."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
UNWRAP = "called `Option::unwrap()` on a `None` value"


def _v0(
    crates: str, base: int = 0x55D0C1A20000, function: str = "place", closure: str = "{closure#0}"
) -> str:
    """A full backtrace of v0 symbols (`crates`: the disambiguators' common part, one per build)."""
    shop, tower = f"shop[{crates}3]", f"tower_service[{crates}4]"
    symbols = [
        f"std[{crates}1]::backtrace_rs::backtrace::libunwind::trace",
        "rust_begin_unwind",
        f"core[{crates}2]::panicking::panic_fmt",
        f"core[{crates}2]::option::unwrap_failed",
        f"{shop}::orders::{function}",
        f"<{shop}::Handler as {tower}::Service<{shop}::Req>>::call::{closure}",
        f"{shop}::main",
    ]
    frames = "".join(f"  {i:2}:     {base + 0x40 * i:#x} - {symbol}\n" for i, symbol in enumerate(symbols))
    return f"thread 'main' panicked at src/orders.rs:42:31:\n{UNWRAP}\nstack backtrace:\n{frames}"


def _legacy(function: str = "place") -> str:
    """The same backtrace of legacy symbols, as the stable toolchain mangles them."""
    symbols = [
        "std::backtrace_rs::backtrace::libunwind::trace::h0a1b2c3d4e5f6071",
        "rust_begin_unwind",
        "core::panicking::panic_fmt::h1b2c3d4e5f607182",
        "core::option::unwrap_failed::h2c3d4e5f60718293",
        f"shop::orders::{function}::h3d4e5f60718293a4",
        "<shop::Handler as tower_service::Service<shop::Req>>::call::{{closure}}::h4e5f60718293a4b5",
        "shop::main::h5f60718293a4b5c6",
    ]
    frames = "".join(f"  {i:2}:     {0x5612F0C40000 + 0x40 * i:#x} - {s}\n" for i, s in enumerate(symbols))
    return f"thread 'main' panicked at src/orders.rs:42:31:\n{UNWRAP}\nstack backtrace:\n{frames}"


FIRST_BUILD = _v0("9a8b7c6d5e4f3a2")
#: the hashes the previous release stored for a signature it made from `FIRST_BUILD` (its `GroupingEngine`
#: assigned `_event(1, FIRST_BUILD)`, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = (
    "b1ff92cd92cb6bb17055a097e89e4d88f6b53764d3678ffd535915d0b5274962",
    "5f210f2d1937c57e9bbb523860a2a6215e20d38be9ba401a98751d1ae55ae606",
    "b647dc84b6a73e471957662376350c6cd5bbd93abc5622f5c8d5140ecf7c1eb6",
)


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="panic",
        message=UNWRAP,
        stacktrace=stacktrace,
    )


def _signatures(texts: list[str]) -> list[str]:
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    return [assignment.signature_id for assignment in found]


def _names(text: str) -> list[tuple[str | None, str | None]]:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "rust"
    return [(frame.module, frame.function) for frame in trace.exceptions[0].frames]


def test_a_v0_symbol_is_named_without_its_crates_disambiguators_and_closure_index() -> None:
    assert _names(FIRST_BUILD) == [
        ("std::backtrace_rs::backtrace::libunwind", "trace"),
        (None, "rust_begin_unwind"),
        ("core::panicking", "panic_fmt"),
        ("core::option", "unwrap_failed"),
        ("shop::orders", "place"),
        ("shop::Handler", "call::{{closure}}"),
        ("shop", "main"),
    ]
    assert _names(FIRST_BUILD) == _names(_legacy())


def test_one_panic_site_is_one_signature_in_every_build_and_mangling_and_two_sites_are_two() -> None:
    texts = [
        FIRST_BUILD,
        _v0("1f2e3d4c5b6a798", base=0x5612F0C40000, closure="{closure#1}"),  # the next version's build
        _legacy(),
        _v0("9a8b7c6d5e4f3a2", function="refund"),
    ]
    first, *same, other = _signatures(texts)
    assert set(same) == {first} and other != first


def test_the_previous_reading_keeps_the_disambiguators() -> None:
    trace = parse_stacktrace(FIRST_BUILD)
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and not before.notes
    assert [(frame.module, frame.function) for frame in before.exceptions[0].frames] == [
        ("std[9a8b7c6d5e4f3a21]::backtrace_rs::backtrace::libunwind", "trace"),
        (None, "rust_begin_unwind"),
        ("core[9a8b7c6d5e4f3a22]::panicking", "panic_fmt"),
        ("core[9a8b7c6d5e4f3a22]::option", "unwrap_failed"),
        ("shop[9a8b7c6d5e4f3a23]::orders", "place"),
        ("shop[9a8b7c6d5e4f3a23]::Handler", "call::{closure#0}"),
        ("shop[9a8b7c6d5e4f3a23]", "main"),
    ]


def test_a_legacy_backtrace_is_read_as_before() -> None:
    trace = parse_stacktrace(_legacy())
    assert trace is not None and not trace.notes and as_read_before(trace) is None


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_panic(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="panic", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, FIRST_BUILD)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    later = engine.assign_all([_event(2, _v0("1f2e3d4c5b6a798"))])  # the next build finds it too
    assert later[0].signature_id == "sig_before"
