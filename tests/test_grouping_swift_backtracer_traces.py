"""Swift's runtime backtracer (Swift 5.9 and later on Linux), as the Swift project's `docs/Backtracing.rst`
lays it out: one crash site is one signature whatever the run's addresses, thread and depth; two crash sites
behind one message are two; and a signature an earlier release made from the frames it misread keeps
receiving the crash."""

from __future__ import annotations

import re

import pytest
from crash_texts import crash_event, placed_by_engines_knowing_an_earlier_signature, signatures_of

from rounds_bot.grouping.stacktrace import Frame, as_read_before, parse_stacktrace, swift_backtrace
from rounds_bot.models import ErrorEvent


def _backtrace(site: str, line: int, address: int, depth: int = 1) -> str:
    """A `fatalError`'s crash as the backtracer prints it without colour (`*** ... ***`)."""
    frames = [
        f"0 [system] 0x00007f{address % 0xFFFFFF:06x}1234 _assertionFailure(_:_:file:line:flags:) + 264"
        " in libswiftCore.so",
        f"1 [ra] 0x{address:016x} {site} + 12 in shop at /src/Sources/shop/Cart.swift:{line}:5",
    ]
    frames += [
        f"{2 + i} [ra] 0x{address + 0x40 * i:016x} closure #1 in Handler.run() + 40 in shop"
        f" at /src/Sources/shop/Handler.swift:{30 + i}:9"
        for i in range(depth)
    ]
    frames.append(
        f"{2 + depth} [ra] [system] 0x00007f{address % 0xFFFFFF:06x}9d90 __libc_start_call_main + 128 in"
        " libc.so.6 at ./csu/../sysdeps/nptl/libc_start_call_main.h:58:16"
    )
    return (
        "Swift/ContiguousArrayBuffer.swift:600: Fatal error: Index out of range\n\n"
        f"*** Program crashed: System trap at 0x00007f{address % 0xFFFFFF:06x}1234 ***\n\n"
        'Thread 0 "main" crashed:\n\n' + "\n".join(frames) + "\n\nRegisters:\nrax 0x0000000000000000  0\n\n"
        "Backtrace took 0.04s\n"
    )


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return crash_event(n, stacktrace, error_type="Fatal error", message="Index out of range")


def test_a_swift_backtrace_is_read_to_its_functions_images_and_sources() -> None:
    trace = parse_stacktrace(_backtrace("Cart.total()", 12, 0x55D4C1A2B3C4))
    assert trace is not None and trace.runtime == "native"
    crash = trace.exceptions[0]
    assert (crash.type, crash.value) == ("Fatal error", "Index out of range")
    assert crash.frames[:3] == (
        Frame("_assertionFailure", module="libswiftCore.so"),
        Frame("Cart.total", module="shop", filename="/src/Sources/shop/Cart.swift", lineno=12),
        Frame("Handler.run", module="shop", filename="/src/Sources/shop/Handler.swift", lineno=30),
    )


def test_a_crash_without_a_fatal_error_is_typed_by_what_crashed_without_the_address() -> None:
    text = _backtrace("Cart.total()", 12, 0x55D4C1A2B3C4).split("\n", 2)[2]
    text = re.sub(r"System trap at 0x\w+", "Bad pointer dereference at 0x0000000000000004", text)
    trace = parse_stacktrace(text)
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == (
        "Program crashed",
        "Bad pointer dereference",
    )


def test_one_swift_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    ids = signatures_of(
        [
            _backtrace("Cart.total()", 12, 0x55D4C1A2B3C4),
            _backtrace("Cart.total()", 12, 0x56E4C1A2C3C4, depth=3),  # another run, deeper
            _backtrace("Cart.discount()", 40, 0x55D4C1A2B3C4),
        ],
        _event,
    )
    assert ids[0] == ids[1] != ids[2]


def test_a_swift_backtrace_is_also_read_as_releases_before_read_it() -> None:
    """They read the lines after a mark as Apple's frames, the mark as the image, and no header."""
    trace = parse_stacktrace(_backtrace("Cart.total()", 12, 0x55D4C1A2B3C4))
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and as_read_before(before) is None
    assert (before.exceptions[0].type, before.exceptions[0].value) == ("crash", "")
    assert before.exceptions[0].frames[1] == Frame("/src/Sources/shop/Cart.swift:12:5", module="[ra]")


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_a_misread_swift_backtrace_keeps_receiving_it(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its frames were misread the same way in every occurrence: the signature they made is not split."""
    texts = [
        _backtrace("Cart.total()", 12, 0x55D4C1A2B3C4),
        _backtrace("Cart.total()", 12, 0x56E4C1A2C3C4),
        _backtrace("Cart.total()", 12, 0x57E4C1A2C3C4, depth=2),
    ]
    # a release that knew no backtracer
    made, found = placed_by_engines_knowing_an_earlier_signature(
        monkeypatch, swift_backtrace, "frame_parts", lambda line: None, texts, _event
    )
    assert set(found[how]) == {(made, "fingerprint")}


def _all_threads(site: str, crashed: int) -> str:
    """With no terminal the backtracer prints every thread (its `full` preset), the crashed one marked
    `crashed:` (the Swift project's `test/Backtracing/CrashWithThreads.swift`)."""
    out = ["Swift/ContiguousArrayBuffer.swift:600: Fatal error: Index out of range", ""]
    out += ["*** Program crashed: Illegal instruction at 0x000055d4c1a2b3c4 ***", ""]
    for thread in range(3):
        mark = " crashed" if thread == crashed else ""
        out += [f'Thread {thread} "NIO-ELT-0-#{thread}"{mark}:', ""]
        if thread == crashed:
            out.append(f"0 [ra] 0x000055d4c1a2b3c4 {site} + 12 in shop at /src/Sources/shop/Cart.swift:12:5")
        else:
            out += [
                f"0      0x00007f00000{thread}1000 epoll_wait + 94 in libc.so.6"
                " at ../sysdeps/unix/sysv/linux/epoll_wait.c:30:10",
                f"1 [ra] 0x000055d4c1a{thread}1100 SelectableEventLoop.run() + 300 in shop"
                " at /src/NIOPosix/Loop.swift:470:13",
            ]
        out.append("")
    return "\n".join(out)


def test_the_crashed_thread_is_read_when_the_backtracer_prints_every_thread() -> None:
    trace = parse_stacktrace(_all_threads("Cart.total()", 2))
    assert trace is not None
    assert [frame.function for frame in trace.exceptions[0].frames] == ["Cart.total"]
    ids = signatures_of([_all_threads("Cart.total()", 2), _all_threads("Cart.discount()", 1)], _event)
    assert ids[0] != ids[1]


_FRAME = "1 [ra] 0x000055d4c1a2b3c4 Cart.total() + 12 in shop at /src/Sources/shop/Cart.swift:12:5"


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        (
            "Sources/shop/Cart.swift:12: Precondition failed: cart must not be empty",
            ("Precondition failed", "cart must not be empty"),
        ),
        ("Sources/shop/Cart.swift:12: Assertion failed", ("Assertion failed", "")),
        ("Sources/shop/Cart.swift:12: Fatal error", ("Fatal error", "")),
        ("Sources/My Shop/Cart.swift:12: Fatal error: closed", ("Fatal error", "closed")),
        (
            "*** Swift runtime failure: Index out of range ***",
            ("Swift runtime failure", "Index out of range"),
        ),
    ],
)
def test_a_swift_crash_is_typed_by_the_standard_librarys_failure(
    first: str, expected: tuple[str, str]
) -> None:
    """`_assertionFailure` prints `<file>:<line>: <prefix>[: <message>]`, its prefix `Fatal error`,
    `Precondition failed` or `Assertion failed`; the backtracer names a runtime failure's trap in its
    header."""
    trace = parse_stacktrace(f'{first}\n\nThread 0 "main" crashed:\n\n{_FRAME}\n')
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "2 [async] 0x000055d4c1a2b3c4 Cart.total() + 12 in shop at /src/Sources/shop/Cart.swift:12:5",
            Frame("Cart.total", module="shop", filename="/src/Sources/shop/Cart.swift", lineno=12),
        ),
        (
            "3 [ra] [async] 0x000055d4c1a2b3c4 Cart.total() - 4 in shop at /src/Sources/shop/Cart.swift:12:5",
            Frame("Cart.total", module="shop", filename="/src/Sources/shop/Cart.swift", lineno=12),
        ),
        (
            "5 [ra] 0x000055d4c1a2b3c4 main + 42 in shop at /src/Sources/shop/main.swift",
            Frame("main", module="shop", filename="/src/Sources/shop/main.swift"),
        ),
        (
            "4 [ra] [thunk] 0x000055d4c1a2b3c4 Cart.run() + 12 in shop at /src/<compiler-generated>",
            Frame("Cart.run", module="shop", filename="/src/<compiler-generated>"),
        ),
        (
            "0 [inlined] [system] 0x000055d4c1a2b3c4 Swift runtime failure: Index out of range"
            " in libswiftCore.so at /src/swift/stdlib/public/core/ContiguousArrayBuffer.swift:600:5",
            Frame(
                "Swift runtime failure: Index out of range",
                module="libswiftCore.so",
                filename="/src/swift/stdlib/public/core/ContiguousArrayBuffer.swift",
                lineno=600,
            ),
        ),
    ],
)
def test_a_backtracer_frame_is_read_whatever_its_marks_offset_and_location(
    line: str, expected: Frame
) -> None:
    """Marks `[ra]`, `[async]`, `[inlined]`, `[thunk]`, `[system]`; an offset either side of the symbol; a
    location without a line (the backtracer's `SymbolicatedBacktrace`)."""
    trace = parse_stacktrace(
        f'Thread 0 "main" crashed:\n\n{line}\n9 [ra] 0x000055d4c1a2b3c4 main + 42 in shop\n'
    )
    assert trace is not None and trace.exceptions[0].frames[0] == expected
