"""Lua's errors with their `stack traceback:` (lauxlib's `luaL_traceback`, Lua 5.1 to 5.4 and LuaJIT): one
`\tLOCATION: in WHAT` line a running function, `[C]` a C function, `(...tail calls...)`; OpenResty's
`lua entry thread aborted: runtime error:` log lines. One crash site is one signature, two behind one message
are two, C functions and installed modules are a library's, and a signature an earlier release made from the
message keeps receiving them."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

MESSAGE = "attempt to index a nil value (field 'user')"


def _lua(file: str, line: int, depth: int = 1) -> str:
    lines = [
        f"lua: /app/{file}.lua:{line}: {MESSAGE}",
        "stack traceback:",
        "\t[C]: in function 'error'",
        f"\t/app/{file}.lua:{line}: in function 'total'",
        "\t(...tail calls...)",
    ]
    lines += [f"\t/app/main.lua:{10 + i}: in local 'run'" for i in range(depth)]
    lines += ["\t/app/main.lua:50: in main chunk", "\t[C]: in ?"]
    return "\n".join(lines) + "\n"


def _event(n: int, text: str, message: str = MESSAGE) -> ErrorEvent:
    return crash_event(n, text, error_type="error", message=message)


def test_a_traceback_is_read_innermost_first() -> None:
    trace = parse_stacktrace(_lua("cart", 12))
    assert trace is not None and trace.runtime == "lua"
    error = trace.exceptions[0]
    assert error.value == MESSAGE
    assert error.frames == (
        Frame("error"),
        Frame("total", filename="/app/cart.lua", lineno=12),
        Frame("run", filename="/app/main.lua", lineno=10),
        Frame("main chunk <line 50>", filename="/app/main.lua", lineno=50),
    )


@pytest.mark.parametrize(
    ("line", "function"),
    [
        ("\t/app/x.lua:3: in upvalue 'helper'", "helper"),
        ("\t/app/x.lua:3: in method 'save'", "save"),
        ("\t/app/x.lua:3: in field 'save'", "save"),
        ("\t/app/x.lua:3: in method 'Cart:save'", "Cart:save"),
        ("\t/app/x.lua:3: in function 'cart.save'", "cart.save"),
        ("\t/app/x.lua:3: in function <x.lua:1>", "function <line 1>"),
        ("\t/app/x.lua:3: in function </app/x.lua:1>", "function <line 1>"),
        ("\t/app/x.lua:3: in main chunk", "main chunk <line 3>"),
    ],
)
def test_every_way_lua_names_a_function_is_read(line: str, function: str | None) -> None:
    trace = parse_stacktrace(f"lua: /app/x.lua:3: oops\nstack traceback:\n{line}\n")
    assert trace is not None
    assert trace.exceptions[0].frames == (Frame(function, filename="/app/x.lua", lineno=3),)


def test_openrestys_aborted_thread_is_read_without_the_requests_details() -> None:
    text = (
        "2026/11/01 08:00:00 [error] 7#7: *1 lua entry thread aborted: runtime error: "
        "/app/lua/cart.lua:12: attempt to index a nil value (field 'user')\n"
        "stack traceback:\n"
        "coroutine 0:\n"
        "\t[C]: in function 'error'\n"
        "\t/app/lua/cart.lua:12: in function 'total'\n"
        "\tcontent_by_lua(nginx.conf:10):3: in main chunk, client: 10.0.0.1, server: shop, "
        'request: "GET / HTTP/1.1"\n'
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "lua"
    error = trace.exceptions[0]
    assert error.value == MESSAGE
    assert error.frames[-1] == Frame(
        "main chunk <line 3>", filename="content_by_lua(nginx.conf:10)", lineno=3
    )


@pytest.mark.parametrize(
    ("path", "in_app"),
    [
        ("/usr/local/openresty/lualib/resty/core/base.lua", False),
        ("/usr/share/lua/5.1/cjson.lua", False),
        ("/usr/local/share/lua/5.4/inspect.lua", False),
        ("/app/lua_modules/share/lua/5.4/lpeg.lua", False),
        ("...rocks/share/lua/5.1/lapis/db.lua", False),
        ("...nresty/site/lualib/resty/http.lua", False),
        ("/usr/local/openresty/site/lualib/resty/http.lua", False),
        ("/opt/homebrew/share/lua/5.4/inspect.lua", False),
        ("/app/lua/cart.lua", True),
        (".../app/handlers/checkout.lua", True),
    ],
)
def test_installed_modules_are_a_librarys(path: str, in_app: bool) -> None:
    assert InAppRules().decide(Frame("f", filename=path, lineno=1), "lua")[0] is in_app


def test_a_c_function_is_a_librarys() -> None:
    assert InAppRules().decide(Frame("error"), "lua")[0] is False


def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    texts = (_lua("cart", 12), _lua("cart", 12, depth=3), _lua("order", 40))
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [_lua("cart", 12), _lua("cart", 12, depth=3), _lua("order", 40)]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, stacktrace, "_script_runtime", lambda lines: None, texts, _event
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


@pytest.mark.parametrize(
    "between",
    [
        "\t(tail call): ?",  # Lua 5.1's frame Lua no longer has
        "\t[C]: ?",  # Lua 5.1's C function with no name
        "\t[C]: at 0x55e48a50f450",  # LuaJIT's
        "\t...",  # Lua 5.1's levels skipped
        "\t...\t(skipping 12 levels)",  # Lua 5.2 and later's
    ],
)
def test_no_line_lua_prints_in_a_traceback_ends_it(between: str) -> None:
    text = (
        "luajit: /app/cart.lua:9: boom\nstack traceback:\n"
        f"{between}\n\t/app/cart.lua:9: in function 'cb'\n{between}\n"
        "\t/app/handlers/checkout.lua:40: in function 'handle'\n\t/app/main.lua: in main chunk\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "lua"
    assert trace.exceptions[0].frames == (
        Frame("cb", filename="/app/cart.lua", lineno=9),
        Frame("handle", filename="/app/handlers/checkout.lua", lineno=40),
        Frame(None, filename="/app/main.lua"),
    )


def test_frames_without_line_information_are_read_and_two_sites_are_two_problems() -> None:
    def text(file: str) -> str:
        return (
            "lua: attempt to index a nil value\nstack traceback:\n\t[C]: in function 'error'\n"
            f"\t/app/{file}.lua: in function '{file}'\n\t/app/main.lua: in main chunk\n\t[C]: in ?\n"
        )

    trace = parse_stacktrace(text("cart"))
    assert trace is not None
    assert trace.exceptions[0].frames[1] == Frame("cart", filename="/app/cart.lua")
    ids = signatures_of([text("cart"), text("order")], lambda n, t: _event(n, t, "x"))
    assert ids[0] != ids[1]
