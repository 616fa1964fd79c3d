"""Haskell's uncaught exceptions as GHC's runtime prints them: `prog: <message>` then `CallStack (from
HasCallStack):` with one `fn, called at FILE:LINE:COL in PACKAGE:MODULE` line a call (GHC.Stack's
`prettyCallStack`), GHC 9.10's `HasCallStack backtrace:`, GHCi's `*** Exception:`. One crash site is one
signature, two behind one message are two, base's and ghc-internal's frames are a library's, and a signature
an earlier release made from the message keeps receiving them."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

MESSAGE = "user 42 not found"


def _haskell(module: str, line: int, user: int = 42, depth: int = 1) -> str:
    lines = [
        f"shop: user {user} not found",
        "CallStack (from HasCallStack):",
        f"  error, called at src/{module}.hs:{line}:5 in main:{module}",
        "  lookupUser, called at src/App.hs:30:9 in main:App",
    ]
    lines += [f"  handler, called at src/Server.hs:{40 + i}:3 in main:Server" for i in range(depth)]
    return "\n".join(lines) + "\n"


def _event(n: int, text: str, message: str = MESSAGE) -> ErrorEvent:
    return crash_event(n, text, error_type="ErrorCall", message=message)


def test_a_call_stack_is_read_innermost_first_each_site_in_its_caller() -> None:
    trace = parse_stacktrace(_haskell("Lib", 12))
    assert trace is not None and trace.runtime == "haskell"
    error = trace.exceptions[0]
    assert error.value == MESSAGE
    # `error` was called at Lib.hs:12, inside `lookupUser` (the next line's function)
    assert error.frames == (
        Frame("lookupUser", module="main:Lib", filename="src/Lib.hs", lineno=12),
        Frame("handler", module="main:App", filename="src/App.hs", lineno=30),
        Frame("<line 40>", module="main:Server", filename="src/Server.hs", lineno=40),
    )


def test_ghc_9_10s_backtrace_names_the_exceptions_type() -> None:
    text = (
        "shop: Uncaught exception ghc-internal:GHC.Internal.Exception.ErrorCall:\n"
        "\n"
        "user 42 not found\n"
        "\n"
        "HasCallStack backtrace:\n"
        "  error, called at src/Lib.hs:12:5 in shop-0.1.0.0-inplace:Lib\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("ErrorCall", MESSAGE)
    # a package's version and build hash change with each build: never part of a frame
    assert error.frames == (Frame("<line 12>", module="shop:Lib", filename="src/Lib.hs", lineno=12),)


def test_ghcis_exception_line_is_read() -> None:
    text = (
        "*** Exception: Prelude.head: empty list\n"
        "CallStack (from HasCallStack):\n"
        "  error, called at libraries/base/GHC/List.hs:1646:3 in base:GHC.List\n"
        "  errorEmptyList, called at libraries/base/GHC/List.hs:85:11 in base:GHC.List\n"
        "  badHead, called at libraries/base/GHC/List.hs:81:28 in base:GHC.List\n"
        "  head, called at src/Lib.hs:7:9 in main:Lib\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].value == "Prelude.head: empty list"
    rules = InAppRules()
    assert [rules.decide(f, "haskell")[0] for f in trace.exceptions[0].frames] == [False, False, False, True]


@pytest.mark.parametrize(
    "module", ["base:GHC.List", "ghc-internal:GHC.Internal.List", "ghc-prim:GHC.Classes"]
)
def test_the_base_libraries_frames_are_a_librarys(module: str) -> None:
    assert (
        InAppRules().decide(Frame("f", module=module, filename="libraries/x.hs", lineno=1), "haskell")[0]
        is False
    )


def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    texts = (_haskell("Lib", 12), _haskell("Lib", 12, user=7, depth=3), _haskell("Orders", 50))
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [_haskell("Lib", 12), _haskell("Lib", 12, user=3, depth=3), _haskell("Orders", 50)]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, stacktrace, "_script_runtime", lambda lines: None, texts, _event
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


VECTOR = "vector-0.13.1.0-9f1c2a"
CHECK = "Data.Vector.Internal.Check"


def _vector_bounds(module: str, line: int, app: str = "shop-0.1.0.0-inplace") -> str:
    """An index out of `vector`'s bounds: the library's checks call `error`; the app's `!` is the site."""
    return (
        "shop: index out of bounds (10,3)\n"
        "CallStack (from HasCallStack):\n"
        f"  error, called at src/Data/Vector/Internal/Check.hs:103:12 in {VECTOR}:{CHECK}\n"
        f"  checkError, called at src/Data/Vector/Internal/Check.hs:109:17 in {VECTOR}:{CHECK}\n"
        f"  checkIndex, called at src/Data/Vector/Generic.hs:235:11 in {VECTOR}:Data.Vector.Generic\n"
        f"  !, called at src/Data/Vector.hs:511:7 in {VECTOR}:Data.Vector\n"
        f"  !, called at src/{module}.hs:{line}:5 in {app}:{module}\n"
    )


@pytest.mark.parametrize("app", ["shop-0.1.0.0-inplace", "main", "shop-0.1.0.0-KJ7Gd9aPq3"])
def test_another_packages_frames_are_a_librarys_and_the_apps_frame_is_the_site(app: str) -> None:
    trace = parse_stacktrace(_vector_bounds("Cart", 12, app))
    assert trace is not None
    frames = trace.exceptions[0].frames
    roles = [InAppRules().decide(frame, "haskell")[0] for frame in frames]
    assert roles == [False, False, False, False, True]
    assert frames[-1].filename == "src/Cart.hs"


def test_two_app_sites_below_a_librarys_checks_are_two_problems() -> None:
    texts = (_vector_bounds("Cart", 12), _vector_bounds("Order", 40))
    ids = signatures_of(texts, lambda n, text: _event(n, text, "index out of bounds (10,3)"))
    assert ids[0] != ids[1]


def test_containers_map_lookup_is_a_librarys() -> None:
    text = (
        "shop: Map.!: given key is not an element in the map\n"
        "CallStack (from HasCallStack):\n"
        "  error, called at libraries/containers/containers/src/Data/Map/Internal.hs:617:17 in "
        "containers-0.6.7:Data.Map.Internal\n"
        "  !, called at src/Cart.hs:12:5 in shop-0.1.0.0-inplace:Cart\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [InAppRules().decide(f, "haskell")[0] for f in trace.exceptions[0].frames] == [False, True]


STACK_VECTOR = "vector-0.13.1.0-Jd6J2L4JcS1LeUcV8KPdDy"
STACK_SHOP = "shop-0.1.0.0-KXq3bn7gy2F5hJsWdHuLxx"


def _stack_project(function: str, line: int) -> str:
    """A Stack-built project: its library's unit hashed as a snapshot's package is, its program `main`."""
    return (
        "shop-exe: index out of bounds (10,3)\n"
        "CallStack (from HasCallStack):\n"
        f"  error, called at src/Data/Vector/Internal/Check.hs:103:12 in {STACK_VECTOR}:{CHECK}\n"
        f"  checkIndex, called at src/Data/Vector.hs:511:7 in {STACK_VECTOR}:Data.Vector\n"
        f"  !, called at src/Lib.hs:{line}:5 in {STACK_SHOP}:Lib\n"
        f"  {function}, called at src/Api.hs:30:8 in {STACK_SHOP}:Api\n"
        "  handle, called at app/Main.hs:9:8 in main:Main\n"
    )


def test_a_stack_built_projects_library_is_the_apps_and_its_snapshots_vector_a_librarys() -> None:
    trace = parse_stacktrace(_stack_project("lookupUser", 12))
    assert trace is not None
    frames = trace.exceptions[0].frames
    assert [InAppRules().decide(frame, "haskell")[0] for frame in frames] == [False, False, True, True, True]
    assert frames[2] == Frame("lookupUser", module="shop:Lib", filename="src/Lib.hs", lineno=12)


def test_two_sites_in_a_stack_built_projects_library_are_two_problems() -> None:
    texts = (_stack_project("lookupUser", 12), _stack_project("lookupOrder", 40))
    ids = signatures_of(texts, _event)
    assert ids[0] != ids[1]


def test_a_cabal_store_packages_unit_is_a_librarys() -> None:
    text = _vector_bounds("Cart", 12).replace(VECTOR, "vector-0.13.1.0-" + "3f9a" * 16)
    trace = parse_stacktrace(text)
    assert trace is not None
    roles = [InAppRules().decide(frame, "haskell")[0] for frame in trace.exceptions[0].frames]
    assert roles == [False, False, False, False, True]


def test_ghcis_module_is_named_without_its_evaluations_number() -> None:
    texts = [
        f"*** Exception: boom\nCallStack (from HasCallStack):\n  error, called at <interactive>:3:1 in "
        f"interactive:Ghci{n}\n"
        for n in (1, 7)
    ]
    modules = [trace.exceptions[0].frames[0].module for text in texts if (trace := parse_stacktrace(text))]
    assert modules == ["interactive:Ghci", "interactive:Ghci"]


@pytest.mark.parametrize(
    ("first", "message"),
    [
        ("Prelude.head: empty list", "Prelude.head: empty list"),
        ("shop: Prelude.head: empty list", "Prelude.head: empty list"),
        ("shop.exe: user 42 not found", "user 42 not found"),
    ],
)
def test_a_message_keeps_its_first_word_without_a_programs_name(first: str, message: str) -> None:
    text = f"{first}\nCallStack (from HasCallStack):\n  error, called at src/Lib.hs:12:5 in main:Lib\n"
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].value == message
