"""The redaction engine (one pass to find the rules a text wants, memoised texts) gives exactly what the
straightforward engine (`tests/redact_reference.py`) gives: the same text and the same counts, for every
rule the package defines, on the security corpus, on the labelled data and on synthetic telemetry."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.redact import Redactor, redact_text
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.rule import Rule, RuleSet, line_local, rule
from rounds_bot.redact.text import _rules
from tests import security_corpus
from tests.redact_reference import reference_apply, reference_redact

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
from scale_data import lines

POLICIES: tuple[IpPolicy, ...] = ("all", "public", "off")


def corpus_texts() -> list[str]:
    texts = [planted.carrier for planted in security_corpus.corpus()]
    texts += [text for text, _ in security_corpus.assignment_samples()]
    texts += [text for text, _ in security_corpus.named_samples()]
    texts += security_corpus.KEPT + security_corpus.injections()
    # every keyword of every rule, alone and inside text: each rule's pre-filter is reached
    for policy in POLICIES:
        for one in _rules(policy):
            texts += [f"{keyword} x={keyword}Ab1: {keyword.upper()}" for keyword in one.keywords]
    return texts


def labelled_texts(shared: Path) -> Iterator[str]:
    for structured in sorted((shared / "loghub_2k").glob("*/*_2k.log_structured.csv")):
        with structured.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                yield row["Content"]
    with (shared / "defects4j_traces" / "traces.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            trace = json.loads(line)
            yield trace["message"] or ""
            yield trace["trace"]


def synthetic_texts() -> Iterator[str]:
    for raw in lines(400, 100, datetime(2026, 1, 1, tzinfo=UTC)):
        yield from (value for value in _strings(json.loads(raw)) if len(value) > 3)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def assert_same(rules: tuple[Rule, ...], texts: list[str]) -> None:
    engine = RuleSet(rules)
    for text in texts:
        mine: Counter[str] = Counter()
        theirs: Counter[str] = Counter()
        assert engine.apply(text, mine) == reference_apply(rules, text, theirs), text
        assert mine == theirs, text


@pytest.mark.parametrize("policy", POLICIES)
def test_the_engine_equals_the_reference_on_the_security_corpus(policy: IpPolicy) -> None:
    texts = corpus_texts()
    assert_same(_rules(policy), texts)
    for text in texts:
        assert redact_text(text, ips=policy) == reference_redact(_rules(policy), text)


def test_each_rule_alone_equals_the_reference() -> None:
    """Rule by rule, so a rule added later is proven on its own too."""
    texts = corpus_texts()
    for one in _rules("all"):
        assert_same((one,), texts)


def test_the_engine_equals_the_reference_on_the_labelled_data(shared_data: Path) -> None:
    texts = list(labelled_texts(shared_data))
    assert len(texts) > 10_000
    assert_same(_rules("all"), texts)


def test_the_engine_equals_the_reference_on_synthetic_telemetry() -> None:
    assert_same(_rules("all"), list(synthetic_texts()))


def test_a_text_seen_again_is_not_redacted_again_and_counts_the_same() -> None:
    redactor = Redactor()
    text = "login failed for ann@example.com password=hunter2hunter2"
    first = redactor.text(text, 1_000)
    counts = Counter(redactor.counts)
    assert redactor.text(text, 1_000) == first == reference_redact(_rules("all"), text).text
    assert redactor.counts == counts  # a distinct text is counted once, as it always was


def test_only_rules_that_stay_within_a_line_are_applied_line_by_line() -> None:
    assert line_local(rule("x", r"(?<![\w.-])sk-[a-z]{4}(?![\w-])", "sk-"))
    assert line_local(rule("x", r"key=(\w{4})", "key", accept=lambda m: m.group(1).isalpha()))
    assert not line_local(rule("x", r"a\s{0,3}b", "a"))  # a newline is a space
    assert not line_local(rule("x", r"a[^b]c", "a"))
    assert not line_local(rule("x", r"a.c", "a", flags=re.DOTALL))
    assert not line_local(rule("x", r"ab(?=,|$)", "a"))  # the end of a line is not the end of the text
    assert not line_local(rule("x", r"ab", "a", accept=lambda m: m.string[: m.start()].endswith("x")))
    assert not line_local(rule("x", r"ab", "a", accept=lambda m: _hand_on(m)))


def _hand_on(match: re.Match[str]) -> bool:
    return match.start() > 0


@pytest.mark.parametrize(
    "text",
    [
        "build version\n10.1.2.3 failed",  # the IP rule looks back across the line break
        "user ann@example.com\n:owner/repo",  # the e-mail rule looks ahead across it
        "apiToken,Abc123Def456Ghi789\nnext,row",  # `$` before a line break
        "a: |\n  hunter2hunter2\nb: ok",  # a YAML block scalar spans two lines
        "password=x1\npassword=x1\n4111 1111 1111 1111\n4111 1111 1111 1111",  # repeated lines count twice
    ],
)
def test_texts_whose_rules_look_across_lines_are_redacted_as_the_reference_does(text: str) -> None:
    engine = RuleSet(_rules("all"))
    for _ in range(2):  # the second time from the memory of lines
        mine: Counter[str] = Counter()
        theirs: Counter[str] = Counter()
        assert engine.apply(text, mine) == reference_apply(_rules("all"), text, theirs)
        assert list(mine.items()) == list(theirs.items())  # the same counts, in the same order
