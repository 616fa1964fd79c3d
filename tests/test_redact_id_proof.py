"""An id's proof with one lean scan (`IdProof.kept`) says what `text.unchanged_shaped` says, for every policy
and every kind of id: hex of every length, digits that are card numbers, ids that hold secrets or decode to
them, ids too long, the security corpus's secrets; and what it remembers stays within its bound."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.redact import id_proof
from rounds_bot.redact.event import _ID_SHAPE
from rounds_bot.redact.id_proof import IdProof
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.text import unchanged_shaped
from tests import security_corpus
from tests.test_redact_fast_paths import hostile_ids

#: the characters an id is kept with (`event._ID_SHAPE`), and a few each rule family starts on
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
