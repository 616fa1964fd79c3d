"""Stack-trace parsers: each runtime's real output in, the parsed exceptions and frames out.

Golden pairs live in tests/golden/grouping/traces/: `<case>.txt` is the trace as the runtime
prints it, `<case>.json` what the parser must read from it (frames crash site first).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.grouping import stacktrace
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import (
    ParsedTrace,
    browser,
    dart,
    detect_runtime,
    elixir,
    native,
    node_fatal,
    parse_stacktrace,
    php,
    rust,
)
from rounds_bot.grouping.stacktrace.model import MAX_LINE_CHARS, trace_lines
from rounds_bot.models import ErrorEvent

TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"
CASES = sorted(path.stem for path in TRACES.glob("*.txt"))


def as_json(trace: ParsedTrace | None) -> dict | None:
    if trace is None:
        return None
    return {
        "runtime": trace.runtime,
        "exceptions": [
            {
                "type": e.type,
                "value": e.value,
                "relation": e.relation,
                # (`newly_read` only where a frame is: the goldens before it stay as they were)
                "frames": [
                    {k: v for k, v in asdict(f).items() if v is not None and (k != "newly_read" or v)}
                    for f in e.frames
                ],
            }
            for e in trace.exceptions
        ],
    }


@pytest.mark.parametrize("case", CASES)
def test_trace_parses_as_recorded(case: str) -> None:
    text = (TRACES / f"{case}.txt").read_text(encoding="utf-8")
    expected = json.loads((TRACES / f"{case}.json").read_text(encoding="utf-8"))
    assert as_json(parse_stacktrace(text)) == expected


def test_every_runtime_has_golden_traces() -> None:
    runtimes = {
        json.loads((TRACES / f"{c}.json").read_text())["runtime"] for c in CASES if c != "not_a_trace"
    }
    assert runtimes == {
        "python",
        "java",
        "node",
        "go",
        "dotnet",
        "ruby",
        "ocaml",
        "rust",
        "php",
        "elixir",
        "dart",
    }


def test_python_chained_exceptions_are_read_raised_first() -> None:
    trace = parse_stacktrace((TRACES / "python_chained_cause.txt").read_text())
    assert trace is not None
    assert [(e.type, e.relation) for e in trace.exceptions] == [
        ("shop.errors.StoreUnavailable", "raised"),
        ("psycopg.OperationalError", "cause"),
    ]
    assert trace.exceptions[0].frames[0].function == "load_cart"  # crash site first


def test_java_caused_by_chain_and_suppressed_are_all_read() -> None:
    trace = parse_stacktrace((TRACES / "java_caused_by.txt").read_text())
    assert trace is not None
    assert [e.relation for e in trace.exceptions] == ["raised", "cause", "suppressed", "cause"]


def test_java_generated_names_are_normalised() -> None:
    trace = parse_stacktrace((TRACES / "java_caused_by.txt").read_text())
    assert trace is not None
    modules = {f.module for e in trace.exceptions for f in e.frames}
    functions = {f.function for e in trace.exceptions for f in e.frames}
    assert "com.acme.shop.web.CheckoutController$$EnhancerBySpringCGLIB" in modules
    assert "jdk.internal.reflect.GeneratedMethodAccessor" in modules
    assert "lambda$checkout$<n>" in functions


def test_go_panicking_goroutine_comes_first_and_others_are_context() -> None:
    trace = parse_stacktrace((TRACES / "go_deadlock.txt").read_text())
    assert trace is not None
    assert [(e.type, e.relation) for e in trace.exceptions] == [
        ("fatal error", "raised"),
        ("goroutine", "context"),
    ]


def test_dotnet_inner_exception_gets_the_frames_printed_before_its_end_marker() -> None:
    trace = parse_stacktrace((TRACES / "dotnet_inner.txt").read_text())
    assert trace is not None
    inner = trace.exceptions[1]
    assert inner.relation == "inner"
    assert inner.frames[0].function == "ThrowArgumentNullException"


def test_dotnet_async_state_machine_names_map_back_to_the_method() -> None:
    trace = parse_stacktrace((TRACES / "dotnet_inner.txt").read_text())
    assert trace is not None
    assert trace.exceptions[0].frames[0].module == "Shop.Orders.OrderService"
    assert trace.exceptions[0].frames[0].function == "TotalAsync"


def test_ocaml_dune_mangling_is_undone() -> None:
    trace = parse_stacktrace((TRACES / "ocaml_raised_at.txt").read_text())
    assert trace is not None
    assert [f.module for f in trace.exceptions[0].frames] == ["Stdlib.Map.Make", "Shop", "Shop", "Shop"]


def test_rust_symbols_lose_their_hash_and_a_trait_method_belongs_to_its_type() -> None:
    trace = parse_stacktrace((TRACES / "rust_full.txt").read_text())
    assert trace is not None and trace.runtime == "rust"
    keys = [(f.module, f.function) for f in trace.exceptions[0].frames]
    assert ("shop::cart", "total") in keys  # `shop::cart::total::h5d2…` and its address are gone
    assert ("shop::Handler", "call::{{closure}}") in keys  # `<shop::Handler as tower::Service<R>>::call`


def test_a_rust_panic_without_a_backtrace_is_read_at_its_location() -> None:
    old_style = (
        "thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 5', src/main.rs:4:5"
    )
    trace = parse_stacktrace(old_style + "\nnote: run with `RUST_BACKTRACE=1` to display a backtrace")
    assert trace is not None  # its only frame: the panic location (more in test_grouping_rust_panics.py)
    assert [(f.module, f.function) for f in trace.exceptions[0].frames] == [("src/main.rs", "line 4")]


def test_php_frames_run_where_the_next_frame_called_them_and_namespaces_use_dots() -> None:
    printed = parse_stacktrace((TRACES / "php_uncaught.txt").read_text())
    sdk = parse_stacktrace((TRACES / "php_otel.txt").read_text())
    assert printed is not None and sdk is not None and printed.runtime == sdk.runtime == "php"
    # the raised exception is the last `Next` block; the exception it wraps is its cause
    assert [(e.type, e.relation) for e in printed.exceptions] == [
        ("RuntimeException", "raised"),
        ("InvalidArgumentException", "cause"),
    ]
    capture = printed.exceptions[0].frames[0]
    assert (capture.module, capture.function, capture.lineno) == ("App.Billing.Charge", "capture", 44)
    # the same code gives the same frame in the SDK's Java layout
    assert (sdk.exceptions[0].frames[0].module, sdk.exceptions[0].frames[0].function) == (
        "App.Billing.Charge",
        "capture",
    )


def test_text_that_is_no_trace_parses_to_nothing() -> None:
    assert parse_stacktrace((TRACES / "not_a_trace.txt").read_text()) is None
    assert parse_stacktrace("") is None
    assert parse_stacktrace("   \n  ") is None


@pytest.mark.parametrize(
    "text",
    [
        "Error: x\n    at " + "a (" * 300_000,
        "/a.rb:1:in `x': " + "m (" * 300_000 + " (Err)",
        "java.lang.X: y\n\tat " + "a." * 400_000 + "b(X.java:1)",
        'Traceback (most recent call last):\n  File "x", line\n garbage \x00\x01',
        "goroutine 1 [running]:\n\t/only/a/file.go:1",
        "\tat \n\tat (\n\tat a(\n--- End of inner exception stack trace ---\n ---> ",
        "Raised at\nCalled from file",
    ],
)
def test_malformed_and_huge_traces_never_raise(text: str) -> None:
    parse_stacktrace(text)


def test_a_ten_thousand_frame_trace_is_read_whole() -> None:
    text = "java.lang.StackOverflowError\n" + "\tat com.acme.Tree.depth(Tree.java:12)\n" * 10_000
    trace = parse_stacktrace(text)
    assert trace is not None
    assert trace.frame_count == 10_000


def test_lines_are_cut_so_no_pattern_sees_a_huge_line() -> None:
    assert max(len(line) for line in trace_lines("x" * 1_000_000 + "\ny")) == MAX_LINE_CHARS


def test_runtime_is_recognised_from_frame_syntax() -> None:
    assert detect_runtime(["\tat com.acme.A.b(A.java:3)"]) == "java"
    assert detect_runtime(["    at handler (/app/x.js:1:2)"]) == "node"
    assert detect_runtime(["   at Shop.A.B(Int32 id) in /src/A.cs:line 3"]) == "dotnet"
    assert detect_runtime(["\t/home/x/main.go:12 +0x1d"]) == "go"
    assert detect_runtime(["/app/x.rb:3:in `y'"]) == "ruby"
    assert detect_runtime(['Called from Shop.f in file "a.ml", line 1, characters 0-1']) == "ocaml"
    assert detect_runtime(["#0      Cart.total (package:shop/cart.dart:42:7)"]) == "dart"
    assert (
        detect_runtime([" 1: 0xb8d11b node::OOMErrorHandler(char const*) [node]"]) == "node"
    )  # a fatal error


def _runtime_by_every_vote(lines: list[str]) -> str | None:
    """`detect_runtime` as it read a trace before a decisive lead ended the count: every line of the first
    60 (then of the rest) voted, the most votes won, the first to reach the count among equals."""

    def counted(part: list[str]) -> str | None:
        if any(stacktrace.python.HEADER in line or stacktrace.python.looks_like_frame(line) for line in part):
            return "python"
        votes: dict[str, int] = {}
        for line in part:
            runtime = stacktrace.runtime_of_line(line)
            if runtime is not None:
                votes[runtime] = votes.get(runtime, 0) + 1
        return max(votes, key=lambda r: votes[r]) if votes else None

    return counted(lines[:60]) or (counted(lines[60:]) if len(lines) > 60 else None)


def test_a_runtime_decided_by_a_lead_the_rest_cannot_make_up_is_the_one_every_vote_gives() -> None:
    """Traces of a few runtimes' frame lines and other lines mixed in any proportion and order, ties
    included, and longer than the first 60 lines read: the runtime is the one counting every line gave."""
    pool = [
        "\tat com.acme.A.b(A.java:3)",
        "    at handler (/app/x.js:1:2)",
        "   at Shop.A.B(Int32 id) in /src/A.cs:line 3",
        "\t/home/x/main.go:12 +0x1d",
        "/app/x.rb:3:in `y'",
        "fn@https://app.example.com/app.js:3:1",
        "java.lang.IllegalStateException: closed",
        "a message line",
        "",
    ]
    rng = random.Random(26)
    for _ in range(3_000):
        kinds = rng.sample(pool, rng.randint(1, 4))
        lines = [rng.choice(kinds) for _ in range(rng.choice((1, 2, 3, 5, 8, 13, 59, 60, 61, 90, 130)))]
        assert detect_runtime(lines) == _runtime_by_every_vote(lines), lines
    tie = ["/app/x.rb:3:in `y'", "\tat com.acme.A.b(A.java:3)"] * 3
    assert detect_runtime(tie) == _runtime_by_every_vote(tie) == "ruby"


def _runtime_of_line_by_its_patterns(line: str) -> str | None:
    """`runtime_of_line` as it read a line before its patterns were guarded by the substrings they need."""
    stripped = line.lstrip()
    if stripped.startswith("at "):
        return stacktrace.runtime_of_line(line)  # (this branch is unchanged)
    if stripped.startswith("goroutine ") or stacktrace._GO_FILE.match(line):
        return "go"
    if stacktrace._RUBY_FRAME.search(line):
        return "ruby"
    if stacktrace._OCAML_FRAME.match(line):
        return "ocaml"
    if stripped.startswith("thread '") and rust.looks_like_rust_line(line):
        return "rust"
    if stripped.startswith(("#", "PHP ")) and php.looks_like_php_line(line):
        return "php"
    if any(marker in line for marker in stacktrace._ELIXIR_FILES) and elixir.looks_like_elixir_frame(line):
        return "elixir"
    if browser.looks_like_frame(line):
        return "node"
    if native.looks_like_frame(line):
        return "native"
    if dart.looks_like_frame(line):
        return "dart"
    if node_fatal.is_fatal_frame(line):
        return "node"
    return None


def test_a_lines_runtime_is_read_alike_with_its_patterns_guarded_by_the_substrings_they_need() -> None:
    """Every line of the golden traces, and lines built around each guarded pattern's substrings (white
    space of every kind in front, the markers moved, cut short and put in a message), give the runtime the
    unguarded patterns give."""
    lines = [line for path in sorted(TRACES.glob("*.txt")) for line in trace_lines(path.read_text())]
    samples = [
        "\t/home/x/main.go:12 +0x1d",
        "/app/x.rb:3:in `y'",
        "  from /app/x.rb:3:in 'y'",
        'Called from Shop.f in file "a.ml", line 1, characters 0-1',
        'Raised at Stdlib.failwith in file "stdlib.ml", line 29, characters 17-33',
        'Re-raised at Shop.g in file "b.ml", line 2, characters 1-2',
        'Raised by primitive operation at Shop.h in file "c.ml", line 3, characters 4-5',
        "    (shop 0.1.0) lib/shop/cart.ex:12: Shop.Cart.add/2",
        "    (stdlib 5.0) gen_server.erl:1123: :gen_server.try_dispatch/4",
        "    lib/shop.exs:3: (file)",
        "handle@https://app.example.com/assets/index-DiwrgTda.js:1:2345",
        "async*t/<@https://app.example.com/a.js:1:9",
        "forEach@[native code]",
        "global code@https://app.example.com/a.js:3:1",
        "#0      Cart.total (package:shop/cart.dart:42:7)",
        "package:shop/cart.dart 42:7  Cart.total",
        " 1: 0xb8d11b node::OOMErrorHandler(char const*) [node]",
        "10: 00007FF61B946F4D node::OnFatalError+301",
    ]
    rng = random.Random(26)
    spaces = [" ", "\t", "\u00a0", "\u2003", "\u3000", "\x1f", ""]
    for _ in range(3000):
        line = rng.choice(samples + lines)
        if rng.random() < 0.5:
            line = "".join(rng.choice(spaces) for _ in range(rng.randrange(3))) + line.lstrip()
        if rng.random() < 0.3:
            line = line[: rng.randrange(len(line) + 1)]
        if rng.random() < 0.3:
            line = rng.choice(("ValueError: ", "panic: ", "Error: ", "java.lang.X: ")) + line
        lines.append(line)
    assert len(lines) > 3000
    for line in lines:
        assert stacktrace.runtime_of_line(line) == _runtime_of_line_by_its_patterns(line), line


def _go_panic(address: int, goroutine: int) -> str:
    return (
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]\n\n"
        f"goroutine {goroutine} [running]:\n"
        f"github.com/acme/shop/orders.process(0x{address:x})\n"
        "\t/home/dev/shop/orders/process.go:42 +0x1d\n"
        f"github.com/acme/shop/orders.worker(0x{address + 64:x}?)\n"
        "\t/home/dev/shop/orders/worker.go:17 +0x5a\n"
        "created by github.com/acme/shop/orders.Start in goroutine 1\n"
        "\t/home/dev/shop/orders/worker.go:9 +0x88\n"
    )


def _signatures_of(dumps: list[str], error_type: str, message: str) -> int:
    """How many signatures one batch makes of occurrences of one error, each with its own dump."""
    events = [
        ErrorEvent(
            event_id=f"{n:032x}",
            timestamp=datetime(2026, 11, 26, tzinfo=UTC),
            service="orders",
            kind="exception",
            error_type=error_type,
            message=message,
            stacktrace=dump,
        )
        for n, dump in enumerate(dumps)
    ]
    return len({a.signature_id for a in GroupingEngine().assign_all(events)})


def test_go_panics_passing_other_addresses_to_a_one_argument_call_are_one_problem() -> None:
    dumps = [_go_panic(0xC000012000 + n * 4096, 30 + n) for n in range(6)]
    message = "runtime error: invalid memory address or nil pointer dereference"
    assert _signatures_of(dumps, "panic", message) == 1
    frames = parse_stacktrace(dumps[0]).exceptions[0].frames  # type: ignore[union-attr]
    assert [frame.function for frame in frames] == ["process", "worker", "created by Start"]


def _go_throw(n: int) -> str:
    """A runtime throw as Go prints it: g and m in the header, each frame's pointers after its file line."""
    return (
        "fatal error: concurrent map writes\n\n"
        f"goroutine {n} gp=0xc0000{n:05x} m={n % 3} mp=0xc0000{n:05x}08 [running]:\n"
        "internal/runtime/maps.fatal({0x4b2e80?, 0x52c1a0?})\n"
        "\t/usr/local/go/src/runtime/panic.go:1058 +0x18"
        f" fp=0xc0000{n:05x}f38 sp=0xc0000{n:05x}e88 pc=0x46b7f2\n"
        "main.store(...)\n"
        "\t/app/main.go:12\n"
        f"main.worker(0xc0000{n:05x}00)\n"
        f"\t/app/main.go:7 +0x25 fp=0xc000{n:06x}f50 sp=0xc000{n:06x}f38\n"
        "created by main.main in goroutine 1\n"
        f"\t/app/main.go:20 +0x28b fp=0xc000{n:06x}fe0 sp=0xc000{n:06x}f50 pc=0x43e02b\n\n"
        "goroutine 1 gp=0xc000002380 m=nil [semacquire]:\n"
        "main.main()\n"
        "\t/app/main.go:22 +0x2b\n"
    )


def test_a_go_runtime_throw_is_read_with_its_frames_whatever_its_g_m_and_frame_pointers() -> None:
    trace = parse_stacktrace(_go_throw(3))
    assert trace is not None and trace.runtime == "go"
    crashed, other = trace.exceptions
    assert [(f.function, f.filename, f.lineno) for f in crashed.frames] == [
        ("fatal", "/usr/local/go/src/runtime/panic.go", 1058),
        ("store", "/app/main.go", 12),
        ("worker", "/app/main.go", 7),
        ("created by main", "/app/main.go", 20),
    ]
    assert [f.function for f in other.frames] == ["main"]
    dumps = [_go_throw(n) for n in range(1, 6)]
    assert _signatures_of(dumps, "fatal error", "concurrent map writes") == 1


def test_the_java_frame_line_test_answers_as_the_frame_reader_without_its_memo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`java.is_frame_line` (what the agreement check of a cut trace asks of each occurrence's message line)
    answers as reading the line's frame does, on every line of the golden traces and on lines built around
    the frame pattern, and never goes through the memo of frames read (a one-off line would push out the
    lines that recur)."""
    from rounds_bot.grouping.stacktrace import java

    lines = [line for case in CASES for line in trace_lines((TRACES / f"{case}.txt").read_text())]
    lines += [
        "\tat com.acme.Cart.total(Cart.java:42)",
        "at com.acme.Cart.total(Cart.java)",
        "\tat app//com.acme.Cart.total(Cart.java:42) ~[app.jar:1.0]",
        "\t... 12 more",
        "\t... 3 common frames omitted",
        "java.lang.IllegalStateException: at com.acme.Cart.total(Cart.java:42)",
        "java.lang.IllegalStateException: cart 12 is empty",
        "at (Cart.java:42)",
    ]
    expected = [java._frame_of(line) is not None or java._MORE.match(line) is not None for line in lines]
    assert any(expected) and not all(expected)

    def no_memo(line: str) -> None:
        raise AssertionError(f"the memo of frames read was asked about {line!r}")

    monkeypatch.setattr(java, "_frame_of", no_memo)
    assert [java.is_frame_line(line) for line in lines] == expected
