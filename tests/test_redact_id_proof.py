"""An id's proof with one lean scan (`IdProof.kept`) says what `text.unchanged_shaped` says, for every policy
and every kind of id: hex of every length, digits that are card numbers, ids that hold secrets or decode to
them, ids too long, the security corpus's secrets; and what it remembers stays within its bound."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.redact import id_proof
from rounds_bot.redact.id_proof import IdProof
from rounds_bot.redact.ids import _ID_SHAPE
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.text import unchanged_shaped
from tests import security_corpus
from tests.test_redact_fast_paths import hostile_ids

#: the characters an id is kept with (`ids._ID_SHAPE`), and a few each rule family starts on
ID_ALPHABET = "0123456789abcdefABCDEFxyzKPS-_.:/"


def id_shaped() -> list[str]:
    """Ids of every kind that have an id's characters alone: what the proof is asked about."""
    chosen = random.Random(7)
    values = hostile_ids()
    values += [planted.secret for planted in security_corpus.corpus()]
    values += [planted.carrier for planted in security_corpus.corpus()]
    values += [chosen.randbytes(n).hex() for n in (1, 15, 16, 17, 20, 24, 48) for _ in range(50)]
    values += ["4111111111111111", "5500005555555559", "378282246310005", "6011111111111117"]
    values += [f"sha256:{chosen.randbytes(16).hex()}", "10.0.0.1", "192.168.1.20:8080", "fe80::1"]
    values += ["sk_live_" + "a1B2c3D4e5" * 3, "xoxb-123456789012-abcDEF", "AKIA" + "A" * 16]
    return [value for value in values if _ID_SHAPE.fullmatch(value)]


@pytest.mark.parametrize("ips", ["all", "public", "off"])
def test_the_lean_proof_says_what_the_scans_proof_says_of_every_kind_of_id(ips: IpPolicy) -> None:
    values = id_shaped()
    proof = IdProof(ips)
    assert [proof.kept(value) for value in values] == [unchanged_shaped(value, ips=ips) for value in values]
    # both verdicts occur: the comparison is not of two constants
    assert 0 < sum(proof.kept(value) for value in values) < len(values)


@given(st.text(alphabet=ID_ALPHABET, max_size=90))
@settings(max_examples=500, deadline=None)
def test_the_lean_proof_says_what_the_scans_proof_says_of_any_id(value: str) -> None:
    assert IdProof().kept(value) == unchanged_shaped(value)


def test_a_proof_remembering_one_report_at_most_still_says_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(id_proof, "REPORTS", 1)
    values = id_shaped()
    proof = IdProof()
    for value in values:
        assert proof.kept(value) == unchanged_shaped(value), value
        assert len(proof._verdicts) <= 1


def test_without_a_scanning_engine_nothing_is_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(id_proof, "rule_set", lambda rules: object())
    assert not IdProof().kept("0" * 32)


def test_the_policies_databases_scan_ids_joined() -> None:
    """The shipped rules are scanned joined (`scan_lines.joinable`): the joined proof is the one in use."""
    for ips in ("all", "public", "off"):
        proof = IdProof(ips)
        assert proof.kept("ab" * 16)  # prepares the proof
        assert proof._hex_gate is not None


@pytest.mark.parametrize("ips", ["all", "public", "off"])
def test_ids_proven_joined_are_what_each_ids_own_proof_says(ips: IpPolicy) -> None:
    """Ids proven many at once (`prove`: joined scans, halved where one reports something) get the answer
    each id's own scan gives, hex ids mixed with card numbers, keywords and the corpus's secrets, in any
    order, so that most joined scans hold one that reports."""
    values = id_shaped()
    values += [random.Random(3).randbytes(16).hex() for _ in range(500)]
    random.Random(11).shuffle(values)
    alone = [IdProof(ips).kept(value) for value in values]
    proof = IdProof(ips)
    proof.prove(values)
    assert set(proof._proven) == set(values) - {""}  # every id answered by the joined proof
    assert [proof.kept(value) for value in values] == alone
    assert [proof.proven(value) for value in values] == [
        kept and value != "" for value, kept in zip(values, alone, strict=True)
    ]
    assert [unchanged_shaped(value, ips=ips) for value in values] == alone
    assert 0 < sum(alone) < len(values)


@given(st.lists(st.text(alphabet=ID_ALPHABET, max_size=70), max_size=80))
@settings(max_examples=200, deadline=None)
def test_any_ids_proven_joined_are_what_each_ids_own_proof_says(values: list[str]) -> None:
    proof = IdProof()
    proof.prove(values)
    assert [proof.kept(value) for value in values] == [unchanged_shaped(value) for value in values]


def test_a_proof_forgets_the_ids_it_proved_before_at_the_next_batch() -> None:
    proof = IdProof()
    proof.prove(["ab" * 16])
    assert proof.proven("ab" * 16)
    proof.prove(["cd" * 16])
    assert not proof.proven("ab" * 16) and proof.proven("cd" * 16)
    assert len(proof._proven) == 1


@pytest.mark.parametrize(
    "expression, joins",
    [
        (rb"(?:^|[^\w])[0-9]{12,}", True),
        (rb"\bkey\b", True),
        (rb"\A[0-9]{12}", False),  # the buffer's start alone
        (rb"[0-9]{12}\z", False),
        (rb"[0-9]{12}\Z", False),
        (rb"(?-m:^)[0-9]{12}", False),  # multiline turned off
        (rb"(?i-m)^key", False),
        (rb"(?^:^key)", False),  # flags reset to their defaults
    ],
)
def test_a_database_is_scanned_joined_only_when_its_patterns_read_a_newline_as_the_buffers_edge(
    expression: bytes, joins: bool
) -> None:
    import hyperscan

    from rounds_bot.redact.scan_lines import Patterns, joinable

    multiline = hyperscan.HS_FLAG_MULTILINE
    assert joinable(Patterns([expression], [0], [multiline], [0])) is joins
    assert not joinable(Patterns([expression], [0], [0], [0]))  # `^` and `$` at the buffer's edges alone


def test_ids_the_boundary_proves_ahead_are_made_and_counted_as_one_at_a_time() -> None:
    """`Redactor.foresee` (what the boundary calls for each batch) changes nothing an event is made into
    or counted as: the ids of the security corpus's events and hostile ids, ahead and one at a time."""
    from datetime import UTC, datetime

    from rounds_bot.models import ErrorEvent
    from rounds_bot.redact import Redactor

    values = id_shaped()
    events = [
        ErrorEvent.model_validate(
            {
                "event_id": value or "x",
                "timestamp": datetime(2026, 1, 1, tzinfo=UTC),
                "service": "checkout",
                "message": "failed",
                "trace_id": values[(n + 1) % len(values)],
                "span_id": values[(n + 2) % len(values)],
                "parent_span_id": values[(n + 3) % len(values)],
                "source_group_id": values[(n + 4) % len(values)] + "!",  # not an id's shape
            }
        )
        for n, value in enumerate(values)
    ]
    ahead, alone = Redactor(), Redactor()
    ahead.foresee(events)
    assert ahead._ids._proven  # the ids were proven ahead
    made = [ahead.event(event).model_dump() for event in events]
    assert made == [alone.event(event).model_dump() for event in events]
    assert ahead.counts == alone.counts and alone.counts["identifier"] > 0


@pytest.mark.parametrize("ips", ["all", "public", "off"])
def test_a_joined_scan_reports_every_number_each_of_its_ids_reports_alone(ips: IpPolicy) -> None:
    """What `joinable` claims of the shipped database, seen on the ids of every kind and the security
    corpus's secrets and carriers of an id's shape: a scan of ids joined by newlines reports at least what
    each id's scan reports (a keyword or gate reported once a scan still is)."""
    proof = IdProof(ips)
    assert proof.kept("ab" * 16)  # prepares the engine
    prefilter = proof._prefilter
    assert prefilter is not None and prefilter.scans_joined()
    values = [value for value in id_shaped() if value]
    chosen = random.Random(5)
    for _ in range(300):
        group = chosen.sample(values, chosen.randint(2, 12))
        joined = prefilter.reported("\n".join(group).encode("ascii"))
        for value in group:
            assert prefilter.reported(value.encode("ascii")) <= joined, (value, group)


def _digit_heavy_ids(chosen: random.Random, count: int) -> list[str]:
    """Hex ids as a trace or span id is spelled, some with a run of a card number's or a national id's
    digits in them (what a joined scan reports at every match), some with a keyword or an upper-case run
    (reported once a scan), most with neither."""
    values = []
    for _ in range(count):
        value = chosen.randbytes(chosen.choice((8, 16))).hex()
        roll = chosen.random()
        if roll < 0.15:  # 11 to 19 digits after an id's separator: the card number's and national id's ends
            digits = "".join(chosen.choice("0123456789") for _ in range(chosen.randint(11, 19)))
            value = chosen.choice(("", "id-", "x:", value[:6] + ".")) + digits + chosen.choice(("", "-ab"))
        elif roll < 0.18:
            value = chosen.choice(("sk_live_", "ghp_", "AKIA", "xoxb-", "eyJ")) + value
        elif roll < 0.21:
            value = value.upper()
        values.append(value)
    return values


@pytest.mark.parametrize("ips", ["all", "public", "off"])
def test_ids_credited_with_a_match_are_the_ones_proven_alone_and_answered_as_each_alone(
    ips: IpPolicy,
) -> None:
    """`prove` credits each match of a joined scan reported at every match (digits of a card number) to the
    id it ends in and scans only those ids alone: ids with digit runs, keywords and upper-case runs among
    plain hex ids, in groups of every size, get the answer each id's own scan gives."""
    chosen = random.Random(23)
    values = _digit_heavy_ids(chosen, 3_000) + [value for value in id_shaped() if value]
    chosen.shuffle(values)
    alone = [IdProof(ips).kept(value) for value in values]
    assert [unchanged_shaped(value, ips=ips) for value in values] == alone
    for size in (3, 7, 32, 1_000, len(values)):
        for start in range(0, len(values), size):
            proof = IdProof(ips)
            part = values[start : start + size]
            proof.prove(part)
            assert [proof.proven(value) for value in part] == alone[start : start + size]
    assert 0 < sum(alone) < len(alone)


def test_a_joined_scan_with_one_card_numbers_digits_scans_only_that_id_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A joined scan of ids that reports only matches reported at every match (a run of a card number's
    digits in one id) is not halved: the id the match ends in is the one scanned alone."""
    chosen = random.Random(4)
    ids = [chosen.randbytes(16).hex() for _ in range(31)] + ["4111111111111111"]
    chosen.shuffle(ids)
    proof = IdProof()
    assert proof.kept("ab" * 16)  # prepares the engine
    prefilter = proof._prefilter
    assert prefilter is not None
    alone: list[bytes] = []
    reported = prefilter.reported
    monkeypatch.setattr(prefilter, "reported", lambda data: alone.append(data) or reported(data))
    proof.prove(ids)
    assert alone == [b"4111111111111111"]
    assert [proof.proven(value) for value in ids] == [unchanged_shaped(value) for value in ids]
    assert not proof.proven("4111111111111111")


def _sixteen_bytes_that_may_print() -> list[bytes]:
    """16 bytes that decode to text, or nearly: printable ASCII, UTF-8 of two to four bytes a character,
    tabs and newlines, and each with one byte that does not print in its place."""
    texts = [
        "password=hunter2",
        "héllo wörld 12",
        "日本語のテ!",
        "a日本語の!!!",
        "\U0001f600\U0001f600abcdefgh",
    ]
    texts += ["key:\tvalue\r\nab12", "\u0085" * 8, "\u00a0" * 8, "abc\x7fdefghijklmno", "é" * 8]
    spelled = [text.encode("utf-8") for text in texts]
    assert all(len(raw) == 16 for raw in spelled)
    for raw in list(spelled):
        for at, byte in (
            (0, 0x00),
            (5, 0x1F),
            (15, 0x7F),
            (7, 0xC0),
            (8, 0xC1),
            (3, 0xF5),
            (9, 0xFF),
            (4, 0x80),
        ):
            spelled.append(raw[:at] + bytes([byte]) + raw[at + 1 :])
    return spelled


def test_ids_of_32_hex_digits_read_in_bulk_hide_what_each_ids_hex_runs_hide() -> None:
    """`hex_ids_hiding` (a buffer of every id's 16 bytes) says what `hex_runs_hide_nothing` says of each:
    random ids, ids that decode to text in ASCII and in UTF-8, and the same with one byte that does not
    print; ids of other lengths go the long way."""
    from rounds_bot.redact.decode import hex_runs_hide_nothing

    chosen = random.Random(16)
    spelled = [raw.hex() for raw in _sixteen_bytes_that_may_print()]
    spelled += [raw.hex().upper() for raw in _sixteen_bytes_that_may_print()]
    spelled += [chosen.randbytes(16).hex() for _ in range(2_000)]
    chosen.shuffle(spelled)
    others = [
        b"password=hunter2hunter2".hex(),
        chosen.randbytes(24).hex(),
        "ab" * 15 + "a",
        "xyz" + "ab" * 16,
    ]
    hiding = id_proof.hex_ids_hiding(spelled, others)
    expected = [value for value in others + spelled if not hex_runs_hide_nothing(value)]
    assert sorted(hiding) == sorted(expected)
    assert len(expected) >= 10  # texts in hex were found, not only random ids let through


@pytest.mark.parametrize("ips", ["all", "public", "off"])
def test_ids_that_spell_text_in_hex_are_proven_joined_as_each_ids_own_proof_says(ips: IpPolicy) -> None:
    """`prove` settles the ids of a joined scan in bulk (`_settled`): ids of 32 hex digits that decode to
    text are still answered as each id's own scan answers, among random trace, span and event ids."""
    chosen = random.Random(21)
    values = [raw.hex() for raw in _sixteen_bytes_that_may_print()]
    values += [chosen.randbytes(n).hex() for n in (8, 16, 16, 16) for _ in range(400)]
    values += ["ab" * 16, ("ab" * 16).upper(), "0" * 32, "x" * 32, "12345678-1234-1234-1234-123456789012"]
    chosen.shuffle(values)
    alone = [IdProof(ips).kept(value) for value in values]
    proof = IdProof(ips)
    proof.prove(values)
    assert [proof.proven(value) for value in values] == alone
    assert 0 < sum(alone) < len(values)
