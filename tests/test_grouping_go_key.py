"""Go dumps that differ only in the values a dump prints per occurrence share a key (`go_key`), and texts
that share a key read alike: on the golden and synthetic dumps with their values changed, and on texts
built to trip each step of the reasoning (symbols and paths that look like values, headers and calls
that other runtimes' line tests or the Go parser could read otherwise)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.grouping.stacktrace.go_key import dump_key
from rounds_bot.grouping.stacktrace.model import MAX_LINE_CHARS, MAX_TRACE_CHARS

TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"
GOLDEN_DUMPS = [TRACES / "go_panic.txt", TRACES / "go_deadlock.txt"]

DUMP = (
    "panic: cart is empty\n\n"
    "goroutine {g1} [{wait}]:\n"
    "github.com/acme/shop/cart.(*Cart).Total({args1})\n"
    "\t/home/dev/shop/cart/cart.go:41 +0x1d\n"
    "main.handle({args2})\n"
    "\t/home/dev/shop/main.go:12 +0x2a\n"
    "created by main.serve in goroutine {g2}\n"
    "\t/home/dev/shop/main.go:9 +0x65\n"
)


def dump(
    g1: str = "7", wait: str = "running", args1: str = "0xc000010000", args2: str = "0x1, 0x2", g2: str = "1"
) -> str:
    return DUMP.format(g1=g1, wait=wait, args1=args1, args2=args2, g2=g2)


def test_dumps_that_differ_in_goroutines_waits_and_pointers_share_a_key() -> None:
    one = dump()
    other = dump(g1="90210", wait="chan receive, 5 minutes", args1="0xc0ffee0000, {0x0, 0x0}", g2="31")
    assert dump_key(one) == dump_key(other) is not None
    assert parse_stacktrace(one) == parse_stacktrace(other)


@pytest.mark.parametrize(
    ("changed", "shared"),
    [
        ({"args2": "0x1, 0x3"}, True),  # Go's arguments with a space are never read as part of the symbol
        ({"args2": "0x1"}, False),  # a lone argument after no receiver is read as part of the function's name
        ({"args2": "{0x1}"}, False),
        ({"args1": "0xc0(00)"}, False),  # not Go's arguments: the line is kept whole
        ({"wait": 'x"y'}, False),
        ({"g1": "\u0663"}, False),  # a digit that is no ASCII digit
    ],
)
def test_only_the_values_the_parser_drops_are_taken_out(changed: dict[str, str], shared: bool) -> None:
    one, other = dump(), dump(**changed)
    assert (dump_key(one) == dump_key(other)) is shared
    if shared:
        assert parse_stacktrace(one) == parse_stacktrace(other)


def test_a_lone_argument_after_no_receiver_stays_in_the_key_and_leaves_the_frame() -> None:
    # the key keeps such a line whole; the parser reads a lone argument as the call's, and notes the name
    # releases before read (an address aside) for `as_read_before`: two such dumps do not read alike
    one, other = dump(args2="0xc000010000"), dump(args2="0xc000020000?")
    assert dump_key(one) != dump_key(other)
    frames = [parse_stacktrace(text).exceptions[0].frames[1].function for text in (one, other)]  # type: ignore[union-attr]
    assert frames == ["handle", "handle"]
    for kept in ("0x1", "...", "0x7f1e40"):  # constants, an inlined call, a type's address: kept before
        assert dump_key(dump(args2=kept)) != dump_key(one)
        trace = parse_stacktrace(dump(args2=kept))
        assert trace is not None and trace.exceptions[0].frames[1].function == "handle"
        before = as_read_before(trace)
        assert before is not None and before.exceptions[0].frames[1].function == f"handle({kept})"


@pytest.mark.parametrize(
    "text",
    [
        "ValueError: no dump here",
        dump().replace("\n", "\r\n"),
        dump().replace("\n", "\u2028", 1),
        dump() + "x" * MAX_TRACE_CHARS,
    ],
)
def test_a_text_that_cannot_be_keyed_has_no_key(text: str) -> None:
    assert dump_key(text) is None


def test_a_text_that_breaks_a_line_at_any_character_but_a_newline_has_no_key() -> None:
    breaks = [chr(c) for c in range(0x110000) if c != 0x0A and len(f"a{chr(c)}b".splitlines()) == 2]
    assert dump_key(dump()) is not None
    for brk in breaks:
        assert dump_key(dump().replace("\n", brk + "\n", 1)) is None, repr(brk)
        assert dump_key(dump() + brk) is None, repr(brk)


def test_a_line_too_long_to_be_read_whole_is_kept_as_printed() -> None:
    symbol = "main." + "x" * MAX_LINE_CHARS
    one, other = dump().replace("main.handle", symbol), dump(args2="0x1, 0x3").replace("main.handle", symbol)
    assert dump_key(one) != dump_key(other)


def _revalued(text: str, rng: random.Random) -> str:
    """The text with the values a dump prints per occurrence drawn again."""
    text = re.sub(
        r"(?m)^goroutine \d+ \[[^\]]*\]:$",
        lambda _: f"goroutine {rng.randint(1, 10**6)} [select, {rng.randint(1, 9)} minutes]:",
        text,
    )
    text = re.sub(r"(?m) in goroutine \d+$", lambda _: f" in goroutine {rng.randint(1, 10**6)}", text)

    def arguments(match: re.Match[str]) -> str:
        if "(" not in match[1] and ", " not in match[2]:
            return match[0]  # a lone argument: part of the function's name, as the parser reads it
        count = rng.randint(0 if "(" in match[1] else 2, 3)
        return match[1] + "(" + ", ".join(f"0x{rng.getrandbits(40):x}" for _ in range(count)) + ")"

    return re.sub(r"(?m)^(\w\S*?)\(([^()\n]*)\)$", arguments, text)


def _dumps() -> list[str]:
    texts = [path.read_text(encoding="utf-8") for path in GOLDEN_DUMPS]
    scale_data = pytest.importorskip("bench.scale_data")
    rng = random.Random(11)
    for number in range(3, 400, 4):  # the Go service's bugs
        bug = scale_data.bug(number)
        assert bug.runtime == "go"
        texts.append(scale_data.stack_trace(bug, rng, scale_data.message(bug, rng)))
    return texts


def test_the_golden_and_synthetic_dumps_keep_their_key_and_reading_when_their_values_change() -> None:
    rng = random.Random(7)
    for text in _dumps():
        for _ in range(3):
            other = _revalued(text, rng) if rng.random() < 0.5 else text
            other = re.sub(r"goroutine \d+", lambda _: f"goroutine {rng.randint(1, 99)}", other)
            assert dump_key(other) == dump_key(text) is not None
            assert parse_stacktrace(other) == parse_stacktrace(text)


# Texts built from lines of each form, with the parts a key keeps drawn once and the values it takes
# out drawn twice: whenever the two texts share a key, they must read alike.
_TRICKY = [*"aAx0f9_./*()[]{}?,:'\"#$ \t", "at ", "goroutine ", "created by ", "panic: ", " in goroutine 3"]
_pieces = st.lists(st.sampled_from(_TRICKY), max_size=6).map("".join)
_symbols = st.one_of(
    st.sampled_from(
        ["main.main", "panic", "net/http.(*conn).serve.func1", "pkg.(*T[...]).m", "at", "goroutine"]
    ),
    _pieces,
    st.builds(
        lambda a, b: a + b, st.sampled_from(["main.", "x", "Raised", "File", "_", "pkg.(*T)"]), _pieces
    ),
)
_arguments = st.one_of(
    st.sampled_from(
        ["", "...", "0x1", "0xc000010000, 0x2", "{0x6e0c20?, 0xc000124018?}", "0x0?", "0x1 " * 30]
    ),
    st.lists(st.sampled_from([*"0x1fc{}., ?()\":'ab", "0x", ", "]), max_size=8).map("".join),
)
_numbers = st.one_of(st.integers(0, 10**9).map(str), st.sampled_from(["", "\u0663", "1 2", "x", "9" * 21]))
_waits = st.one_of(
    st.sampled_from(["running", "chan receive, 5 minutes", "x]y", 'a"b', "c:d", "w" * 129]), _pieces
)
#: the file line under a call
_FILE = "\n\t/app/shop/cart.go:41 +0x1d"
_OTHER_LINES = [
    "panic: boom",
    "\t/app/x.go:12 +0x1d",
    "\t/app/x.s:3",
    '  File "/app/x.py", line 3, in f',
    "Traceback (most recent call last):",
    "\tat com.acme.Cart.total(Cart.java:42)",
    "    at handler (/app/x.js:1:2)",
    "[signal SIGSEGV: segmentation violation]",
    "",
]


def _pairs(values: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    """Two values: drawn apart, or the second the first with its hex digits drawn again."""

    def redrawn(value: str, seed: int) -> str:
        rng = random.Random(seed)
        return re.sub(r"[0-9a-f]", lambda _: rng.choice("0123456789abcdef"), value)

    return st.one_of(
        st.tuples(values, values),
        st.tuples(values, st.integers()).map(lambda pair: (pair[0], redrawn(*pair))),
    )


#: a line: its form, the part a key keeps, and two values of the part it may take out
_lines = st.one_of(
    st.tuples(st.just("goroutine {value} [running]:"), st.just(""), _pairs(_numbers)),
    st.tuples(st.just("goroutine 5 [{value}]:"), st.just(""), _pairs(_waits)),
    st.tuples(st.sampled_from(["{kept}({value})", "{kept}({value})" + _FILE]), _symbols, _pairs(_arguments)),
    st.tuples(
        st.sampled_from(
            ["created by {kept} in goroutine {value}" + _FILE, "created by {kept} in goroutine {value}"]
        ),
        _symbols,
        _pairs(_numbers),
    ),
    st.tuples(st.just("{kept}"), st.sampled_from(_OTHER_LINES), st.just(("", ""))),
)


def _text(lines: list[tuple[str, str, tuple[str, str]]], second: list[bool]) -> str:
    return "\n".join(
        form.format(kept=kept, value=values[swap])
        for (form, kept, values), swap in zip(lines, second, strict=True)
    )


@settings(max_examples=500, deadline=None)
@given(
    lines=st.lists(_lines, min_size=1, max_size=10), swaps=st.lists(st.booleans(), min_size=10, max_size=10)
)
@example(
    lines=[("{kept}", "panic: x", ("", "")), ("{kept}({value})", "main.f", ("0x1, 0x2", "0x3, 0x4"))],
    swaps=[True] * 10,
)
@example(  # read as Python: the key is shared, the reading is not, and the memo never keeps it
    lines=[
        ("goroutine {value} [running]:", "", ("0", "0")),
        ("{kept}", "Traceback (most recent call last):", ("", "")),
        ("{kept}", "panic: boom", ("", "")),
        ("goroutine {value} [running]:", "", ("0", "1")),
    ],
    swaps=[False, False, False, True, False, False, False, False, False, False],
)
def test_texts_that_share_a_key_read_alike(
    lines: list[tuple[str, str, tuple[str, str]]], swaps: list[bool]
) -> None:
    one = "goroutine 1 [running]:\n" + _text(lines, [False] * len(lines))
    other = "goroutine 2 [running]:\n" + _text(lines, swaps[: len(lines)])
    if dump_key(one) == dump_key(other):
        readings = parse_stacktrace(one), parse_stacktrace(other)
        # the memo keeps a reading under its key only when it is Go's (`trace_memo`): a text another
        # runtime reads (a Python traceback that prints goroutine headers in its message) is parsed whole
        if any(reading is not None and reading.runtime == "go" for reading in readings):
            assert readings[0] == readings[1]
