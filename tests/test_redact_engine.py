"""The redaction engines give exactly what the straightforward engine (`tests/redact_reference.py`) gives: the
same text and the same counts, in the same order, for every rule the package defines, on the security corpus,
on the labelled data and on synthetic telemetry. Two engines are checked: the scanning one (one Hyperscan pass
for every rule, then each rule only near where the scan says it may match: `scan.py`, `engine.py`) and the
keyword one it falls back to without Hyperscan (one keyword pass, a memory of lines: `rule.RuleSet`)."""

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
from rounds_bot.redact import engine as engine_module
from rounds_bot.redact import scan as scan_module
from rounds_bot.redact.engine import ScanningRuleSet
from rounds_bot.redact.pairs import _PAIR
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.rule import Rule, RuleSet, line_local, rule
from rounds_bot.redact.scan import Prefilter
from rounds_bot.redact.text import _rules
from tests import security_corpus
from tests.redact_reference import reference_apply, reference_redact
from tests.redact_shaped_cases import shaped_cases

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
from scale_data import lines

POLICIES: tuple[IpPolicy, ...] = ("all", "public", "off")


def corpus_texts() -> list[str]:
    texts = [planted.carrier for planted in security_corpus.corpus()]
    texts += [text for text, _ in security_corpus.assignment_samples()]
    texts += [text for text, _ in security_corpus.named_samples()]
    texts += security_corpus.KEPT + security_corpus.injections()
    texts += [text for text, _ in security_corpus.BESIDE_NAMES] + security_corpus.KEPT_BESIDE_NAMES
    texts += shaped_cases()  # Doppler, password hashes, client ids, addresses, versions
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


def engines(rules: tuple[Rule, ...]) -> list[RuleSet | ScanningRuleSet]:
    """Both engines for `rules`: the keyword one and the scanning one."""
    prefilter = Prefilter.of(rules)
    assert prefilter is not None, "Hyperscan is a dependency: its wheel must be installed here"
    return [RuleSet(rules), ScanningRuleSet(rules, prefilter)]


def assert_same(rules: tuple[Rule, ...], texts: list[str]) -> int:
    """Every engine gives the reference's text and counts (in the same order) on every text; returns how
    many texts were checked."""
    both = engines(rules)
    for text in texts:
        theirs: Counter[str] = Counter()
        expected = reference_apply(rules, text, theirs)
        for engine in both:
            mine: Counter[str] = Counter()
            assert engine.apply(text, mine) == expected, (type(engine).__name__, text)
            assert list(mine.items()) == list(theirs.items()), (type(engine).__name__, text)
    return len(texts)


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
    for engine in engines(_rules("all")):
        for _ in range(2):  # the second time from the memory of lines
            mine: Counter[str] = Counter()
            theirs: Counter[str] = Counter()
            assert engine.apply(text, mine) == reference_apply(_rules("all"), text, theirs)
            assert list(mine.items()) == list(theirs.items())  # the same counts, in the same order


# What the scanning engine adds: a translation of each rule that must report an end for every match, a
# byte for every non-ASCII character, searches near the reported ends (and whole texts past a number of
# them), and names narrowed to the words a secret's name holds.

#: fragments a random text is made of: keywords, separators, names, values, shapes of personal data, and
#: characters outside ASCII (a Kelvin sign lowercases to `k`, a dotted capital I to two characters, fullwidth
#: digits are digits to the regex engine)
FRAGMENTS = (
    "password", "Password", "PASS", "token", "api_key", "apiToken", "SECRET", "auth", "session", "msg",
    "name", "value", "key", "cache_key", "TO\u212aEN", "P\u0130N", "pass\u0130", "user", "email", "x",
    "Bearer ",
    "Basic dXNlcjpodW50ZXIy", "cookie", "set-cookie", "=", ": ", ":", "=>", ":=", "%3D", "%3d", "%3A", "&",
    "?", "-D", "--", ".", ",", ";", " ", "  ", "\t", "\n", "\r\n", "\"", "'", "`", "[", "]", "(", ")", "{",
    "}", "<", ">", "</", "|", "/", "@", "+", "-", "_", "hunter2hunter2", "s3cr3tV4lue99",
    "abcDEF123ghiJKL456",
    "4111 1111 1111 1111", "4111111111111111", "\uff14\uff11\uff11\uff11", "123-45-6789",
    "ann@example.com", "git@github.com:owner/repo", "10.1.2.3", "192.168.0.10", "::1", "fe80::1%eth0",
    "2001:db8::8a2e:370:7334", "+44 20 7946 0958", "(415) 555-0142", "06 12 34 56 78",
    "GB82WEST12345698765432", "AB123456C", "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2c3D4e5" * 4,
    "sk-ant-" + "x9Y8z7W6v5" * 3, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "https://u:p4ss@h.io/",
    "jdbc:oracle:thin:scott/tiger@db", "AUTH ", "mysql -u root -p", "café", "naïve", "日本語", "\u0660\u0661",
    "\U0001f600", "\u200b", "version ", "build ", "cpf", "aadhaar", "ssn", "tel:", "File.java:12)",
    "token.js:494:4)", "  at ", "\"password\": ", "<password>", "\\\"", "12", "2026-01-01",
)  # fmt: skip


def random_texts(count: int, seed: int = 26) -> list[str]:
    import random

    chosen = random.Random(seed)
    return ["".join(chosen.choice(FRAGMENTS) for _ in range(chosen.randint(1, 60))) for _ in range(count)]


def long_texts() -> list[str]:
    """Texts with more reported ends than a search near each is worth, and secrets far into long lines."""
    corpus = corpus_texts()
    pairs = " ".join(f"field{n}=value{n}" for n in range(400))
    return [
        "\n".join(corpus[:300]),
        " ".join(corpus[300:600]),
        pairs + " password=hunter2hunter2 " + pairs,
        pairs.replace(" ", "\n") + "\napi_key: abcDEF123ghiJKL456\n" + "at x (token.js:494:4)\n" * 200,
        '{"a": "' + "x" * 15_000 + '", "token": "abcDEF123ghiJKL456"}',
        "10.1.2.3 " * 300 + "4111 1111 1111 1111",
    ]


def test_the_scanning_engine_equals_the_reference_on_random_text() -> None:
    for policy in POLICIES:
        assert assert_same(_rules(policy), random_texts(1_500)) == 1_500


def encoded_texts() -> list[str]:
    """Secrets behind base64 and hex, seed phrases, and runs that only look like them."""
    import base64

    phrase = "legal winner thank year wave sausage worth useful legal winner thank yellow"
    runs = [
        base64.b64encode(b"password=hunter2hunter2 and more").decode(),
        base64.urlsafe_b64encode(b"token: ghp_" + b"a1B2c3D4e5" * 4).decode().rstrip("="),
        base64.b64encode(phrase.encode()).decode(),
        b"api_key=abcDEF123ghiJKL456".hex(),
        b"api_key=abcDEF123ghiJKL456".hex().upper(),
        "12345678901234567890==",
        "1234-5678-9012-3456-7890",
        "/srv/checkout/app/price/lowercase/only",
        "A1" * 20,
        "QUJD" * 10 + "=x",
    ]
    return [phrase, phrase.replace(" ", "\t"), "seed: " + phrase.replace(" ", "  ")] + [
        f"x {one} y {two}" for one in runs for two in runs
    ]


def test_redaction_with_the_scan_equals_the_reference_on_random_and_encoded_text(shared_data: Path) -> None:
    """The whole of `redact_text` (the scan also says whether a seed phrase or an encoded run may be there)
    against the reference's steps, each of which looks for itself."""
    rules = _rules("all")
    texts = random_texts(1_000, seed=11) + encoded_texts() + list(labelled_texts(shared_data))[:3_000]
    for text in texts:
        assert redact_text(text) == reference_redact(rules, text), text


def test_a_text_the_scan_finds_no_gate_in_needs_no_look_for_phrases_or_runs(shared_data: Path) -> None:
    """The gates' promise: a text with a run `_from_base64` does not refuse unread, a hex run of 32 or a
    first look at a seed phrase holds the gate the scan looks for."""
    from rounds_bot.redact import decode, phrases

    rules = _rules("all")
    prefilter = Prefilter.of(rules, {**decode.SCAN_GATES, **phrases.SCAN_GATES})
    assert prefilter is not None
    texts = corpus_texts() + random_texts(1_000, seed=5) + encoded_texts()
    texts += list(synthetic_texts())[:2_000] + list(labelled_texts(shared_data))[:3_000]
    looked = 0
    for text in texts:
        gates = prefilter.scan(text).gates
        for match in decode._BASE64.finditer(text):
            run = match.group(0)
            if not (run.islower() or run.isupper() or run.isdigit()):
                assert gates & set(decode.SCAN_GATES), (run, text)
                looked += 1
            if len(run) >= 32 and decode._HEXISH.fullmatch(run):
                assert "hex run" in gates, (run, text)
        if phrases._LOOSE.search(text) or phrases._SPACED.search(text):
            assert set(phrases.SCAN_GATES) <= gates, text
            looked += 1
    assert looked > 100


def test_the_scanning_engine_equals_the_reference_on_long_texts() -> None:
    assert_same(_rules("all"), long_texts())


def test_text_outside_ascii_is_redacted_as_the_reference_does() -> None:
    texts = [
        "TO\u212aEN=abcDEF123ghiJKL456",  # the Kelvin sign lowercases to `k`: a keyword and a name
        "api_\u212aey: hunter2hunter2x and P\u0130N=8372",
        "pass\u0130 = s3cr3tV4lue99, card \uff14\uff11\uff11\uff11 \uff11\uff11\uff11\uff11",
        "caf\u00e9 password=hunter2 \u0660\u0661\u0662-\u0663\u0664-\u0665\u0666\u0667\u0668",
        "\ud800 lone surrogate token=abcDEF123ghiJKL456 \U0001f600 ann@exampl\u00e9.com",
    ]
    assert_same(_rules("all"), texts)


def test_the_scan_reports_an_end_for_every_match_a_rule_can_take() -> None:
    """The translation's promise, checked rule by rule: every match of a rule ends where the scan reported
    an end (for a narrowed rule, every match its `accept` takes; for a rule searched whole, the scan reports
    it at all; for a rule whose lookahead the scan reads, up to `read_ahead` past the match), so a text the
    scan reports nothing for holds no such match."""
    rules = _rules("all")
    prefilter = Prefilter.of(rules)
    assert prefilter is not None
    texts = corpus_texts() + random_texts(1_000, seed=7) + list(synthetic_texts())[:2_000]
    checked = 0
    for text in texts:
        ends = prefilter.scan(text).ends
        for index, how in prefilter.translated.items():
            one = rules[index]
            for match in one.pattern.finditer(text):
                if how.narrowed and not (one.accept is None or one.accept(match)):
                    continue
                # a rule without a widest match runs over the whole text: the scan only says whether
                reported = ends.get(index, ())
                found = any(match.end() <= end <= match.end() + how.read_ahead for end in reported)
                assert reported if how.widest is None else found, (index, text)
                checked += 1
    assert checked > 1_000


def test_without_hyperscan_the_keyword_engine_redacts_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a platform without a Hyperscan wheel the package falls back to the keyword engine."""
    monkeypatch.setattr(scan_module, "hyperscan", None)
    monkeypatch.setattr(engine_module, "_SETS", {})
    rules = _rules("all")
    assert isinstance(engine_module.rule_set(rules), RuleSet)
    for text in corpus_texts()[:400]:
        assert redact_text(text) == reference_redact(rules, text)
    monkeypatch.undo()
    assert isinstance(engine_module.rule_set(rules), ScanningRuleSet)


def test_every_name_a_secret_rule_takes_holds_one_of_the_secret_words() -> None:
    """The promise the pair rules' scan is narrowed by (`Rule.key_words`): `_accept_pair` takes a pair only
    under a name `secret_category`, `maybe_secret` or `names_client_credential` takes, and each of those
    holds one of the words."""
    from rounds_bot.redact.keys import (
        SECRET_NAME_WORDS,
        maybe_secret,
        names_client_credential,
        secret_category,
    )

    names = {match["key"] for text in corpus_texts() for match in _PAIR.finditer(text)}
    names |= {
        "".join(piece) for piece in __import__("itertools").product(("api", "X", "Token", "_"), repeat=3)
    }
    # the services named in two words, and their client credentials' names
    names |= {
        "".join(piece)
        for piece in __import__("itertools").product(
            ("NEW_RELIC", "message-bird", "LinkedIn", "launch_darkly", "private.ai", "asana"),
            ("", "_client", "ClientId", ".app_id", "_ACCESS_ID", "_api_id"),
        )
    }
    taken = [
        name for name in names if secret_category(name) or maybe_secret(name) or names_client_credential(name)
    ]
    assert len(taken) > 100
    for name in taken:
        assert any(word in name.lower() for word in SECRET_NAME_WORDS), name


def test_a_translation_hyperscan_refuses_leaves_its_rule_to_its_keywords(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pattern Hyperscan will not compile costs that rule its scan, not the redaction: it runs wherever its
    keywords occur; when nothing compiles (a processor Hyperscan does not run on) the keyword engine runs."""
    import hyperscan

    rules = _rules("all")
    refused = next(index for index, one in enumerate(rules) if one.category == "email")
    compile_for_real = scan_module._compile

    def refusing(translated, *rest):  # type: ignore[no-untyped-def]
        if refused in translated:
            raise hyperscan.error("refused for the test")
        return compile_for_real(translated, *rest)

    monkeypatch.setattr(scan_module, "_compile", refusing)
    prefilter = Prefilter.of(rules)
    assert prefilter is not None and refused not in prefilter.translated and len(prefilter.translated) > 10
    engine = ScanningRuleSet(rules, prefilter)
    for text in [*corpus_texts()[:600], "mail ann@example.com now", "ann@example.com"]:
        mine: Counter[str] = Counter()
        theirs: Counter[str] = Counter()
        assert engine.apply(text, mine) == reference_apply(rules, text, theirs), text
        assert mine == theirs, text

    def nothing(*_: object) -> None:
        raise hyperscan.error("no processor support for the test")

    monkeypatch.setattr(scan_module, "_compile", nothing)
    assert Prefilter.of(rules) is None


def test_a_name_that_ends_as_a_refused_one_is_refused_by_the_pair_rules() -> None:
    """The promise the pair rules' scan passes over names by (`Rule.key_refused_endings`): whatever comes
    before one of the endings, none of `secret_category`, `maybe_secret` and `names_client_credential` takes
    the name, so `_accept_pair` refuses the pair."""
    from rounds_bot.redact.keys import (
        REFUSED_NAME_ENDINGS,
        maybe_secret,
        names_client_credential,
        secret_category,
    )

    befores = [
        "",
        "token",
        "api_key",
        "Token",
        "TOKEN",
        "db.password",
        "x",
        "SaveToken911",
        "a$b",
        "k\u212a",
        "_",
    ]
    befores += ["secret-", "apiKey9", "AUTH", "pass\u0130", "session."]
    befores += ["asana_client", "NEW_RELIC_APP_ID", "discordClientId", "linked_in."]
    checked = 0
    for ending in REFUSED_NAME_ENDINGS:
        assert re.fullmatch(r"[\w.$@-]+", ending) and ending.isascii(), ending
        for before in befores:
            name = before + ending
            assert secret_category(name) is None and not maybe_secret(name), name
            assert not names_client_credential(name), name
            checked += 1
    assert checked > 1_000


def _ends_with_none(text: str, endings: frozenset[str]) -> bool:
    return not any(text.endswith(ending) for ending in endings)


@pytest.mark.parametrize(
    "endings",
    [
        frozenset(),
        frozenset({".js", ".java", ".go", "s"}),
        frozenset({"ab", "b", "aab"}),
        frozenset({".js", "xError", "aError", ".Error"}),
    ],
)
def test_the_scan_of_a_name_leaves_out_exactly_the_names_with_a_refused_ending(
    endings: frozenset[str],
) -> None:
    """`not_ending_with` against its definition, on every short string of an alphabet and on random longer
    ones: the strings it matches are the strings of the alphabet that end with none of the endings."""
    import itertools
    import random

    from rounds_bot.redact.scan_chars import Chars
    from rounds_bot.redact.translate import not_ending_with

    alphabet = "aAbxjsvgE.rEo-9"
    letters = Chars(frozenset(ord(ch) for ch in alphabet), False)
    pattern = re.compile(not_ending_with(letters, endings, ascii_only=True))
    strings = ["".join(p) for n in range(5) for p in itertools.product(alphabet, repeat=n)]
    chosen = random.Random(3)
    strings += ["".join(chosen.choice(alphabet) for _ in range(chosen.randint(5, 30))) for _ in range(3_000)]
    strings += [chosen.choice(["x", "ab", ""]) + ending for ending in endings for _ in range(3)]
    for text in strings:
        assert bool(pattern.fullmatch(text)) == _ends_with_none(text, endings), (text, endings)


def test_the_gate_of_base64_runs_finds_exactly_the_runs_of_twenty_with_a_capital() -> None:
    """The first of `decode.SCAN_GATES`, written for the scan's speed, against its definition: a run of 20
    base64 characters or more that holds a capital letter."""
    import random

    from rounds_bot.redact import decode

    gate = re.compile(decode.SCAN_GATES["base64 run with a capital"][0])
    runs = re.compile(r"[A-Za-z0-9+/_-]{20,}")
    chosen = random.Random(20)
    pieces = ["a", "b", "Z", "Q", "0", "9", "+", "/", "_", "-", " ", ".", "=", "\u00e9", "\n", "abcdefghij"]
    texts = ["".join(chosen.choice(pieces) for _ in range(chosen.randint(0, 60))) for _ in range(20_000)]
    texts += ["a" * 19 + "B", "B" + "a" * 19, "a" * 10 + "B" + "a" * 9, "a" * 19, "a" * 18 + "B", "x" * 40]
    found = 0
    for text in texts:
        expected = any(any(ch.isupper() for ch in run) for run in runs.findall(text))
        assert bool(gate.search(scan_module.scan_bytes(text).decode("latin-1"))) == expected, text
        found += expected
    assert found > 1_000


@pytest.fixture(autouse=True)
def _scan_text_outside_ascii_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan's database for text outside ASCII, tested here from the first such text (the package
    redacts the first two million characters of it with keywords: `tests/test_redact_fast_paths.py`)."""
    monkeypatch.setattr(engine_module, "OTHER_TEXT_WITH_KEYWORDS", 0)
