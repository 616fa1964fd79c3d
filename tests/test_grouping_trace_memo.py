"""Each distinct trace is parsed once: what the shape memo may reuse, and what it never conflates."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.grouping import trace_memo
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.trace_memo import TraceMemo
from tests.test_grouping_corpus import corpus_events

TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"

JAVA = (
    "java.lang.IllegalStateException: cart {value} is empty\n"
    "\tat com.acme.shop.Cart{inner}.total(Cart.java:{line})\n"
    "\tat com.acme.shop.Api.post(Api.java:3)\n"
    "Caused by: java.io.IOException: disk {cause} full\n"
    "\tat com.acme.shop.Store.write(Store.java:7)\n"
)
PYTHON = (
    "Traceback (most recent call last):\n"
    '  File "/app/shop/cart.py", line 10, in total\n'
    "    return items[{index}]\n"
    "IndexError: list index {value} out of range\n"
)


def java(value: str = "7", inner: str = "", line: str = "42", cause: str = "1") -> str:
    return JAVA.format(value=value, inner=inner, line=line, cause=cause)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the memo really parsed."""
    seen: list[str] = []
    parse = trace_memo._parse

    def counting(text: str) -> trace_memo.ParsedText | None:
        seen.append(text)
        return parse(text)

    monkeypatch.setattr(trace_memo, "_parse", counting)
    return seen


def test_texts_that_differ_only_in_message_values_are_parsed_once(parses: list[str]) -> None:
    memo = TraceMemo()
    first = memo.parsed(java(value="7", cause="1"))
    again = memo.parsed(java(value="9", cause="5"))  # one shape: as many digits in the same places
    assert first is again and len(parses) == 1
    assert first is not None and first.values == ["cart <int> is empty", "disk <int> full"]


def test_a_digit_in_a_frame_is_never_taken_for_a_value(parses: list[str]) -> None:
    memo = TraceMemo()
    one, two = memo.parsed(java(inner="$1")), memo.parsed(java(inner="$2"))
    assert one is not None and two is not None and len(parses) == 2
    assert one.trace.exceptions[0].frames[0].module == "com.acme.shop.Cart$1"
    assert two.trace.exceptions[0].frames[0].module == "com.acme.shop.Cart$2"


def test_line_numbers_are_kept_as_printed(parses: list[str]) -> None:
    memo = TraceMemo()
    one, two = memo.parsed(java(line="42")), memo.parsed(java(line="43"))
    assert one is not None and two is not None
    assert [one.trace.exceptions[0].frames[0].lineno, two.trace.exceptions[0].frames[0].lineno] == [42, 43]


def test_a_value_whose_normal_form_keeps_a_digit_is_parsed_again(parses: list[str]) -> None:
    memo = TraceMemo()
    one, two = memo.parsed(java(value="utf8x1")), memo.parsed(java(value="utf8x2"))
    assert one is not None and two is not None and one.values != two.values
    assert len(parses) == 2


def test_a_value_that_keeps_a_digit_is_never_read_from_another_text_of_its_shape(parses: list[str]) -> None:
    memo = TraceMemo()
    one = memo.parsed(java(value="codec101 read 7 rows"))
    two = memo.parsed(java(value="codec101 read 9 rows"))
    other = memo.parsed(java(value="codec201 read 9 rows"))
    assert one is two and one is not None and one.values[0] == "cart codec101 read <int> rows is empty"
    assert other is not None and other.values[0] == "cart codec201 read <int> rows is empty"
    assert len(parses) == 3  # (the first two share one reading: the same trace and values)


def test_a_value_normalised_alone_is_not_taken_from_its_line_normalised(parses: list[str]) -> None:
    """`'k1'` alone keeps its digit; in a longer line it is a quoted string, masked."""
    text = "Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in f\nKeyError: 'k{n}'\n"
    memo = TraceMemo()
    one, two = memo.parsed(text.format(n=1)), memo.parsed(text.format(n=2))
    assert one is not None and two is not None and (one.values, two.values) == (["'k1'"], ["'k2'"])


def test_python_source_lines_are_frame_lines(parses: list[str]) -> None:
    memo = TraceMemo()
    one = memo.parsed(PYTHON.format(index=0, value=3))
    two = memo.parsed(PYTHON.format(index=1, value=4))
    assert one is not None and two is not None
    assert one.trace.exceptions[0].frames[0].context_line == "return items[0]"
    assert two.trace.exceptions[0].frames[0].context_line == "return items[1]"
    assert memo.parsed(PYTHON.format(index=0, value=9)) is one


@pytest.mark.parametrize("text", [java(), java(inner="$9", line="1"), PYTHON.format(index=2, value=5)])
def test_a_memoised_parse_is_the_parse(text: str) -> None:
    memo = TraceMemo()
    memo.parsed(text)
    found = memo.parsed(text)
    assert found is not None and found.trace == parse_stacktrace(text)


def test_text_that_is_no_trace_is_remembered_as_none(parses: list[str]) -> None:
    memo = TraceMemo()
    assert memo.parsed("not a trace") is None and memo.parsed("not a trace") is None
    assert len(parses) == 1


GO = (
    "panic: cart {value} is empty\n\n"
    "goroutine {goroutine} [running]:\n"
    "main.total(0x{pointer}, 0x1)\n"
    "\t/go/src/shop/cart.go:{line} +0x1f\n"
    "main.main()\n"
    "\t/go/src/shop/main.go:9 +0x2a\n"
)


def test_texts_that_read_as_one_trace_share_one_parse(parses: list[str]) -> None:
    memo = TraceMemo()
    one = memo.parsed(GO.format(value="7", goroutine="1", pointer="c000ab12", line="42"))
    two = memo.parsed(GO.format(value="8", goroutine="77", pointer="c000fe99", line="42"))
    assert len(parses) == 2  # the pointers differ in letters: two shapes, each parsed
    assert one is two and one is not None and one.values == ["cart <int> is empty"]
    quoted = memo.parsed(java(value="'abc'")), memo.parsed(java(value="'xyz'"))
    assert quoted[0] is quoted[1] and len(parses) == 4


def test_texts_whose_frames_or_values_differ_never_share_a_parse(parses: list[str]) -> None:
    memo = TraceMemo()
    one = memo.parsed(GO.format(value="7", goroutine="1", pointer="c000ab12", line="42"))
    other_line = memo.parsed(GO.format(value="7", goroutine="1", pointer="c000ab13", line="43"))
    other_value = memo.parsed(GO.format(value="a", goroutine="1", pointer="c000ab14", line="42"))
    assert one is not None and other_line is not None and other_value is not None
    assert one is not other_line and one is not other_value
    assert other_line.trace.exceptions[0].frames[0].lineno == 43 and other_value.values == ["cart a is empty"]


def _content(parsed: trace_memo.ParsedText | None) -> object:
    """What grouping reads of a parsed trace (see `trace_memo`)."""
    if parsed is None:
        return None
    trace = parsed.trace
    return (
        trace.runtime,
        trace.notes,
        [(e.type, e.relation, e.frames) for e in trace.exceptions],
        parsed.values,
    )


def _whole(text: str) -> object:
    trace = parse_stacktrace(text)
    values = [normalize_uncached(e.value) for e in trace.exceptions] if trace is not None else []
    return _content(trace_memo.ParsedText("", trace, values) if trace is not None else None)


DUMP = (
    "panic: cart {value} is empty\n\n"
    "goroutine {goroutine} [chan receive, {minutes} minutes]:\n"
    "main.(*Cart).total(0x{pointer})\n"
    "\t/go/src/shop/cart.go:42 +0x1f\n"
    "main.main({{0x{pointer}, 0x0}}, 0x1)\n"
    "\t/go/src/shop/main.go:9 +0x2a\n"
    "created by main.serve in goroutine {goroutine}\n"
    "\t/go/src/shop/serve.go:3 +0x11\n"
)


def dump(value: str, seed: int) -> str:
    rng = random.Random(seed)
    return DUMP.format(
        value=value,
        goroutine=rng.randint(1, 10**6),
        minutes=rng.randint(1, 9),
        pointer=f"c{rng.getrandbits(36):09x}",
    )


def test_go_dumps_of_one_crash_are_parsed_once_whatever_their_goroutines_and_pointers(
    parses: list[str],
) -> None:
    memo = TraceMemo()
    readings = [memo.parsed(dump("7", seed)) for seed in range(20)]
    assert len(parses) == 1 and memo.parses == 1
    for seed, reading in enumerate(readings):
        assert reading is not None and reading.trace == parse_stacktrace(dump("7", seed))


def test_go_dumps_with_their_message_cut_out_are_read_once_for_all_messages() -> None:
    memo = TraceMemo()
    for seed in range(20):
        text, message = dump(str(seed), seed), f"cart {seed} is empty"
        reading = memo.parsed(text, message)
        assert reading is not None and _content(reading) == _whole(text)
        assert reading.trace.exceptions[0].value.startswith("cart ")
    assert memo.parses == 1 and memo.from_cuts == 20


def test_a_dump_read_as_another_runtime_is_never_shared_by_its_key() -> None:
    java = "".join(
        f"\tat com.acme.Cart.step{n}(Cart.java:{n})\n" for n in range(6)
    )  # outvotes the dump's lines
    memo = TraceMemo()
    texts = [f"java.lang.IllegalStateException: boom\n{java}" + dump("7", seed) for seed in range(3)]
    for text in texts:
        reading = memo.parsed(text)
        assert (
            reading is not None
            and reading.trace.runtime == "java"
            and reading.trace == parse_stacktrace(text)
        )
    assert memo.parses == 3


def _traces_of_every_corpus(shared_data: Path) -> list[tuple[str, str | None]]:
    """(trace, message) of the golden traces, the grouping corpus, the scale run's synthetic traces and the
    labelled Defects4J traces."""
    found: list[tuple[str, str | None]] = [
        (p.read_text(encoding="utf-8"), None) for p in sorted(TRACES.glob("*.txt"))
    ]
    found += [(e.stacktrace, e.message) for e in corpus_events() if e.stacktrace]
    scale_data = pytest.importorskip("bench.scale_data")
    rng = random.Random(3)
    for number in range(0, 600):
        bug = scale_data.bug(number)
        message = scale_data.message(bug, rng)
        found.append((scale_data.stack_trace(bug, rng, message), message))
    path = shared_data / "defects4j_traces" / "traces.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return found + [(row["trace"], row["message"] or None) for row in rows]


def test_every_corpus_trace_reads_through_the_memo_as_parsed_whole(shared_data: Path) -> None:
    memo = TraceMemo()
    traces = _traces_of_every_corpus(shared_data)
    assert sum("goroutine " in text for text, _ in traces) > 100
    for _ in range(2):  # the second time round, readings come from the memos
        for text, message in traces:
            assert _content(memo.parsed(text, message)) == _whole(text)
            assert _content(memo.parsed(text)) == _whole(text)


@settings(max_examples=200, deadline=None)
@given(
    message=st.text(
        alphabet=st.sampled_from(list("aAt :.()[]{}|\"'`$#/\\-0123456789\t\n~^+@=x")), max_size=40
    )
    | st.sampled_from(
        ["goroutine 7 [running]:", "main.f(0xc000010000, 0x1)", "created by main.f in goroutine 3"]
    ),
    seeds=st.tuples(st.integers(0, 2**32), st.integers(0, 2**32)),
)
def test_a_dump_read_after_another_of_its_key_reads_as_its_whole_text(
    message: str, seeds: tuple[int, int]
) -> None:
    memo = TraceMemo()
    memo.parsed(dump("17", seeds[0]), "cart 17 is empty")
    text = DUMP.replace("cart {value} is empty", "{value}").format(
        value=message, goroutine=seeds[1] % 1000, minutes=3, pointer=f"c{seeds[1]:09x}"
    )
    assert _content(memo.parsed(text, message)) == _whole(text)
    assert _content(memo.parsed(text)) == _whole(text)
