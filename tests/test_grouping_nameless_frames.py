"""A frame that names no function (a Lua anonymous function or main chunk, a UBSan diagnostic's site, the
outermost call of a GHC call stack) is named by where it is, so two sites in one file are two problems, and
two occurrences at one site, with other values, are one."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from crash_texts import crash_event, signatures_of


def _ubsan(line: int, value: int) -> str:
    site = f"/app/src/cart.cc:{line}:5"
    return (
        f"{site}: runtime error: signed integer overflow: {value} + 1 cannot be represented in type 'int'\n"
        f"SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior {site}\n"
    )


def _haskell_outermost(line: int, value: int) -> str:
    return (
        f"shop: user {value} not found\n"
        "CallStack (from HasCallStack):\n"
        f"  error, called at src/Lib.hs:{line}:5 in main:Lib\n"
    )


def _haskell_head(line: int, value: int) -> str:
    # GHC 9.8's `head []`: base's frames, then the app's call, whose function the stack does not name
    return (
        f"shop-{value}: Prelude.head: empty list\n"
        "CallStack (from HasCallStack):\n"
        "  error, called at libraries/base/GHC/List.hs:1782:3 in base:GHC.List\n"
        "  errorEmptyList, called at libraries/base/GHC/List.hs:89:11 in base:GHC.List\n"
        "  badHead, called at libraries/base/GHC/List.hs:83:28 in base:GHC.List\n"
        f"  head, called at src/Lib.hs:{line}:5 in main:Lib\n"
    )


def _lua_main_chunk(line: int, value: int) -> str:
    return (
        f"lua: /app/main.lua:{line}: attempt to perform arithmetic on a nil value (global 'x{value}')\n"
        "stack traceback:\n\t[C]: in ?\n"
        f"\t/app/main.lua:{line}: in main chunk\n\t[C]: in ?\n"
    )


def _lua_anonymous(line: int, value: int) -> str:
    return (
        f"lua: /app/cart.lua:{line + 2}: item {value} missing\n"
        "stack traceback:\n\t[C]: in function 'error'\n"
        f"\t/app/cart.lua:{line + 2}: in function </app/cart.lua:{line}>\n"
        "\t(...tail calls...)\n\t/app/main.lua:5: in main chunk\n\t[C]: in ?\n"
    )


_event = partial(crash_event, error_type="Error", message="failed")


MAKERS = [_ubsan, _haskell_outermost, _haskell_head, _lua_main_chunk, _lua_anonymous]


@pytest.mark.parametrize("make", MAKERS)
def test_two_nameless_sites_in_one_file_are_two_problems(make: Callable[[int, int], str]) -> None:
    ids = signatures_of([make(12, 1), make(40, 1)], _event)
    assert ids[0] != ids[1]


@pytest.mark.parametrize("make", MAKERS)
def test_two_occurrences_at_one_nameless_site_are_one_problem(make: Callable[[int, int], str]) -> None:
    ids = signatures_of([make(12, 1), make(12, 7)], _event)
    assert ids[0] == ids[1]
