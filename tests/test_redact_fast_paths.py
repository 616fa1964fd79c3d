"""The short cuts of the redaction boundary give what the long way gives: ids and short texts the scan clears
(`text.redact_text`), an id the scan alone proves unchanged (`text.unchanged`) and a text of hex digits read
as its one hex run (`decode.hex_runs_hide_nothing`), an id the intake's check looked at moments before
(`Redactor.identity`), an event with
nothing to redact (`Redactor.event`), a record that cannot end with a secret's name (`split.py`), and text
outside ASCII redacted with keywords before the scan's second database is built (`engine.py`). Each is
checked against the straightforward engine (`tests/redact_reference.py`) or the step it stands for, on the
security corpus and on hostile input: ids that look like secrets, all-digit ids that are card numbers, hex
and base64 that decode to secrets, characters outside ASCII and invisible ones, ids of 64 characters and more.
"""

from __future__ import annotations

import base64
import random
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.models import ContextRecord, ErrorEvent
from rounds_bot.redact import Redactor, decode, redact_text, split
from rounds_bot.redact import engine as engine_module
from rounds_bot.redact import event as event_module
from rounds_bot.redact.engine import ScanningRuleSet
from rounds_bot.redact.id_proof import IdProof
from rounds_bot.redact.scan import Prefilter
from rounds_bot.redact.text import Redaction, _rules, unchanged
from tests import security_corpus
from tests.redact_reference import reference_apply, reference_redact
from tests.test_redact_engine import labelled_texts


def hostile_ids() -> list[str]:
    chosen = random.Random(26)
    ids = [chosen.randbytes(n).hex() for n in (8, 16, 32, 64) for _ in range(300)]
    ids += [chosen.randbytes(16).hex().upper() for _ in range(100)]
    ids += [
        "".join(chosen.choice("0123456789") for _ in range(n)) for n in (12, 16, 19, 32) for _ in range(100)
    ]
    ids += [
        "4111111111111111",  # a card number (Luhn, a network's prefix)
        "4111111111111111" + "0" * 16,
        b"password=hunter2hunter2".hex(),
        b"api_key=abcDEF123ghiJKL456 and more".hex(),
        b"token: ghp_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2".hex().upper(),
        base64.b64encode(b"password=hunter2hunter2 and more").decode().rstrip("="),
        base64.urlsafe_b64encode(b"client_secret=s3cr3tV4lue99xyz").decode().rstrip("="),
        "ghp_" + "a1B2c3D4e5" * 4,
        "AKIAIOSFODNN7EXAMPLE",
        "sk-ant-" + "x9Y8z7W6v5" * 3,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
        "ann@example.com",
        "+44 20 7946 0958",
        "10.1.2.3",
        "fe80::1",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "4b1d" + "a" * 38,
        "4b1d" + "0123456789abcdef" * 4,
        "a" * 128,
        "f" * 129,
        "0" * 200,
        "caf\u00e9" + "0" * 28,
        "\u200b" + "ab" * 16,
        "ab" * 8 + "\u202e" + "cd" * 8,
        "to\u212aen=abcDEF123ghiJKL456",
        "",
        "-",
        "password:hunter2hunter2",
    ]
    ids += [planted.secret for planted in security_corpus.corpus()][:400]
    return ids


def test_short_texts_and_ids_the_scan_clears_are_redacted_as_the_reference_does() -> None:
    rules = _rules("all")
    texts = hostile_ids() + [planted.carrier for planted in security_corpus.corpus()]
    texts += security_corpus.KEPT
    for text in texts:
        assert redact_text(text) == reference_redact(rules, text), text


def test_an_id_the_intake_checked_is_made_what_it_would_be_made_unchecked() -> None:
    """`identity` (the intake's check) counts and remembers nothing: same ids, same counts, same memory of
    texts as a boundary that never saw the check."""
    ids = hostile_ids()
    checked, unchecked = Redactor(), Redactor()
    identities = [checked.identity(value) for value in ids]
    expected = [unchecked.identifier(value) for value in ids]
    assert [checked.identifier(value) for value in ids] == expected == identities
    assert checked.counts == unchecked.counts
    assert checked._done == unchecked._done and checked._remembered == unchecked._remembered


def _event(message: str, **fields: object) -> ErrorEvent:
    return ErrorEvent.model_validate(
        {
            "event_id": "4bf92f3577b34da6a3ce929d0e0e4736",
            "timestamp": datetime(2026, 1, 1, tzinfo=UTC),
            "service": "checkout",
            "message": message,
            "stacktrace": 'Traceback:\n  File "/srv/app/token.py", line 3, in load',
            "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
            "span_id": "00f067aa0ba902b7",
            "attributes": {"http.route": "/api/44", "user.email": "ann@example.com", "retries": 3},
            "context": [
                ContextRecord(timestamp=datetime(2026, 1, 1, tzinfo=UTC), severity="INFO", body="ok")
            ],
            **fields,
        }
    )


def _every_field(redactor: Redactor, event: ErrorEvent) -> ErrorEvent:
    """What the boundary made of an event before the short cut: a copy with every field redacted."""
    return event.model_copy(
        update={
            "event_id": redactor.identifier(event.event_id),
            "service": redactor.name(event.service) or "unknown",
            "error_type": redactor.optional(event.error_type, 512),
            "message": redactor.text(event.message, event_module.MESSAGE_CHARS),
            "stacktrace": None
            if event.stacktrace is None
            else redactor.text(event.stacktrace, event_module.STACKTRACE_CHARS),
            "error_code": redactor.optional(event.error_code),
            "severity": redactor.optional(event.severity, 32),
            "trace_id": None if event.trace_id is None else redactor.identifier(event.trace_id),
            "span_id": None if event.span_id is None else redactor.identifier(event.span_id),
            "parent_span_id": None
            if event.parent_span_id is None
            else redactor.identifier(event.parent_span_id),
            "service_version": redactor.optional(event.service_version),
            "environment": redactor.optional(event.environment),
            "attributes": redactor.attributes(event.attributes),
            "source_group_id": None
            if event.source_group_id is None
            else redactor.identifier(event.source_group_id),
            "source_url": redactor.optional(event.source_url, 2_048),
            "context": [
                record.model_copy(
                    update={
                        "severity": redactor.name(record.severity, 32),
                        "body": redactor.text(record.body, 2_000),
                    }
                )
                for record in event.context
            ],
        }
    )


@pytest.mark.parametrize(
    "message, fields",
    [
        ("resolve order1344 failed: coupon not found", {"attributes": {"http.route": "/api/44", "n": 3}}),
        ("resolve order1344 failed: coupon not found", {}),
        ("login failed for ann@example.com password=hunter2hunter2", {}),
        ("ok", {"service": "check  out", "trace_id": "4111111111111111"}),
        ("ok", {"span_id": "a" * 200, "source_url": "https://u:p4ss@h.io/x"}),
        (
            "ok",
            {
                "context": [
                    ContextRecord(timestamp=datetime(2026, 1, 1, tzinfo=UTC), body="token=abcDEF123ghiJKL456")
                ]
            },
        ),
        ("caf\u00e9 \u200bkey", {"error_type": "Key\u202eError"}),
    ],
)
def test_an_event_is_redacted_as_a_copy_with_every_field_redacted(
    message: str, fields: dict[str, object]
) -> None:
    event = _event(message, **fields)
    mine, theirs = Redactor(), Redactor()
    made = mine.event(event)
    expected = _every_field(theirs, event)
    assert made.model_dump() == expected.model_dump()
    assert mine.counts == theirs.counts
    if made.model_dump() == event.model_dump():
        assert made is event  # nothing to redact: the event itself


def _ends_with_name_by_pattern(message: str) -> bool:
    from rounds_bot.redact.keys import secret_category

    found = split._NAME_AT_END.search(message[-80:])
    return found is not None and secret_category(found.group(1)) is not None


def test_a_record_is_taken_to_end_with_a_secrets_name_exactly_as_the_pattern_alone_takes_it() -> None:
    chosen = random.Random(80)
    pieces = ["password", "Pass", "TO\u212aEN", "api", "_key", "token", "x", ".", "-", ":", "=", "=>", " was",
              " is", "'", '"', " ", "\t", "db", "Secret", "9", "\u0130", "é", "word", "session", ")", "!",
              "\n", "\u00b2", "\u0660", ">", "/"]  # fmt: skip
    texts = ["".join(chosen.choice(pieces) for _ in range(chosen.randint(0, 30))) for _ in range(20_000)]
    texts += [planted.carrier for planted in security_corpus.corpus()] + security_corpus.KEPT
    texts += ["x" * n + " password:" for n in range(0, 120, 7)]
    taken = 0
    for text in texts:
        assert split._ends_with_name(text) == _ends_with_name_by_pattern(text), text
        taken += split._ends_with_name(text)
    assert taken > 500


def test_the_name_at_a_records_end_is_read_as_it_was_read_before_it_was_read_possessively() -> None:
    before = re.compile(
        r"""["']?([A-Za-z_][\w.-]{0,60})["']?[ \t]*(?::|=|=>|[ \t](?:was|is|of|for))?[ \t]*\Z"""
    )
    chosen = random.Random(61)
    pieces = [
        "a",
        "Z",
        "_",
        "9",
        ".",
        "-",
        "'",
        '"',
        " ",
        "\t",
        ":",
        "=",
        "=>",
        " was",
        " is",
        "of",
        "é",
        "x" * 30,
    ]
    texts = ["".join(chosen.choice(pieces) for _ in range(chosen.randint(0, 40))) for _ in range(30_000)]
    for text in texts:
        old, new = before.search(text), split._NAME_AT_END.search(text)
        assert (old and (old.span(), old.group(1))) == (new and (new.span(), new.group(1))), text


#: what records' tails are made of: names' characters in runs short and long, what may follow a name, and
#: characters a name cannot hold
NAME_PIECES = ["password", "x", "Z", "_", "9", ".", "-", "'", '"', " ", "\t", ":", "=", "=>", " was", " is",
               " of", "for", "é", "\u0130", "\u212a", "\u0660", ")", "/", "\n", "x" * 30, "a1" * 35,
               "_key"]  # fmt: skip


@given(st.lists(st.sampled_from(NAME_PIECES), max_size=40))
@settings(max_examples=2_000, deadline=None)
def test_the_name_at_a_records_end_is_found_searching_from_its_last_two_runs(pieces: list[str]) -> None:
    """`_where_a_name_may_start`: the search from there finds the match (its span and name) the search of
    the whole tail finds."""
    tail = "".join(pieces)[-80:]
    whole, narrowed = (
        split._NAME_AT_END.search(tail),
        split._NAME_AT_END.search(tail, split._where_a_name_may_start(tail)),
    )
    assert (whole and (whole.span(), whole.group(1))) == (narrowed and (narrowed.span(), narrowed.group(1)))


def test_text_outside_ascii_is_redacted_with_keywords_until_the_second_database_is_worth_building(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no database compiled before
    rules = _rules("all")
    prefilter = Prefilter.of(rules)
    assert prefilter is not None
    engine = ScanningRuleSet(rules, prefilter)
    texts = [text for text in (planted.carrier for planted in security_corpus.corpus()) if not text.isascii()]
    texts += ["caf\u00e9 password=hunter2hunter2 ann@example.com", "TO\u212aEN=abcDEF123ghiJKL456 \u200b"]
    monkeypatch.setattr(engine_module, "OTHER_TEXT_WITH_KEYWORDS", sum(len(text) for text in texts))
    for text in texts:
        mine: Counter[str] = Counter()
        theirs: Counter[str] = Counter()
        assert engine.apply(text, mine) == reference_apply(rules, text, theirs), text
        assert list(mine.items()) == list(theirs.items())
    assert not prefilter.ready(ascii_only=False)  # within the budget: never built
    text = "one more: caf\u00e9 password=hunter2hunter2"
    assert engine.apply(text, Counter()) == reference_apply(rules, text, Counter())
    assert prefilter.ready(ascii_only=False)  # past it: built, and scanned from then on


def _id_like_pieces(text: str) -> list[str]:
    """The id-shaped pieces of a text (what a log line's ids, hashes and numbers look like)."""
    return re.findall(r"[A-Za-z0-9\-_.:/]{8,128}", text)


def test_a_text_the_scan_proves_unchanged_is_what_redaction_and_the_reference_make_of_it(
    shared_data: Path,
) -> None:
    """`text.unchanged` (ids the boundary keeps without redacting them) never says so of a text redaction
    changes or counts anything in: on hostile ids, the security corpus and the labelled data."""
    rules = _rules("all")
    texts = hostile_ids() + [planted.carrier for planted in security_corpus.corpus()]
    texts += [piece for planted in security_corpus.corpus() for piece in _id_like_pieces(planted.carrier)]
    texts += security_corpus.KEPT
    texts += [piece for text in labelled_texts(shared_data) for piece in _id_like_pieces(text)][:40_000]
    proven = 0
    for text in texts:
        if unchanged(text):
            proven += 1
            assert redact_text(text) == Redaction(text, Counter()), text
            assert reference_redact(rules, text) == Redaction(text, Counter()), text
    assert proven > len(texts) // 3  # the short cut is taken, not only claimed


def test_most_trace_and_span_ids_are_proven_unchanged_by_the_scan() -> None:
    chosen = random.Random(16)
    ids = [chosen.randbytes(n).hex() for n in (8, 16) for _ in range(2_000)]
    assert sum(unchanged(value) for value in ids) > 0.95 * len(ids)


@given(st.text(alphabet="0123456789abcdefABCDEF-_.:/xyz@=%\\ \n", max_size=80))
@settings(max_examples=600, deadline=None)
def test_an_id_the_scan_proves_unchanged_is_unchanged_on_any_input(value: str) -> None:
    if unchanged(value):
        assert reference_redact(_rules("all"), value) == Redaction(value, Counter()), value


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_text_the_scan_proves_unchanged_is_unchanged(value: str) -> None:
    if unchanged(value):
        assert reference_redact(_rules("all"), value) == Redaction(value, Counter()), value


def test_ids_are_made_and_counted_the_same_with_and_without_the_scans_proof(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = hostile_ids()
    quick, checked = Redactor(), Redactor()
    made = [quick.identifier(value) for value in ids]
    identities = [checked.identity(value) for value in ids]
    monkeypatch.setattr(IdProof, "kept", lambda self, value: False)
    slow = Redactor()
    assert made == [slow.identifier(value) for value in ids] == identities
    assert [slow.identity(value) for value in ids] == identities
    assert quick.counts == slow.counts


def test_a_text_of_hex_alone_hides_nothing_exactly_when_its_runs_say_so() -> None:
    """`hex_runs_hide_nothing` reads a text of hex digits alone as its one possible run: the same answer as
    looking at every run the pattern finds."""
    chosen = random.Random(32)
    texts = [chosen.randbytes(n).hex() for n in (15, 16, 17, 32, 64) for _ in range(200)]
    texts += [text.upper() for text in texts[:100]] + [text[:-1] for text in texts[:300]]
    texts += [b"password=hunter2hunter2 and more".hex()[:n] for n in range(28, 66)]
    texts += ["0" * n for n in (31, 32, 33, 16_000, 16_001, 16_002)] + ["41" * 8_000, "41" * 8_001, ""]
    texts += [(b"api_key=abcDEF123ghiJKL456".hex() * 400)[:n] for n in (15_998, 16_000, 16_002)]
    for text in texts:
        expected = all(decode._from_hex(run.group(0)) is None for run in decode._HEX.finditer(text))
        assert decode.hex_runs_hide_nothing(text) == expected, text[:80]
    assert not all(decode.hex_runs_hide_nothing(text) for text in texts)


def test_text_outside_ascii_is_scanned_at_once_when_an_earlier_round_built_its_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rules = _rules("all")
    earlier = Prefilter.of(rules)
    assert earlier is not None and not earlier.ready(ascii_only=False)  # not in the cache: not compiled
    earlier._database(ascii_only=False)  # an earlier round found it worth building
    prefilter = Prefilter.of(rules)
    assert prefilter is not None
    engine = ScanningRuleSet(rules, prefilter)
    texts = [text for text in (planted.carrier for planted in security_corpus.corpus()) if not text.isascii()]
    texts += ["café password=hunter2hunter2 ann@example.com", "TOKEN=abcDEF123ghiJKL456 ​"]
    for text in texts:
        mine: Counter[str] = Counter()
        theirs: Counter[str] = Counter()
        assert engine.apply(text, mine) == reference_apply(rules, text, theirs), text
        assert list(mine.items()) == list(theirs.items())
    assert prefilter.ready(ascii_only=False) and engine._other_chars == 0  # no text ran on keywords


class _Forgetful(dict):  # type: ignore[type-arg]
    """A memory that keeps nothing: a boundary with it redacts every name and attribute the long way."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


def _long_way() -> Redactor:
    redactor = Redactor()
    redactor._names = _Forgetful()
    redactor._attributes = _Forgetful()
    return redactor


def _events_of(texts: list[str], secrets: list[str]) -> list[ErrorEvent]:
    """Events whose names and attributes recur (the memories' hits) and hold secrets, personal data and
    credentials, by value and by key (keys that are secrets, too), from the security corpus and the
    labelled data."""
    keys = [
        "service.name",
        "http.route",
        "db.password",
        "user.email",
        "app.stripe_key",
        "client.address",
        "n",
    ]
    keys += [planted.key for planted in security_corpus.corpus() if planted.key][:20] + secrets
    chosen = random.Random(40)
    events = []
    for number in range(3_000):
        pick = chosen.choice
        attributes: dict[str, object] = {pick(keys): pick(texts) for _ in range(chosen.randint(0, 6))}
        attributes[pick(keys)] = pick([3, 2.5, True, -0.0, 0.0, "", "ghp_" + "a1B2c3D4e5" * 4])
        events.append(
            _event(
                pick(texts),
                service=pick(texts[:40]),
                error_type=pick(texts[:40]),
                error_code=pick([None, *texts[:20]]),
                environment=pick(texts[:10]),
                attributes=attributes,
                event_id=str(number),
            )
        )
    return events


def test_names_and_attributes_remembered_are_what_the_long_way_makes_and_counts(
    monkeypatch: pytest.MonkeyPatch, shared_data: Path
) -> None:
    """`name` and `attribute` remember what they made of the texts `_done` remembers; with `_done` emptied
    often (a small `MEMO_CHARS`), events come out, and are counted, exactly as with nothing remembered."""
    corpus = [planted.carrier for planted in security_corpus.corpus()] + security_corpus.KEPT
    texts = [text[:300] for text in list(labelled_texts(shared_data))[:300]] + corpus[:300]
    texts = [text for text in texts if text.strip()]
    events = _events_of(texts, [text for text in corpus if len(text) < 100][:30])
    for memo_chars in (event_module.MEMO_CHARS, 3_000):
        monkeypatch.setattr(event_module, "MEMO_CHARS", memo_chars)
        quick, slow = Redactor(), _long_way()
        for event in events:
            assert quick.event(event).model_dump() == slow.event(event).model_dump()
        assert quick.counts == slow.counts
        assert quick._done == slow._done
        assert quick._forgotten == slow._forgotten and (memo_chars > 3_000 or quick._forgotten > 5)
        assert quick._attributes  # the memory was used


@given(
    st.dictionaries(
        st.sampled_from(["service.name", "db.password", "user.email", "api_key", "client.address", "x"]),
        st.one_of(st.text(max_size=40), st.integers(), st.floats(), st.booleans()),
        max_size=6,
    ),
    st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=4),
)
@settings(max_examples=300, deadline=None)
def test_attributes_remembered_are_redacted_as_the_long_way_redacts_them(
    attributes: dict[str, object], repeats: list[int]
) -> None:
    quick, slow = Redactor(), _long_way()
    for repeat in repeats:
        seen = dict(list(attributes.items())[repeat:]) or attributes
        made, expected = quick.attributes(seen), slow.attributes(seen)  # type: ignore[arg-type]
        assert made == expected and [type(value) for value in made.values()] == [
            type(value) for value in expected.values()
        ]
    assert quick.counts == slow.counts


def test_an_attribute_whose_key_was_forgotten_while_its_value_was_redacted_is_not_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Redacting the value empties `_done` (it is full), so the key's redaction, which counted an email,
    is forgotten: the next time, the long way redacts and counts the key again, and so does the boundary."""
    monkeypatch.setattr(event_module, "MEMO_CHARS", 50)
    key = "ann@example.com"
    seen = [(key, "a" * 60), (key, "b" * 60), (key, "b" * 60)]
    quick, slow = Redactor(), _long_way()
    assert [quick.attribute(*pair) for pair in seen] == [slow.attribute(*pair) for pair in seen]
    assert quick.counts == slow.counts == Counter({"email": 2})


def _printable_strictly(raw: bytes) -> str | None:
    """`decode._printable` as it read bytes before it told UTF-8 without raising an error."""
    if len(raw) < 12:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    return text if printable >= 0.95 * len(text) else None


@given(
    st.one_of(
        st.binary(max_size=64), st.text(max_size=40).map(lambda text: text.encode("utf-8", "surrogatepass"))
    )
)
@settings(max_examples=1_000, deadline=None)
def test_bytes_are_read_as_text_exactly_when_they_are_printable_utf8(raw: bytes) -> None:
    assert decode._printable(raw) == _printable_strictly(raw)


def test_encoded_runs_and_ids_are_read_as_text_exactly_as_a_strict_decoder_reads_them() -> None:
    chosen = random.Random(64)
    raws = [chosen.randbytes(n) for n in (12, 16, 32) for _ in range(3_000)]
    raws += [planted.carrier.encode("utf-8", "surrogatepass") for planted in security_corpus.corpus()]
    raws += ["caf\u00e9 \ud800 ok".encode("utf-8", "surrogatepass"), b"\xed\xa0\x80" * 5]
    assert [decode._printable(raw) for raw in raws] == [_printable_strictly(raw) for raw in raws]
