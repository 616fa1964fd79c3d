"""The Go race detector's report (`WARNING: DATA RACE`), as ThreadSanitizer's Go runtime prints it
(compiler-rt's tsan_report.cpp; go.dev/doc/articles/race_detector): the access that raced is the site, one
site is one signature whatever the addresses, goroutine ids and depth, two sites behind one message are two,
and a signature an earlier release made from the message (it read no frame) keeps receiving the report."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping.stacktrace import Frame, frame_lines, go_race, parse_stacktrace
from rounds_bot.grouping.trace_memo import TraceMemo
from rounds_bot.models import ErrorEvent


def _race(method: str, line: int, address: int, goroutine: int, depth: int = 1) -> str:
    frames = [f"  main.(*Cache).{method}()", f"      /app/cache.go:{line} +0x{0x64 + line:x}"]
    for i in range(depth):
        frames += ["  main.handle.func1()", f"      /app/main.go:{30 + i} +0x4c"]
    return (
        "==================\nWARNING: DATA RACE\n"
        f"Write at 0x{address:x} by goroutine {goroutine}:\n" + "\n".join(frames) + "\n\n"
        f"Previous read at 0x{address:x} by main goroutine:\n"
        "  main.(*Cache).Get()\n      /app/cache.go:30 +0x3e\n  main.main()\n      /app/main.go:18 +0x38\n\n"
        f"Goroutine {goroutine} (running) created at:\n  main.main()\n      /app/main.go:12 +0x84\n"
        "==================\nFound 1 data race(s)\nexit status 66\n"
    )


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return crash_event(n, stacktrace, error_type="DATA RACE", message="WARNING: DATA RACE")


def test_a_race_report_is_read_to_the_access_that_raced_and_the_one_before_it() -> None:
    trace = parse_stacktrace(_race("Set", 42, 0xC000120018, 7))
    assert trace is not None and trace.runtime == "go"
    raced, previous = trace.exceptions
    assert (raced.type, raced.value, raced.relation) == ("DATA RACE", "Write", "raised")
    assert raced.frames == (
        Frame("(*Cache).Set", module="main", filename="/app/cache.go", lineno=42),
        Frame("handle.func", module="main", filename="/app/main.go", lineno=30),
    )
    assert (previous.value, previous.relation) == ("Previous read", "context")
    assert [f.function for f in previous.frames] == ["(*Cache).Get", "main"]


def test_one_race_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    ids = signatures_of(
        [
            _race("Set", 42, 0xC000120018, 7),
            _race("Set", 42, 0xC000220018, 19, depth=3),
            _race("Delete", 57, 0xC000120018, 7),
        ],
        _event,
    )
    assert ids[0] == ids[1] != ids[2]


def test_a_panic_printed_after_a_race_is_read_as_the_panic_as_before() -> None:
    text = _race("Set", 42, 0xC000120018, 7) + (
        "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:9 +0x1d\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].type == "panic (value)"


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_race_reports(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No release before read these reports: their events went to their message's template, and that
    signature keeps receiving them (it is not split into trace signatures, which would file duplicates)."""
    # a release that read no report
    texts = [
        _race("Set", 42, 0xC000120018, 7),
        _race("Set", 42, 0xC000220018, 19, depth=3),
        _race("Delete", 57, 0xC000120018, 7),
    ]
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, go_race, "is_race_report", lambda lines: False, texts, _event
    )
    assert set(found[how]) == {(made, "fingerprint")}


def test_an_access_line_without_an_address_is_read() -> None:
    """go.dev/doc/articles/race_detector's example prints `Read by goroutine 185:`, no address."""
    text = (
        "WARNING: DATA RACE\nRead by goroutine 185:\n  net.(*pollServer).AddFD()\n"
        "      src/net/fd_unix.go:89 +0x398\n\nPrevious write by goroutine 184:\n"
        "  net.setWriteDeadline()\n      src/net/sockopt_posix.go:135 +0xdf\n\n"
        "Goroutine 185 (running) created at:\n  net.func·061()\n      src/net/timeout_test.go:609 +0x288\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "go"
    raised, previous = trace.exceptions
    assert (raised.type, raised.value, previous.value) == ("DATA RACE", "Read", "Previous write")
    assert [(f.function, f.lineno) for f in raised.frames] == [("(*pollServer).AddFD", 89)]


def test_race_reports_differing_only_by_a_digit_in_a_function_name_are_two_signatures() -> None:
    """Texts of one shape share a reading (`trace_memo`): a race report's function lines are frame lines,
    so a method named `Handle_v1` and one named `Handle_v2` are not one shape."""
    first, second = _race("Handle_v1", 42, 0xC000123456, 7), _race("Handle_v2", 42, 0xC000123456, 7)
    memo = TraceMemo()
    memo.parsed(first)
    read = memo.parsed(second)
    assert read is not None and read.trace == parse_stacktrace(second)
    assert read.trace.exceptions[0].frames[0].function == "(*Cache).Handle_v2"
    ids = signatures_of([first, second], _event)
    assert ids[0] != ids[1]


def test_a_race_reports_function_line_is_a_go_frame_line() -> None:
    lines = [
        "Write at 0xc000123456 by goroutine 7:",
        "  main.(*Cache).Handle_v1()",
        "      /app/cache.go:42 +0x8e",
    ]
    assert frame_lines(lines, "go") == [False, True, True]
