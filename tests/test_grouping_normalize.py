"""Message normalisation: golden cases per rule, and the properties the fast paths rely on."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rounds_bot.grouping import normalize
from rounds_bot.grouping import shapes as shapes_module
from rounds_bot.grouping.mask_numbers import KEPT_DIGITS
from rounds_bot.grouping.mask_rules import RULES
from rounds_bot.grouping.normalize import (
    mask_spans,
    normalize_before,
    normalize_previous,
    normalize_uncached,
    plain_alternation,
    shape_of,
)
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.skeletons import skeleton, skeleton_with_plurals

GOLDEN = Path(__file__).parent / "golden" / "grouping" / "normalize.tsv"


def golden_cases() -> list[tuple[str, str]]:
    cases = []
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        message, expected = line.split("\t")
        cases.append((message.replace("\\n", "\n"), expected))
    return cases


@pytest.mark.parametrize(("message", "expected"), golden_cases())
def test_golden_messages_normalise_as_recorded(message: str, expected: str) -> None:
    assert normalize_uncached(message) == expected


def test_every_masking_rule_has_a_golden_case() -> None:
    covered = set()
    for message, _ in golden_cases():
        for match in plain_alternation().finditer(normalize.truncate(message)):
            covered.add(match.lastgroup)
    shortcuts = {"plain_word", "plain_number"}
    assert {rule.name for rule in RULES} - shortcuts - covered == set()


def test_utf8_codec_name_is_not_a_number() -> None:
    assert normalize_uncached("'utf-8' codec can't decode") == "'utf-8' codec can't decode"


def test_scope_operator_is_not_an_ipv6_address() -> None:
    assert normalize_uncached("Foo::Bar::baz failed") == "Foo::Bar::baz failed"
    assert normalize_uncached("Cafe::Add failed") == "Cafe::Add failed"


def test_version_strings_mask_as_one_value() -> None:
    assert normalize_uncached("upgrade 1.2.3 to v1.4") == "upgrade <version> to <version>"


def test_ids_in_a_sentence_do_not_change_its_normal_form() -> None:
    first = normalize_uncached("user 123 not found in shard 7")
    second = normalize_uncached("user 9 not found in shard 12")
    assert first == second == "user <int> not found in shard <int>"


# --- properties the fast paths rely on ----------------------------------------------------------


def _corpus() -> list[str]:
    rng = random.Random(3)
    messages = [m for m, _ in golden_cases()]
    alphabet = "abcdefxyzABCDEF0123456789 .:-_/@=\"'()[]{},;#+~\\<>"
    for _ in range(400):
        messages.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))))
    messages.append("Mon Jan  2 15:04:05 2006 and Monitor May Maybe March 12")
    return messages


def test_dispatching_regex_matches_exactly_like_the_plain_ordered_rule_list() -> None:
    # The combined pattern dispatches on the first character and has two shortcuts; it must
    # find the same spans as trying the rules in order without them.
    shortcuts = {"plain_word", "plain_number"}
    plain = plain_alternation(tuple(rule for rule in RULES if rule.name not in shortcuts))
    placeholder = {rule.name: rule.placeholder for rule in RULES}
    # a rule may keep the start of its match (a Ruby object's class): the span begins after it
    kept = {rule.name: re.compile(rule.kept) for rule in RULES if rule.kept is not None}
    # or it may mask a part of its match only (the address before a port), or none of it
    masked = {rule.name: re.compile(rule.masked) for rule in RULES if rule.masked is not None}

    def masked_part(match: re.Match[str]) -> tuple[int, int] | None:
        if match.lastgroup in masked:
            part = masked[match.lastgroup].search(match.string, match.start(), match.end())
            return None if part is None else part.span()
        head = kept[match.lastgroup].match(match.string, match.start()) if match.lastgroup in kept else None
        return (head.end() if head is not None else match.start()), match.end()

    for message in _corpus():
        expected = tuple(
            (*part, f"<{placeholder[m.lastgroup]}>")
            for m in plain.finditer(message)
            if placeholder[m.lastgroup or ""] is not None and (part := masked_part(m)) is not None
        )
        assert mask_spans(message) == expected, message


def _other_digits(text: str, rng: random.Random) -> str:
    """The same text with every digit replaced by a random digit, but those a rule may keep (a status code, a
    remote port: `mask_numbers.KEPT_DIGITS`), which are part of the shape."""
    kept = {index for m in KEPT_DIGITS.finditer(text) for index in range(*m.span(m.lastindex or 0))}
    return "".join(
        str(rng.randrange(10)) if char in "0123456789" and index not in kept else char
        for index, char in enumerate(text)
    )


def test_a_kept_number_is_part_of_the_shape() -> None:
    # a 404 and a 500 are read apart, each with its own digits, though the shape memo reads a shape once
    for first, second in [
        ("Request failed with status code 404", "Request failed with status code 500"),
        (
            "dial tcp 10.0.3.7:5432: connect: connection refused",
            "dial tcp 10.0.3.7:6379: connect: connection refused",
        ),
    ]:
        assert shape_of(first) != shape_of(second)
        shapes = ShapeCache()
        assert shapes.lookup(first)[1].skeleton != shapes.lookup(second)[1].skeleton
    # the other digits of the message are no part of it: the address; and every port of a read or write on
    # a connection, whose remote end may be a server's client, on an ephemeral port
    assert shape_of("dial tcp 10.0.3.7:5432: connect: connection refused") == shape_of(
        "dial tcp 10.2.9.1:5432: connect: connection refused"
    )
    assert shape_of("write tcp 172.17.0.2:8080->172.17.0.1:46854: write: broken pipe") == shape_of(
        "write tcp 172.17.0.2:8080->172.17.0.1:51234: write: broken pipe"
    )


def test_masking_never_depends_on_digit_values() -> None:
    # Messages of one shape (same text, other digits) are masked at the same places: the shape
    # memo depends on it, and so does every rule's use of `\d` only.
    rng = random.Random(5)
    for message in _corpus():
        text = normalize.truncate(message)
        other = _other_digits(text, rng)
        assert shape_of(other) == shape_of(text)
        assert mask_spans(other) == mask_spans(text), message


def test_the_shape_memo_agrees_with_normalising_from_scratch() -> None:
    shapes = ShapeCache(max_shapes=8)  # tiny, so the memo is also emptied along the way
    rng = random.Random(9)
    for message in _corpus() * 2:
        varied = _other_digits(message, rng)
        normalized, _ = shapes.lookup(varied)
        assert normalized == normalize_uncached(varied)


def _eager_reading(message: str, code_test: Callable[[str], bool]) -> tuple[object, ...]:
    """What a shape reads of its message, worked out from scratch as soon as it is seen."""
    text = normalize.truncate(message)
    # (what the rules keep stays a word of the skeleton: `shapes._skeleton_keeping`)
    tokens = shapes_module._skeleton_keeping(text, mask_spans(text), normalize.kept_pieces(text))
    before: tuple[str, ...] | None = skeleton_with_plurals(normalize_before(text))
    seventh = shapes_module._skeleton_keeping(
        text, normalize.mask_spans_seventh(text), normalize.kept_pieces(text, seventh=True)
    )
    sixth = skeleton(normalize.normalize_sixth(text))
    fifth = skeleton(normalize.normalize_fifth(text))
    # where `rounds-fp:7`, `rounds-fp:6` or `rounds-fp:5` read the message otherwise, `before` is the newest
    # such skeleton (`shapes.ReadBefore`)
    newest = next((read for read in (seventh, sixth, fifth) if read != tokens), None)
    before = newest if newest is not None else None if before == tokens else before
    previous = None
    if re.search(r"[\"'{\[]", text) or before is not None:
        previous = skeleton_with_plurals(normalize_previous(text))
        previous = None if previous == tokens else previous
    return tokens, previous, before, code_test(text)


def test_what_a_shape_reads_when_first_asked_is_what_its_message_gives_from_scratch() -> None:
    # The skeletons and the error-code test are read from the shape's first message only when asked
    # for (a trace's message never asks), in any order, after the memo was emptied or not.
    code = re.compile(r"\b[A-Z]{2,4}-\d{2,5}\b")

    def code_test(text: str) -> bool:
        return code.search(text) is not None

    shapes = ShapeCache(max_shapes=8, code_test=code_test)
    rng = random.Random(11)
    corpus = [
        *_corpus(),
        "order ORD-123 failed",
        "order ORD-9 failed: {'id': 4}",
        "2 validation errors for Order",
        "(3 sub-exceptions) at 3:01:02 PM",
    ]
    for message in corpus * 2:
        varied = _other_digits(message, rng)
        _, info = shapes.lookup(varied)
        asked = rng.randrange(4)
        if asked == 0:
            continue  # never asked: the next message of the shape may be the first to ask
        reading = (
            (info.skeleton, info.previous, info.before, info.may_hold_code)
            if asked == 1
            else tuple(reversed((info.may_hold_code, info.before, info.previous, info.skeleton)))
        )
        assert reading == _eager_reading(varied, code_test), message


def test_the_shape_memo_is_bounded_by_the_bytes_its_shapes_hold() -> None:
    shapes = ShapeCache(budget=20_000)
    for index in range(200):
        shapes.lookup(f"failed to read {'x' * (index % 7)} shard{'y' * index}")
    assert 0 < len(shapes._shapes) < 200 and shapes._shapes.held <= 20_000


@pytest.mark.parametrize(
    "message",
    [
        "a" * 200_000,
        "(" * 5000 + "x@" * 3000,
        "a." * 50_000,
        "1." * 50_000,
        "0x" + "f" * 100_000,
        "/" + "a/" * 50_000,
        "a:" * 50_000 + "1",
        "\x00\xff\ud800" * 1000,
    ],
)
def test_adversarial_messages_are_cut_and_normalised(message: str) -> None:
    assert len(normalize.truncate(message)) <= normalize.MAX_MESSAGE_CHARS
    # a placeholder is longer than what it replaces, but never more than a few times
    assert len(normalize_uncached(message)) <= 6 * normalize.MAX_MESSAGE_CHARS


def test_a_long_message_is_cut_at_a_space_not_inside_a_value() -> None:
    message = "delete " + " ".join(f"blk_{n}" for n in range(10**6, 10**6 + 400))
    out = normalize_uncached(message)
    assert out.split()[-1] == "blk_<int>"


def test_an_smtp_enhanced_status_code_is_kept_but_rounds_fp_2_read_it_as_a_version() -> None:
    message = "failed: (421, b'4.7.0 Service not available')"
    assert normalize_uncached(message) == "failed: (<int>, b'4.7.0 Service not available')"
    assert normalize.normalize_previous(message) == "failed: (<int>, b'<version> Service not available')"


_IMPORT_COMPILES = """
import re, sys
compiled = []
real_compile = re.compile
def recording(pattern, flags=0):
    compiled.append(pattern)
    return real_compile(pattern, flags)
re.compile = recording
from rounds_bot.grouping import normalize
at_import = list(compiled)
earlier = [normalize._combined(rules)[0].pattern for rules in (
    normalize.SEVENTH_RULES, normalize.SIXTH_RULES, normalize.FIFTH_RULES, normalize.BEFORE_RULES,
    normalize.PREVIOUS_RULES)]
today = normalize._combined(normalize.RULES)[0].pattern
print(sum(pattern in at_import for pattern in earlier), today in at_import)
"""


def test_importing_normalize_joins_todays_rules_alone() -> None:
    """The earlier versions' joined rules are compiled when first read by, not on import (a fresh
    interpreter: the test process has imported the module already)."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_COMPILES], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "True"]


def test_earlier_versions_read_as_their_rules_joined() -> None:
    """Each earlier version's spans are those of its own rules joined (compiled once, on first use)."""
    text = "user 42 at 2024-01-02 failed: 'x' (a=1) utf-8 0xdeadbeef"
    cases = (
        (normalize.mask_spans_seventh, normalize.SEVENTH_RULES, True),
        (normalize.mask_spans_sixth, normalize.SIXTH_RULES, False),
        (normalize.mask_spans_fifth, normalize.FIFTH_RULES, False),
        (normalize.mask_spans_before, normalize.BEFORE_RULES, False),
    )
    for spans_of, rules, keeps in cases:
        joined = normalize._combined(rules)
        expected = normalize._spans_by(joined, text) if keeps else normalize._spans_by(joined, text, {})
        assert spans_of(text) == expected
    previous = normalize._combined(normalize.PREVIOUS_RULES)
    truncated = normalize.truncate(text)
    expected_previous = normalize.apply_spans(truncated, normalize._spans_by(previous, truncated, {}))
    assert normalize_previous(text) == expected_previous
