"""A long text of many lines is redacted as it always was while it pays the scan only for what is new in it:
its first and last lines scanned, the lines between remembered (`redact/scan_lines.py`), the base64 and hex
runs looked for only in the lines their gates are in (`decode.Where`), and a text a rule changed judged by
the gates of its last scan (`engine.ScanningRuleSet.apply_gated`).

What is pinned: the scan of a text by its lines reports every id and end the scan of the whole text reports
(a report more is harmless: the rule then searches and finds nothing; one less would be a secret missed),
and `redact_text` gives the reference engine's text and counts, on the security corpus, the labelled
traces, traces shaped as a round's are (a message with values, frames that recur) and generated texts that
put secrets, PEM blocks, `key:` with its value on the next line, base64 and hex runs and seed phrases across
and beside line breaks."""

from __future__ import annotations

import base64
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.redact import decode, phrases, redact_text
from rounds_bot.redact import scan as scan_module
from rounds_bot.redact.decode import hex_runs_hide_nothing, rejudge
from rounds_bot.redact.engine import ScanningRuleSet, rule_set
from rounds_bot.redact.scan import Prefilter, Scan
from rounds_bot.redact.scan_lines import crosses_lines
from rounds_bot.redact.text import RUN_GATES, _rules
from tests.redact_reference import reference_redact
from tests.test_redact_engine import FRAGMENTS, corpus_texts, encoded_texts, labelled_texts

PHRASE = "legal winner thank year wave sausage worth useful legal winner thank yellow"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----"
)
#: what is put across and beside line breaks: secrets, names and values split over two lines, encoded runs
PIECES = (
    PEM,
    "password:\n  hunter2hunter2",
    "api_key: |\n  abcDEF123ghiJKL456",
    "secret =\n\t's3cr3tV4lue99'",
    "token was\n  abcDEF123ghiJKL456",
    "<password>\n  hunter2hunter2\n</password>",
    "AUTH hunter2hunter2\n",
    '"name": "api_key",\n "value": "abcDEF123ghiJKL456"',
    base64.b64encode(b"password=hunter2hunter2 and more").decode(),
    b"api_key=abcDEF123ghiJKL456".hex(),
    "a" + b"api_key=abcDEF123ghiJKL456".hex(),
    "IllegalArgumentException",
    "12345678901234567890==",
    PHRASE,
    PHRASE.replace(" ", "\n"),
    "Bearer abcDEF123ghiJKL456",
    "ann@example.com",
    "4111 1111 1111 1111",
    "10.1.2.3",
)


def frames(rng: random.Random, bug: int, runtime: str) -> list[str]:
    """The frames of a bug's trace, as a runtime prints them (the same for every occurrence of the bug,
    but Go's arguments, which differ in every occurrence)."""
    names = ["save_ledger", "render_address", "release_card", "validate_user", "charge_quote", "load_token"]
    out: list[str] = []
    for depth in range(rng.randint(6, 14), 0, -1):
        name = f"{names[(bug + depth) % len(names)]}_{bug}_{depth}"
        if runtime == "java":
            out.append(f"\tat com.shop.payments.Save{name.title()}.run(Save{bug}.java:{depth * 37})")
        elif runtime == "go":
            out.append(f"main.{name}(0x{rng.getrandbits(40):x}, 0x{rng.randint(1, 99):x})")
            out.append(f"\t/go/src/search/cart.go:{depth * 41} +0x{depth * 29:x}")
        else:
            out.append(f'  File "/srv/checkout/app/price.py", line {depth * 53}, in {name}')
            out.append(f"    return {name}(ctx)")
    return out


def traces(count: int, seed: int = 26, bugs: int = 12) -> Iterator[str]:
    """Traces shaped as a round's: a message with values (now and then a secret), the frames of its bug."""
    rng = random.Random(seed)
    for _ in range(count):
        bug = rng.randrange(bugs)
        runtime = ("java", "go", "python")[bug % 3]
        values = f"order{bug} {rng.randint(10**6, 10**7)} is in state {rng.choice(['paid', 'lost'])}"
        if rng.random() < 0.3:
            values += " " + rng.choice(PIECES)
        body = frames(random.Random(bug), bug, runtime) if runtime != "go" else frames(rng, bug, runtime)
        if runtime == "python":
            yield "\n".join(["Traceback (most recent call last):", *body, f"KeyError: {values}"])
        elif runtime == "go":
            yield "\n".join([f"panic: {values}", "", f"goroutine {rng.randint(1, 9999)} [running]:", *body])
        else:
            yield "\n".join([f"java.lang.IllegalStateException: {values}", *body])


def prefilter() -> Prefilter:
    engine = rule_set(_rules("all"))
    assert isinstance(engine, ScanningRuleSet)
    return engine.prefilter


def whole_scan(found: Prefilter, text: str, monkeypatch: pytest.MonkeyPatch) -> Scan:
    with monkeypatch.context() as patched:
        patched.setattr(scan_module, "LINES_FROM", 10**9)
        return found.scan(text)


def assert_covers(by_lines: Scan, whole: Scan, text: str) -> None:
    """Every keyword, gate and end the whole text's scan reports, the scan by lines reports."""
    assert whole.keywords <= by_lines.keywords, text
    assert whole.gates <= by_lines.gates, text
    for number, ends in whole.ends.items():
        assert set(ends) <= set(by_lines.ends.get(number, ())), (number, text)


def assert_scans_cover(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """Each text scanned by lines (twice: the lines between first and last are remembered once seen
    twice, then reused) covers the scan of the whole text; returns how many texts went by lines."""
    found = prefilter()
    lines = found._by_lines(found._database(True))
    by_lines = 0
    for text in texts:
        whole = whole_scan(found, text, monkeypatch)
        for _ in range(3):
            assert_covers(found.scan(text), whole, text)
        if text.isascii() and len(text) >= scan_module.LINES_FROM and lines.hits(text) is not None:
            by_lines += 1
    return by_lines


def assert_redacted_as_the_reference(texts: list[str]) -> None:
    rules = _rules("all")
    for text in texts:
        expected = reference_redact(rules, text)
        for _ in range(3):  # a first sight, a second (remembered), a third (from memory)
            assert redact_text(text) == expected, text


def test_a_pattern_crosses_lines_unless_a_newline_can_only_start_its_match() -> None:
    assert not crosses_lines(r"(?:^|[\x00-\x2f\x3a-\x40])[0-9]{3}")  # the character before the match
    assert not crosses_lines(r"(?:(?:^|[^A-Z])[\x28][2-9]|(?:^|[\x0a\x20])x)y")
    assert not crosses_lines(r"[\s]ab(?m:$)")  # one character, then none that is a newline
    assert not crosses_lines(r"[Pp][Aa][Ss][Ss](?:[\x09\x20]){0,}[\x3d]")
    assert crosses_lines(r"[\x3a](?:[\x09\x20]){0,3}[\x0a](?:[\x09\x20]){1,}x")  # `key:` and a value below
    assert crosses_lines(r"a(?:[\x09-\x0d]){0,}b")  # spaces that hold a newline
    assert crosses_lines(r"[\s]{2}x")  # a newline may be the second character
    assert crosses_lines(r"^[\x0a]x")  # a newline after an anchor that reads the character before it
    assert crosses_lines(r"ab[\s]")  # a lookahead read as the match's last character
    assert crosses_lines(r"a\Qb")  # a pattern this reading does not know
    # syntax Python's parser reads as something else than Hyperscan does: vertical space, POSIX classes
    assert crosses_lines(r"a\vb") and crosses_lines(r"a\hb")
    assert crosses_lines("a[[:space:]]b") and crosses_lines("a[[:^alpha:]]b")


def test_the_patterns_that_cross_lines_are_the_multi_line_ones() -> None:
    """Of the rules' translations, those whose match can hold a line break past its start: the pairs whose
    value stands on the next line, XML elements, pairs spread over lines, `AUTH` and what ends it; every
    keyword and gate (`decode`, `phrases`) is found line by line."""
    found = prefilter()
    patterns = scan_module._patterns(found._scanned, found._keyword_ids, found._gate_ids_by_name(), True)
    crossing = {
        number
        for number, source in zip(patterns.ids, patterns.expressions, strict=True)
        if crosses_lines(source.decode("latin-1"))
    }
    rules = _rules("all")
    assert crossing and all(number < len(rules) for number in crossing)
    assert {rules[number].category for number in crossing} <= {"key_value_secret", "password"}
    for name, (source, _) in {**decode.SCAN_GATES, **phrases.SCAN_GATES}.items():
        assert not crosses_lines(source), name


def test_the_scan_by_lines_reports_what_the_whole_scan_reports_on_round_shaped_traces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = list(traces(600))
    assert assert_scans_cover(texts, monkeypatch) > 300


def test_the_scan_by_lines_reports_what_the_whole_scan_reports_on_the_corpus_and_labelled_traces(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = corpus_texts()
    rng = random.Random(3)
    # the corpus's texts as the message, the frames, or the last line of a trace
    texts = []
    for text in corpus:
        trace = next(traces(1, seed=rng.randrange(10**6)))
        first, _, rest = trace.partition("\n")
        texts += [f"{first} {text}\n{rest}", f"{trace}\n{text}", f"{first}\n{text}\n{rest}"]
    labelled = [text for text in labelled_texts(shared_data) if "\n" in text]
    assert len(labelled) > 100
    assert assert_scans_cover(texts + labelled, monkeypatch) > 1_000


def test_traces_are_redacted_as_the_reference_redacts_them(shared_data: Path) -> None:
    labelled = [text for text in labelled_texts(shared_data) if "\n" in text][:300]
    assert_redacted_as_the_reference(list(traces(400, seed=9)) + labelled)


def test_the_corpus_in_traces_is_redacted_as_the_reference_redacts_it() -> None:
    rng = random.Random(4)
    texts = []
    for text in corpus_texts()[::3] + encoded_texts():
        first, _, rest = next(traces(1, seed=rng.randrange(10**6))).partition("\n")
        texts += [f"{first} {text}\n{rest}", f"{first}\n{text}\n{rest}"]
    assert_redacted_as_the_reference(texts)


lines = st.lists(
    st.lists(st.sampled_from(FRAGMENTS + PIECES), min_size=1, max_size=6).map("".join), min_size=1, max_size=6
).map("\n".join)


@given(
    head=lines,
    between=lines,
    tail=lines,
    other_head=lines,
    joint=st.sampled_from(["\n", "\n\n", "\r\n", " "]),
)
@settings(max_examples=150, deadline=None)
def test_texts_with_secrets_across_line_breaks_are_redacted_as_the_reference_redacts_them(
    head: str, between: str, tail: str, other_head: str, joint: str
) -> None:
    """The lines between first and last, remembered from one text, serve another with other first and last
    lines; secrets stand in each part and across the breaks between them."""
    padding = "\n".join(frames(random.Random(len(between)), 7, "java"))
    for first in (head, other_head):
        for last in (tail, head):
            text = joint.join([first, between, padding, last])
            assert_redacted_as_the_reference([text])


@given(head=lines, between=lines, tail=lines)
@settings(max_examples=150, deadline=None)
def test_the_scan_by_lines_covers_the_whole_scan_on_any_lines(head: str, between: str, tail: str) -> None:
    found = prefilter()
    padding = "\n".join(frames(random.Random(5), 3, "python"))
    text = "\n".join([head, between, padding, tail])
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(scan_module, "LINES_FROM", 10**9)
        whole = found.scan(text)
    for _ in range(3):
        assert_covers(found.scan(text), whole, text)


@given(head=lines, between=lines, tail=lines)
@settings(max_examples=200, deadline=None)
def test_runs_are_looked_for_in_the_lines_their_gates_are_in_with_what_the_whole_text_gives(
    head: str, between: str, tail: str
) -> None:
    found = prefilter()
    padding = "\n".join(frames(random.Random(6), 4, "java"))
    text = "\n".join([head, padding, between, tail])
    where = found.lines_with(text, RUN_GATES)
    if where is None:
        return
    assert all(text.count("\n", start, end) == 0 for start, end in where)
    assert hex_runs_hide_nothing(text, where) == hex_runs_hide_nothing(text)

    def judge(view: str) -> tuple[str, list[str]]:
        found_counts: Counter[str] = Counter()
        return rule_set(_rules("all")).apply(view, found_counts), list(found_counts.elements())

    assert rejudge(text, judge, where=where) == rejudge(text, judge)


def test_a_text_a_rule_changed_carries_the_gates_of_the_text_the_rules_gave_back() -> None:
    engine = rule_set(_rules("all"))
    assert isinstance(engine, ScanningRuleSet)
    changed = 0
    for text in corpus_texts() + encoded_texts() + list(traces(200, seed=2)):
        ruled, gates = engine.apply_gated(text, Counter())
        if gates is None:
            continue
        assert gates == engine.prefilter.scan(ruled).gates, text
        changed += ruled != text
    assert changed > 100


def test_the_memory_of_frames_counts_the_hits_it_keeps_not_only_their_characters() -> None:
    # a block of dense numbers reports several hits a character: remembering it must fill the memory as
    # fast as what it holds, or frames an attacker controls could hold far more than the bound says
    from rounds_bot.redact.scan_lines import BLOCK_MEMO_CHARS, LineScan

    engine = rule_set(_rules("all"))
    assert isinstance(engine, ScanningRuleSet)
    prefilter = engine.prefilter
    line_scan = prefilter._by_lines(prefilter._database(True))
    assert isinstance(line_scan, LineScan)
    line_scan.forget()  # what earlier tests left could start a new generation half way through this one
    dense = "\n".join(["4111 1111 1111 1111 " * 50] * 3)
    text = f"head\n{dense}\ntail"
    before = line_scan._remembered
    line_scan.hits(text)
    line_scan.hits(text)  # the second sight remembers the block
    hits = line_scan._young.get(dense)
    assert hits is not None and len(hits) > len(dense)
    assert line_scan._remembered - before >= 100 * len(hits) or line_scan._remembered < before
    assert BLOCK_MEMO_CHARS >= 1_000_000


def test_a_boundary_empties_the_memory_of_frames_when_its_events_are_redacted() -> None:
    from datetime import UTC, datetime

    from rounds_bot.models import ErrorEvent
    from rounds_bot.redact import Redactor
    from rounds_bot.redact.boundary import Boundary
    from rounds_bot.sources.base import PollResult

    engine = rule_set(_rules("all"))
    assert isinstance(engine, ScanningRuleSet)
    line_scan = engine.prefilter._by_lines(engine.prefilter._database(True))
    frames = "\n".join(f"  at com.shop.Worker{n}.run(Worker{n}.java:{n})" for n in range(40))
    boundary = Boundary(Redactor())
    for n in range(3):
        boundary(
            ErrorEvent(
                event_id=f"e{n}",
                timestamp=datetime(2026, 1, 1, tzinfo=UTC),
                service="api",
                message=f"boom {n}",
                stacktrace=f"java.lang.IllegalStateException: boom {n}\n{frames}\n  at end",
            )
        )
    boundary._redact_waiting()
    assert line_scan._young or line_scan._old  # the frames were remembered while redacting
    safe = boundary.finish(PollResult())
    assert len(safe.events) == 3
    assert not line_scan._young and not line_scan._old and line_scan._remembered == 0
