"""A trace read with its message cut out (`trace_cut`) reads exactly as the whole text does: on the labelled
traces, the golden traces, the scale run's synthetic traces and messages built to trip every line test."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.components import render
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.grouping.trace_cut import PLACEHOLDER, cut
from rounds_bot.grouping.trace_memo import TraceMemo, grouped_trace
from rounds_bot.models import ErrorEvent

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"

TEMPLATES = {
    "python": (
        "Traceback (most recent call last):\n"
        '  File "/app/shop/cart.py", line 10, in total\n'
        "    return items[index]\n"
        '  File "/usr/lib/python3.12/json/decoder.py", line 3, in decode\n'
        "ValueError: {message}\n"
    ),
    "python_chained": (
        "Traceback (most recent call last):\n"
        '  File "/app/shop/db.py", line 4, in read\n'
        "KeyError: 'cart'\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/app/shop/cart.py", line 10, in total\n'
        "shop.errors.CartError: {message}"
    ),
    "java": (
        "java.lang.IllegalStateException: {message}\n"
        "\tat com.acme.shop.Cart.total(Cart.java:42)\n"
        "\tat com.acme.shop.Api.post(Api.java:3)\n"
        "Caused by: java.io.IOException: disk full\n"
        "\tat com.acme.shop.Store.write(Store.java:7)\n"
        "\t... 2 more"
    ),
    "java_thread": (
        'Exception in thread "main" java.lang.RuntimeException: {message}\n'
        "\tat com.acme.Main.main(Main.java:5)"
    ),
    "java_cause": (
        "java.lang.RuntimeException: wrapped\n"
        "\tat com.acme.Main.main(Main.java:5)\n"
        "Caused by: java.io.IOException: {message}\n"
        "\tat com.acme.Store.write(Store.java:7)"
    ),
    "node": (
        "TypeError: {message}\n"
        "    at Object.handler (/app/src/orders.js:10:15)\n"
        "    at async Promise.all (index 0)\n"
        "    at processTicksAndRejections (node:internal/process/task_queues:95:5)"
    ),
    "go": (
        "panic: {message}\n\n"
        "goroutine 7 [running]:\n"
        "main.(*Server).handle(0xc000010000, {{0x0, 0x0}})\n"
        "\t/home/dev/shop/server.go:42 +0x1d\n"
        "created by main.(*Server).Serve in goroutine 1\n"
        "\t/home/dev/shop/server.go:20 +0x65"
    ),
}

#: messages that look like (parts of) the lines parsers test for
TRICKY = [
    "cart 17 is empty",
    "invalid item 'order' in cart 4309829",
    "cannot charge card: ledger limit 812 exceeded (requested 1234)",
    "Caused by: java.io.IOException: disk full",
    "at com.acme.Cart.total(Cart.java:42)",
    "at handler (/app/src/x.js:1:2)",
    "at /app/src/x.js:1:2",
    "goroutine 1 [running]",
    "boom [recovered]",
    "report 7 is in state quote token=[REDACTED:github_token]",
    "[REDACTED:email]",
    "at com.acme.Cart.total(Cart.java:42) ~[app.jar:1.0]",
    "at TCPConnectWrap.afterConnect [as oncomplete]",
    "[cause]: Error: connect ECONNREFUSED [x]",
    "[Previous line repeated 996 more times]",
    "goroutine 1 [running]:]",
    "boom [recovered] [recovered]",
    "boom [recovered]x",
    "boom[recovered]",
    "[signal SIGSEGV: segmentation violation",
    "[signal SIGSEGV: segmentation violation]",
    "Traceback (most recent call last):",
    'File "/app/x.py", line 3, in f',
    "/app/lib/cart.rb:12:in `total'",
    "lib/cart.ex:12: Cart.total/1",
    'Raised at Stdlib.failwith in file "stdlib.ml", line 29',
    "thread 'main' panicked at src/main.rs:2:5",
    "#0 /app/src/Cart.php(12): total()",
    "main.handle(0xc000010000)",
    "\t/home/dev/shop/server.go:42 +0x1d",
    "x {",
    "a | b",
    '" java.lang.Error: quoted',
    "... 3 more",
    "  padded  ",
    "two\nlines",
    "carriage\rreturn",
    "ends with colon:",
    "ValueError: nested",
    PLACEHOLDER,
    "",
]


def _messages_of(text: str) -> list[str]:
    """Every value a parser reads from the text, and every rest of a line after `: `: the places a
    runtime prints a message."""
    found: list[str] = []
    trace = parse_stacktrace(text)
    if trace is not None:
        found += [e.value for e in trace.exceptions if e.value]
    for line in text.splitlines():
        if ": " in line:
            found.append(line.split(": ", 1)[1])
            found.append(line.rsplit(": ", 1)[1])
    return list(dict.fromkeys(found))


def _assert_reads_alike(text: str, message: str) -> bool:
    """The memo's reading of `text` given `message` is the whole text's (as grouping reads it: a traceback cut
    short is none, `grouped_trace`); True when it was cut."""
    whole = grouped_trace(text)
    memo = TraceMemo()
    found = memo.parsed(text, message)
    if whole is None:
        assert found is None
    else:
        assert found is not None
        assert found.trace == whole
        assert found.values == [normalize_uncached(e.value) for e in whole.exceptions]
    return memo.from_cuts > 0


@pytest.mark.parametrize("template", sorted(TEMPLATES))
@pytest.mark.parametrize("message", TRICKY)
def test_a_message_built_to_trip_a_line_test_reads_as_the_whole_text(template: str, message: str) -> None:
    text = TEMPLATES[template].format(message=message)
    _assert_reads_alike(text, message)
    memo = TraceMemo()  # and after another message of the same trace was read
    memo.parsed(TEMPLATES[template].format(message="cart 17 is empty"), "cart 17 is empty")
    whole = grouped_trace(text)
    found = memo.parsed(text, message)
    assert (found.trace if found is not None else None) == whole


def test_a_text_that_already_holds_the_placeholder_is_read_whole() -> None:
    text = "ValueError: " + PLACEHOLDER + "\n" + TEMPLATES["python"].format(message="cart 17 is empty")
    assert cut(text, "cart 17 is empty") is None
    _assert_reads_alike(text, "cart 17 is empty")


def test_a_plain_message_is_cut_out_in_every_checked_runtime() -> None:
    for template in TEMPLATES.values():
        assert _assert_reads_alike(template.format(message="cart 17 is empty"), "cart 17 is empty")


def test_a_message_ending_in_a_bracket_is_cut_out_but_a_recovered_go_panics() -> None:
    """Only Go's panic line looks for `]` at a line's end outside a frame line (` [recovered]`): a message
    that ends in a bracket (as a redacted value's mark does) is read from the cut text in every checked
    runtime, one that ends as a recovered panic's line does is read whole under Go."""
    message = "report 7 is in state quote token=[REDACTED:github_token]"
    for template in TEMPLATES.values():
        assert _assert_reads_alike(template.format(message=message), message)
    for message in ("boom [recovered]", "boom [recovered] [recovered]"):
        for name, template in TEMPLATES.items():
            assert _assert_reads_alike(template.format(message=message), message) == (name != "go"), name


@settings(max_examples=300, deadline=None)
@given(
    template=st.sampled_from(sorted(TEMPLATES)),
    message=st.text(
        alphabet=st.sampled_from(list("aAt :.()[]{}|\"'`$#/\\-0123456789\t\n~^+@=")), max_size=40
    ),
)
def test_any_message_reads_as_the_whole_text(template: str, message: str) -> None:
    _assert_reads_alike(TEMPLATES[template].format(message=message), message)


def test_golden_traces_read_alike_with_each_message_they_print() -> None:
    for path in sorted(TRACES.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        for message in _messages_of(text):
            _assert_reads_alike(text, message)


def test_the_scale_runs_traces_read_alike() -> None:
    scale_data = pytest.importorskip("bench.scale_data")
    rng = random.Random(5)
    cuts = 0
    for number in range(0, 400, 7):
        bug = scale_data.bug(number)
        message = scale_data.message(bug, rng)
        cuts += _assert_reads_alike(scale_data.stack_trace(bug, rng, message), message)
    assert cuts > 30


def test_labelled_traces_read_alike(shared_data: Path) -> None:
    path = shared_data / "defects4j_traces" / "traces.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cuts = 0
    for row in rows:
        for message in [row["message"] or "", *_messages_of(row["trace"])]:
            cuts += _assert_reads_alike(row["trace"], message)
    assert cuts > len(rows) // 2


def _candidate_views(
    reader_events: list[tuple[str, str, str | None]], trace: str
) -> list[tuple[object, ...]]:
    """Each event's candidate from one reader (the second and later reuse the first's reading),
    as what grouping shows of it."""
    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner(), previous_versions=True)
    found = []
    for message, error_type, version in reader_events:
        event = ErrorEvent(
            event_id="1",
            timestamp=EPOCH,
            service="shop",
            error_type=error_type,
            message=message,
            stacktrace=trace,
            service_version=version,
        )
        candidate = reader.candidate(event, None)
        fingerprint = candidate.fingerprint
        found.append(
            (
                fingerprint.variant,
                fingerprint.hash,
                fingerprint.other_hashes,
                fingerprint.other_names,
                fingerprint.legacy_hashes,
                render(fingerprint.tree),
                candidate.title,
                candidate.site_key,
            )
        )
    return found


def test_a_trace_seen_with_other_messages_is_fingerprinted_as_if_seen_first(shared_data: Path) -> None:
    """`fingerprint.with_view`: the reading of the frames is reused, the tree is the event's own."""
    path = shared_data / "defects4j_traces" / "traces.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    events = [("first message 1", None, None), ("another one", "x.Other", "2.0"), ("", None, "3")]
    for row in rows[::3]:
        together = _candidate_views(events, row["trace"])
        alone = [_candidate_views([event], row["trace"])[0] for event in events]
        assert together == alone
