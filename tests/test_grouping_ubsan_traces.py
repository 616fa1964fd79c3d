"""UndefinedBehaviorSanitizer's report without a stack (its default, `UBSAN_OPTIONS=print_stacktrace=0`): the
`FILE:LINE:COL: runtime error: ...` line names the site, and it is read as the crash's one frame, so two
bugs behind one message are two problems; a signature an earlier release made from the message keeps
receiving them."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.logged_traces import logged_exception
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent


def _ubsan(file: str, line: int, value: int = 2147483647) -> str:
    return (
        f"/app/src/{file}.cc:{line}:5: runtime error: signed integer overflow: {value} + 1 cannot be "
        "represented in type 'int'\n"
        f"SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /app/src/{file}.cc:{line}:5 \n"
    )


def _event(n: int, text: str) -> ErrorEvent:
    message = text.split("runtime error: ", 1)[1].splitlines()[0]
    return crash_event(n, text, error_type="UBSan", message=message)


def test_the_site_a_runtime_error_names_is_its_frame() -> None:
    trace = parse_stacktrace(_ubsan("cart", 12))
    assert trace is not None and trace.runtime == "native"
    error = trace.exceptions[0]
    assert error.type == "UndefinedBehaviorSanitizer: runtime error"
    assert error.value.startswith("signed integer overflow")
    assert error.frames == (Frame("<line 12>", filename="/app/src/cart.cc", lineno=12),)


def test_a_report_with_its_stack_is_read_as_before() -> None:
    text = (
        "/app/src/cart.cc:12:5: runtime error: signed integer overflow\n"
        "    #0 0x4c0e3b in Cart::total() /app/src/cart.cc:12:5\n"
        "    #1 0x4c0f00 in main /app/src/main.cc:3:1\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert [f.function for f in trace.exceptions[0].frames] == ["Cart::total", "main"]


def test_a_line_naming_no_source_is_not_read() -> None:
    assert parse_stacktrace("runtime error: something went wrong\nand more\n") is None


def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    texts = (_ubsan("cart", 12), _ubsan("cart", 12, value=2147483600), _ubsan("order", 40))
    ids = signatures_of(texts, _event)
    assert ids[0] == ids[1] != ids[2]


def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [_ubsan("cart", 12), _ubsan("cart", 12, value=5), _ubsan("order", 40)]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, stacktrace, "_runtime_error_site", lambda lines: None, texts, _event
    )
    for placed in found.values():
        assert placed == [(made, "fingerprint")] * 2


@pytest.mark.parametrize(
    "unreadable", ["#0  0x0000000000400000 in ?? ()\n", "    #0 0x0 in ??\n", "#1 0x00007f3b in ?? ()\n"]
)
def test_two_sites_behind_one_unreadable_stack_line_are_two_problems(unreadable: str) -> None:
    # the two texts differ only in digits, and their one stack line is the same: the site is in the
    # diagnostic's line alone
    def text(codec: int, line: int) -> str:
        return (
            f"/app/src/codec{codec}.cc:{line}:5: runtime error: signed integer overflow\n{unreadable}"
            f"SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /app/src/codec{codec}.cc:{line}:5\n"
        )

    texts = (text(1, 12), text(2, 40))
    ids = signatures_of(texts, _event)
    assert ids[0] != ids[1]


@pytest.mark.parametrize(
    "text",
    [
        "main.go:42: runtime error: index out of range [5] with length 3\nretrying request in 5s\n",
        "--- FAIL: TestCheckout (0.00s)\n    cart_test.go:31: runtime error: integer divide by zero\nFAIL\n",
        "worker.py:7: runtime error: the job failed\n",
    ],
)
def test_a_runtime_error_line_of_a_file_no_c_compiler_builds_is_not_ubsans(text: str) -> None:
    assert parse_stacktrace(text) is None
    found = logged_exception(text, {})
    assert found is None or found.error_type != "UndefinedBehaviorSanitizer: runtime error"


@pytest.mark.parametrize(
    "file", ["cart.c", "cart.cpp", "cart.cxx", "cart.h", "cart.hpp", "view.mm", "cart.C"]
)
def test_a_runtime_error_in_a_c_family_source_is_read(file: str) -> None:
    trace = parse_stacktrace(f"/app/src/{file}:12:5: runtime error: load of null pointer\n")
    assert trace is not None
    assert trace.exceptions[0].frames == (Frame("<line 12>", filename=f"/app/src/{file}", lineno=12),)


def test_a_runtime_error_of_any_source_under_ubsans_summary_is_read() -> None:
    text = (
        "/app/src/kernel.zig:12:5: runtime error: load of null pointer\n"
        "SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /app/src/kernel.zig:12:5\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert trace.exceptions[0].frames == (Frame("<line 12>", filename="/app/src/kernel.zig", lineno=12),)
