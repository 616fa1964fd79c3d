"""Crash reports no runtime's exception printer writes: Ruby's `[BUG]` report (its Ruby frames printed oldest
first), PHP's fatal errors without a stack (the file and line are the site), the kernel's segfault line (the
instruction's offset in its mapping is the site) and Apple's JSON crash reports (`.ips`). One crash site
is one signature, two behind one message are two, and a signature an earlier release made keeps receiving
them."""

from __future__ import annotations

import json
from functools import partial

import pytest
from crash_texts import EventOf, crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of
from known_states import engines_knowing, made_before

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import (
    Frame,
    apple_ips,
    as_read_before,
    parse_stacktrace,
    ruby,
    unread_reports,
)
from rounds_bot.grouping.stacktrace.model import MAX_LINE_CHARS
from rounds_bot.grouping.stacktrace.native import bare_function


def _events(error_type: str, message: str) -> EventOf:
    """Events of one case's type and message."""
    return partial(crash_event, error_type=error_type, message=message)


def _ruby_bug(method: str, line: int, address: int) -> str:
    """vm_dump.c's `rb_vm_bugreport`, as Ruby 3.2 prints it (Ruby level frames oldest first)."""
    return (
        f"/app/lib/shop/cart.rb:{line}: [BUG] Segmentation fault at 0x{address:016x}\n"
        "ruby 3.2.2 (2023-03-30 revision e51014f9c0) [x86_64-linux]\n\n"
        "-- Control frame information -----------------------------------------------\n"
        f"c:0003 p:0012 s:0011 e:000010 METHOD /app/lib/shop/cart.rb:{line}\n\n"
        "-- Ruby level backtrace information ----------------------------------------\n"
        "/app/bin/shop:8:in `<main>'\n"
        "/app/lib/shop/app.rb:20:in `run'\n"
        f"/app/lib/shop/cart.rb:{line}:in `{method}'\n\n"
        "-- C level backtrace information -------------------------------------------\n"
        f"/usr/lib/libruby.so.3.2(rb_vm_bugreport+0x{address % 4096:x}) [0x7f{address:08x}]\n"
    )


def _php_fatal(line: int, size: int, logged: str = "") -> str:
    return (
        f"{logged}PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted "
        f"(tried to allocate {size} bytes) in /app/src/Cart.php on line {line}\n"
    )


def _segfault(pid: int, offset: int, start: int) -> str:
    """Linux's `show_signal_msg` and `print_vma_addr` (`name[start+size]`), behind dmesg's time."""
    return (
        f"[ 8123.456789] app[{pid}]: segfault at 0 ip {start + offset:016x} sp 00007ffc1a2b3c40 error 4 "
        f"in app[{start:x}+2000] likely on CPU 3 (core 3, socket 0)\n"
    )


def _ips(symbol: str, pid: int, base: int) -> str:
    header = {
        "app_name": "Shop",
        "bug_type": "309",
        "os_version": "macOS 14.2 (23C64)",
        "incident_id": f"{pid}",
    }
    body = {
        "pid": pid,
        "exception": {"type": "EXC_BREAKPOINT", "signal": "SIGTRAP", "codes": "0x1, 0x0"},
        "faultingThread": 0,
        "threads": [
            {
                "id": 200 + pid,
                "frames": [{"imageOffset": 4660, "symbol": "__workq_kernreturn", "imageIndex": 1}],
            },
            {
                "triggered": True,
                "id": 100 + pid,
                "frames": [
                    {"imageOffset": 14864, "symbol": symbol, "symbolLocation": 40, "imageIndex": 0},
                    {"imageOffset": 16384, "symbol": "Shop.main()", "symbolLocation": 12, "imageIndex": 0},
                    {"imageOffset": 20480, "imageIndex": 1},
                ],
            },
        ],
        "usedImages": [
            {"base": base, "name": "Shop", "path": "/Applications/Shop.app/Contents/MacOS/Shop"},
            {
                "base": base * 2,
                "name": "libsystem_kernel.dylib",
                "path": "/usr/lib/system/libsystem_kernel.dylib",
            },
        ],
    }
    return json.dumps(header) + "\n" + json.dumps(body, indent=2) + "\n"


_RUBY = ("SignalException", "[BUG] Segmentation fault")
_PHP = ("E_ERROR", "Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)")
_SEGFAULT = ("SIGSEGV", "segfault at 0")
_IPS = ("EXC_BREAKPOINT", "EXC_BREAKPOINT (SIGTRAP)")

CASES = {
    "ruby [BUG]": (
        _RUBY,
        (_ruby_bug("total", 42, 0x10), _ruby_bug("total", 42, 0x7F20), _ruby_bug("discount", 17, 0x10)),
    ),
    "php fatal": (
        _PHP,
        (_php_fatal(12, 20480), _php_fatal(12, 65536, "[01-Mar-2026 12:00:01 UTC] "), _php_fatal(80, 20480)),
    ),
    "kernel segfault": (
        _SEGFAULT,
        (
            _segfault(1234, 0x1234, 0x55D5C0A00000),
            _segfault(987, 0x1234, 0x5611AA000000),
            _segfault(1234, 0x1A40, 0x55D5C0A00000),
        ),
    ),
    "apple ips": (
        _IPS,
        (
            _ips("Order.total()", 411, 4301000000),
            _ips("Order.total()", 922, 4302000000),
            _ips("Order.discount()", 411, 4301000000),
        ),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two(case: str) -> None:
    (error_type, message), texts = CASES[case]
    ids = signatures_of(texts, _events(error_type, message))
    assert ids[0] == ids[1] != ids[2]


def test_a_ruby_bug_reports_ruby_frames_are_read_crash_site_first() -> None:
    trace = parse_stacktrace(_ruby_bug("total", 42, 0x10))
    assert trace is not None and trace.runtime == "ruby"
    assert [frame.function for frame in trace.exceptions[0].frames] == ["total", "run", "<main>"]
    before = as_read_before(trace)
    assert before is not None and [frame.function for frame in before.exceptions[0].frames] == [
        "<main>",
        "run",
        "total",
    ]


def test_a_php_fatal_error_is_read_at_its_file_and_line() -> None:
    trace = parse_stacktrace(_php_fatal(12, 20480, "[01-Mar-2026 12:00:01 UTC] "))
    assert trace is not None and trace.runtime == "php"
    assert trace.exceptions[0].type == "Fatal error"
    assert trace.exceptions[0].frames == (Frame("<line 12>", filename="/app/src/Cart.php", lineno=12),)


def test_the_kernels_segfault_line_is_read_at_the_instructions_offset_in_its_image() -> None:
    trace = parse_stacktrace(_segfault(1234, 0x1234, 0x55D5C0A00000))
    assert trace is not None and trace.runtime == "native"
    assert trace.exceptions[0].frames == (Frame("+0x1234", module="app"),)


def test_an_apple_json_crash_report_is_read_from_its_triggered_thread() -> None:
    trace = parse_stacktrace(_ips("Order.total()", 411, 4301000000))
    assert trace is not None and trace.runtime == "native"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("EXC_BREAKPOINT", "SIGTRAP")
    assert [(f.function, f.module) for f in error.frames] == [
        ("Order.total", "Shop"),
        ("Shop.main", "Shop"),
        (None, "libsystem_kernel.dylib"),
    ]


@pytest.mark.parametrize("text", ["{}", '{"threads": "x"}', '{"bug_type":"309"}\n{not json', "[1, 2]"])
def test_json_that_is_no_crash_report_is_left_to_its_message(text: str) -> None:
    assert parse_stacktrace(text) is None


@pytest.mark.parametrize("case", ["php fatal", "kernel segfault", "apple ips"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    (error_type, message), texts = CASES[case]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, unread_reports, "parse", lambda text, lines: None, texts, _events(error_type, message)
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


def test_a_signature_an_earlier_release_made_of_a_ruby_bug_report_keeps_receiving_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Releases before read its Ruby frames in print order: the signature they made keeps receiving it."""
    (error_type, message), texts = CASES["ruby [BUG]"]
    made, saved = made_before(
        monkeypatch,
        ruby,
        "_innermost_first",
        lambda trace, sections: trace,
        _events(error_type, message)(0, texts[0]),
    )
    for engine in engines_knowing(saved).values():
        found = engine.assign(_events(error_type, message)(1, texts[1]))
        assert (found.signature_id, found.tier) == (made, "fingerprint")


def test_json_nested_deeper_than_the_decoder_recurses_is_left_to_its_message() -> None:
    """2 KB of brackets: the JSON decoder recurses once a level and gives up past the recursion limit."""
    deep = '{"threads":' + "[" * 1000 + "]" * 1000 + "}"
    placed = GroupingEngine().assign_all([_events("EXC_BAD_ACCESS", "EXC_BAD_ACCESS (SIGSEGV)")(0, deep)])
    assert placed[0].tier == "new"
    assert parse_stacktrace(deep) is None


def test_a_megabyte_of_php_words_is_read_in_one_pass() -> None:
    """Every ` in ` a candidate for the file's start: read once from the line's end, not tried at each
    (lines of 2 KB, a megabyte of them, took seconds so)."""
    line = "PHP Fatal error:  " + (" in" * 682) + " on line 1x"
    text = "\n".join([line] * 500 + [_php_fatal(12, 20480)])
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].frames[0].filename == "/app/src/Cart.php"


@pytest.mark.parametrize(
    "line",
    [
        "Parse error: config error in settings.yaml on line 3",
        "Fatal error: out of memory in worker pool on line 3",
    ],
)
def test_a_fatal_error_in_what_is_no_php_file_is_left_to_its_message(line: str) -> None:
    assert parse_stacktrace(line) is None


def test_a_php_message_that_says_in_is_read_at_the_last_file() -> None:
    trace = parse_stacktrace(
        "PHP Fatal error:  Cannot redeclare foo() (previously declared in /app/a.php:3) "
        "in /app/b.php on line 5"
    )
    assert trace is not None
    assert trace.exceptions[0].value == "Cannot redeclare foo() (previously declared in /app/a.php:3)"
    assert trace.exceptions[0].frames == (Frame("<line 5>", filename="/app/b.php", lineno=5),)


def test_nginx_relaying_php_fatal_error_is_read_as_it() -> None:
    """nginx logs what PHP-FPM wrote to stderr: `FastCGI sent in stderr: "PHP message: ..."`."""
    trace = parse_stacktrace(
        '2026/03/01 12:00:01 [error] 123#123: *45 FastCGI sent in stderr: "PHP message: PHP Fatal error:  '
        "Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) "
        'in /app/src/Cart.php on line 12" while reading response header from upstream, client: 10.0.0.1'
    )
    assert trace is not None and trace.runtime == "php"
    assert trace.exceptions[0].frames == (Frame("<line 12>", filename="/app/src/Cart.php", lineno=12),)


def test_a_megabyte_ips_symbol_is_read_up_to_a_lines_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a name walks it: a symbol is cut to a line's length first, as a text report's line is."""
    read: list[int] = []

    def recording(name: str) -> str | None:
        read.append(len(name))
        return bare_function(name)

    monkeypatch.setattr(apple_ips, "bare_function", recording)
    trace = parse_stacktrace(_ips("a " * 500_000, 411, 4301000000))
    assert trace is not None and read and max(read) <= MAX_LINE_CHARS


def test_an_ips_symbols_return_type_is_no_part_of_its_name() -> None:
    trace = parse_stacktrace(_ips("Shop.Order.total() -> Swift.Int", 411, 4301000000))
    assert trace is not None and trace.exceptions[0].frames[0].function == "Shop.Order.total"


@pytest.mark.parametrize("prefix", ["web.1  | ", "    "])
def test_a_ruby_bug_report_behind_a_prefix_is_read_crash_site_first(prefix: str) -> None:
    (error_type, message), texts = CASES["ruby [BUG]"]
    prefixed = "\n".join(prefix + line for line in texts[0].splitlines())
    for order in ([texts[0], prefixed], [prefixed, texts[0]]):
        ids = signatures_of(order, _events(error_type, message))
        assert ids[0] == ids[1]


def test_a_ruby_trace_before_a_bug_report_keeps_its_order() -> None:
    trace = parse_stacktrace(
        "/app/lib/a.rb:5:in `inner': boom (RuntimeError)\n\tfrom /app/lib/a.rb:9:in `outer'\n"
        "\tfrom /app/bin/x:3:in `<main>'\n" + _ruby_bug("total", 42, 0x10)
    )
    assert trace is not None
    assert [f.function for f in trace.exceptions[0].frames] == [
        "inner",
        "outer",
        "<main>",
        "total",
        "run",
        "<main>",
    ]
    before = as_read_before(trace)
    assert before is not None
    assert [f.function for f in before.exceptions[0].frames] == [
        "inner",
        "outer",
        "<main>",
        "<main>",
        "run",
        "total",
    ]


def test_the_kernels_segfault_line_with_the_file_offset_is_read_at_it() -> None:
    """Current kernels print `%pD[%lx,%lx+%lx]`: the instruction's offset in the file (here not its offset in
    the mapping, which starts further in the file), then the mapping."""
    trace = parse_stacktrace(
        "[ 812.123456] app[1234]: segfault at 0 ip 00000000b7ab74f6 sp 00007ffd1e2f3a40 error 4 "
        "in libc-2.31.so[8c4f6,b7a4b000+155000] likely on CPU 0 (core 0, socket 0)"
    )
    assert trace is not None and trace.exceptions[0].frames == (Frame("+0x8c4f6", module="libc-2.31.so"),)
