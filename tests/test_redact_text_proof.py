"""A batch of texts scanned at once redacts each text as `redact_into` redacts it alone
(`redact/text_proof.py`, `redact/scan_joined.py`).

What is pinned: the joined scan credits each text with every keyword, gate and end the scan of the whole text
alone reports (a report more is harmless: a rule then searches and finds nothing; one less would be a secret
missed), on short texts, round-shaped traces (frames remembered or not), the security corpus, the labelled
data and texts with secrets across and beside line breaks; and a text redacted from a batch's proof is the
text, and counts what, `redact_into` makes and counts of it, kept at once or redacted from the joined scan."""

from __future__ import annotations

import base64
import random
import re
from collections import Counter
from pathlib import Path

import hyperscan
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.redact import decode, text_proof
from rounds_bot.redact import scan as scan_module
from rounds_bot.redact.engine import forget_remembered_lines
from rounds_bot.redact.scan import Prefilter
from rounds_bot.redact.scan_joined import JoinedScan
from rounds_bot.redact.text import redact_into
from rounds_bot.redact.text_proof import TextProof
from tests.test_redact_engine import FRAGMENTS, corpus_texts, encoded_texts, labelled_texts
from tests.test_redact_lines import PIECES, assert_covers, prefilter, traces, whole_scan


def batch_texts(seed: int = 11) -> list[str]:
    """A round's texts, shuffled: messages with values (now and then a secret), round-shaped traces (each
    bug's frames seen many times, Go's never twice), the corpus's texts alone and inside traces."""
    rng = random.Random(seed)
    messages = [
        f"resolve order{n} {rng.randint(10**6, 10**7)} failed: {rng.choice(['coupon', 'user'])} not found"
        + (f" {rng.choice(PIECES + FRAGMENTS)}" if rng.random() < 0.2 else "")
        for n in range(400)
    ]
    corpus = corpus_texts()
    framed = []
    for text in rng.sample(corpus, 150):
        trace = next(traces(1, seed=rng.randrange(10**6)))
        first, _, rest = trace.partition("\n")
        framed += [f"{first} {text}\n{rest}", f"{trace}\n{text}", f"{first}\n{text}\n{rest}"]
    texts = messages + list(traces(900)) + corpus + framed + encoded_texts()
    rng.shuffle(texts)
    return texts


def assert_joined_covers(found: Prefilter, texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`scan_many` of each batch of the ASCII texts covers each text's whole scan, twice over (frames are
    remembered from their second sight)."""
    plain = [text for text in texts if text.isascii()]
    for _ in range(2):
        for start in range(0, len(plain), 97):
            batch = plain[start : start + 97]
            joined = found.scan_many(batch)
            assert joined is not None
            for text, scan in zip(batch, joined, strict=True):
                assert_covers(scan, whole_scan(found, text, monkeypatch), text)


def assert_redacted_alike(texts: list[str], size: int = 64) -> tuple[int, int]:
    """Each text redacted from its batch's proof is what `redact_into` makes of it alone, with the same
    counts; returns how many were kept at once and how many redacted from the joined scan."""
    proof = TextProof()
    kept = scanned = 0
    for start in range(0, len(texts), size):
        batch = texts[start : start + size]
        proof.prove(batch)
        kept += len(proof._kept)
        scanned += len(proof._scans)
        for text in batch:
            ahead: Counter[str] = Counter()
            alone: Counter[str] = Counter()
            assert proof.redact_into(text, ahead) == redact_into(text, alone), text
            assert ahead == alone, text
    return kept, scanned


def test_a_joined_scan_reports_what_each_texts_own_scan_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_joined_covers(prefilter(), batch_texts(), monkeypatch)


def test_a_joined_scan_reports_what_each_labelled_texts_own_scan_reports(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    labelled = list(labelled_texts(shared_data))
    assert len(labelled) > 100
    assert_joined_covers(prefilter(), labelled, monkeypatch)


def test_texts_redacted_from_a_batchs_proof_are_what_redact_into_makes_of_each() -> None:
    kept, scanned = assert_redacted_alike(batch_texts())
    assert kept > 500 and scanned > 200  # both ways are taken


def test_the_labelled_texts_redacted_from_a_batchs_proof_are_what_redact_into_makes(
    shared_data: Path,
) -> None:
    kept, scanned = assert_redacted_alike(list(labelled_texts(shared_data)))
    assert kept and scanned


@given(
    st.lists(
        st.lists(
            st.sampled_from(PIECES + FRAGMENTS + ("\n", " ", "\n\n", "x" * 400, "é", "\\", "%41")), max_size=6
        ),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=200, deadline=None)
def test_any_texts_redacted_from_a_batchs_proof_are_what_redact_into_makes(pieces: list[list[str]]) -> None:
    """Secrets, PEM blocks, `key:` with its value below, encoded runs and phrases at the edges of texts
    joined in one scan, and of their lines."""
    assert_redacted_alike(["".join(each) for each in pieces])


def test_a_text_the_scan_finds_nothing_in_is_kept_as_the_scans_own_verdict_keeps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verdict on the texts a joined scan finds nothing in (most), told once a batch, is the one the
    engine gives a scan of each: with `NOTHING` made a scan like any other, the same texts are kept and the
    same scans remembered."""
    texts = batch_texts(seed=5)

    def proved() -> tuple[set[str], dict[str, object]]:
        forget_remembered_lines()  # each pass reads the traces' frames as the first did
        proof = TextProof()
        kept: set[str] = set()
        scans: dict[str, object] = {}
        for start in range(0, len(texts), 64):
            proof.prove(texts[start : start + 64])
            kept |= proof._kept
            scans |= {text: (scan.keywords, scan.ends, scan.gates) for text, scan in proof._scans.items()}
        return kept, scans

    told_once = proved()
    monkeypatch.setattr(text_proof, "NOTHING", scan_module.Scan())  # no scan is that object: each is asked
    assert proved() == told_once
    assert len(told_once[0]) > 500 and told_once[1]


def test_what_a_batch_holds_that_redaction_changes_or_looks_at_is_not_kept_at_once() -> None:
    hidden = "order 12 failed\u200b"  # sanitised
    control = "order 12 failed\x07"  # sanitised, and ASCII
    escaped = "order 12 failed \\u0041"
    percent = "order 12 failed 100%"
    email = "order 12 failed for ann@example.com"
    plain = "order 12 failed: coupon not found"
    proof = TextProof()
    proof.prove([hidden, control, escaped, percent, email, plain])
    assert [proof.kept(text) for text in (hidden, control, escaped, percent, email)] == [False] * 5
    assert proof.kept(plain)
    counts: Counter[str] = Counter()
    assert proof.redact_into(control, counts) == "order 12 failed" and not counts
    assert proof.redact_into(email, counts) == "order 12 failed for [REDACTED:email]"
    assert counts == Counter({"email": 1})


def test_a_proof_forgets_its_batch_at_the_next_and_redacts_any_other_text_as_ever() -> None:
    proof = TextProof()
    proof.prove(["order 12 failed"])
    assert proof.kept("order 12 failed")
    proof.prove(["order 13 failed"])
    assert not proof.kept("order 12 failed") and proof.kept("order 13 failed")
    counts: Counter[str] = Counter()
    assert proof.redact_into("mail ann@example.com", counts) == "mail [REDACTED:email]"
    assert counts == Counter({"email": 1})


def test_a_raw_text_redacted_from_the_proof_is_forgotten_by_it_and_a_kept_one_stays_proven() -> None:
    """The raw text waiting in a batch is not held past its redaction; a text kept is its own redaction
    and is asked again at another cap (an error code is a name and an attribute): still kept at once."""
    proof = TextProof()
    proof.prove(["CHE-01344", "mail ann@example.com"])
    assert proof.kept("CHE-01344") and "mail ann@example.com" in proof._scans
    counts: Counter[str] = Counter()
    assert proof.redact_into("CHE-01344", counts) == "CHE-01344"
    assert proof.redact_into("mail ann@example.com", counts) == "mail [REDACTED:email]"
    assert not proof._scans and proof.kept("CHE-01344")
    assert proof.redact_into("CHE-01344", counts) == "CHE-01344" == redact_into("CHE-01344", Counter())
    assert counts == Counter({"email": 1})
    proof.prove([])
    assert not proof.kept("CHE-01344")


def test_batches_larger_than_one_joined_scan_are_proved_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_proof, "JOINED", 7)
    kept, scanned = assert_redacted_alike(batch_texts()[:400], size=100)
    assert kept and scanned


def test_without_a_joined_scan_nothing_is_proved_and_each_text_is_redacted_as_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Prefilter, "scan_many", lambda self, texts: None)
    proof = TextProof()
    proof.prove(["order 12 failed", "mail ann@example.com"])
    assert not proof._kept and not proof._scans
    assert proof.redact_into("mail ann@example.com", Counter()) == "mail [REDACTED:email]"


def test_what_the_database_reports_once_a_scan_the_joined_scan_reads_again_at_every_match() -> None:
    """A pattern reported once a scan would be credited to the first text it matches in alone: those are
    the keywords, the gates and the rules searched whole (an unbounded match), which the joined scan reads
    again in a database that reports every match when the big one reports one of them."""
    found = prefilter()
    made = scan_module._patterns(found._scanned, found._keyword_ids, found._gate_ids_by_name(), True)
    once = {
        number
        for number, flags in zip(made.ids, made.flags, strict=True)
        if flags & hyperscan.HS_FLAG_SINGLEMATCH
    }
    whole = {index for index, how in found._scanned.items() if how.widest is None}
    assert whole and once == whole | set(found._keyword_ids.values()) | set(found._gate_ids)
    joined = found.joined()
    assert isinstance(joined, JoinedScan) and len(joined._singles) == 3  # keywords, gates, rules
    assert set().union(*(ids for _, ids in joined._singles)) == once
    # texts each holding such a match, joined: each is credited with it
    texts = [
        "Authorization: Bearer abcDEF123ghiJKL456",
        "Authorization: Bearer xyzXYZ987wvuTSR654",
        "id " + "ab12" * 10,
        "id " + "cd34" * 10,
    ]
    alone = [found.scan(text) for text in texts]
    for scan, each in zip(found.scan_many(texts) or [], alone, strict=True):
        assert (each.ends or each.gates) and set(each.ends) <= set(scan.ends) and each.gates <= scan.gates


RUN_ALPHABET = "aZ09+/_-.: \nAF"


@given(st.text(alphabet=RUN_ALPHABET, max_size=80))
@settings(max_examples=400, deadline=None)
def test_a_gates_joined_form_matches_the_texts_its_form_matches(text: str) -> None:
    for name, form in decode.JOINED_GATES.items():
        source = decode.SCAN_GATES[name][0]
        assert (re.search(form, text, re.MULTILINE) is None) == (re.search(source, text) is None), name


def test_a_joined_scan_reads_a_long_run_once_not_at_every_character() -> None:
    """A 16 KB hex or base64 blob credits its text with a few matches, not thousands."""
    chosen = random.Random(4)
    blobs = [chosen.randbytes(8_000).hex(), base64.b64encode(chosen.randbytes(12_000)).decode()]
    joined = prefilter().joined()
    assert joined is not None
    for hits in joined.hits(["order 12 failed", *blobs]):
        assert len(hits) < 40
    assert_redacted_alike(["order 12 failed", *blobs])


def test_a_text_longer_than_a_joined_scan_takes_is_scanned_alone_and_redacted_as_ever() -> None:
    """A long text dense with matches (a dump of numbers) would pay more a match credited from a joined
    scan than its own scan costs: it is left to its own scan (`JOINED_CHARS`)."""
    numbers = " ".join(str(4_000_000 + n) for n in range(text_proof.JOINED_CHARS // 8 + 1))
    short = "order 12 failed: coupon not found"
    assert len(numbers) > text_proof.JOINED_CHARS
    proof = TextProof()
    proof.prove([numbers, short])
    assert proof.kept(short) and not proof.kept(numbers) and numbers not in proof._scans
    alone: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    assert proof.redact_into(numbers, counts) == redact_into(numbers, alone)
    assert counts == alone


#: what a text of encoded runs is made of: runs that decode to a secret, to plain text, to bytes that are no
#: text, runs of hex (that turn the hex pass on), names of Java exceptions (a run with capitals that decodes
#: to nothing), runs beside `=` (which a run may not follow), and what stands between runs
RUN_PIECES = (
    base64.b64encode(b"password=hunter2hunter2 and more").decode(),
    base64.b64encode(b"just some plain words, nothing secret here").decode(),
    base64.urlsafe_b64encode(random.Random(3).randbytes(30)).decode(),
    base64.b64encode(random.Random(4).randbytes(48)).decode(),
    b"api_key=abcDEF123ghiJKL456".hex(),
    random.Random(5).randbytes(16).hex(),
    "IllegalArgumentException",
    "java.lang.NullPointerException: ",
    "\tat com.shop.shipping.tax.ApplyToken60512.run(ApplyToken60512.java:352)",
    "ValidateInvoice45310",
    "12345678901234567890",
    "QUJD" * 10,
    "key=",
    "==",
    "=",
    " ",
    "\n",
    "-",
    "é",
    "x" * 300,
)


def java_traces(count: int, seed: int = 8, runs: float = 0.3) -> list[str]:
    """Java traces as a round reads them: an exception's name and a message of values (with a piece of
    `RUN_PIECES` at the rate `runs`), then frames."""
    rng = random.Random(seed)
    frames = [f"\tat com.shop.{rng.choice(['cart', 'tax'])}.Sync{n}.run(Sync{n}.java:{n})" for n in range(40)]
    return [
        f"java.lang.{rng.choice(['IllegalArgumentException', 'IllegalStateException'])}: order{n} "
        f"{rng.randint(10**5, 10**7)} failed"
        + (f" {rng.choice(RUN_PIECES)}" if rng.random() < runs else "")
        + "\n"
        + "\n".join(rng.sample(frames, 12))
        for n in range(count)
    ]


def test_texts_of_encoded_runs_that_decode_to_nothing_are_kept_at_once_as_redact_into_keeps_them() -> None:
    """Most Java traces hold a run with capitals (the exception's name) and no rule: kept at once when no
    run decodes to text, redacted as ever (from their scan) when one does; each as `redact_into` alone."""
    texts = java_traces(600) + [f"x {one} y {two}" for one in RUN_PIECES for two in RUN_PIECES]
    kept, scanned = assert_redacted_alike(texts, size=97)
    assert kept > 400 and scanned
    proof = TextProof()
    proof.prove(java_traces(50, runs=0))
    assert all(map(proof.kept, java_traces(50, runs=0)))


@given(st.lists(st.lists(st.sampled_from(RUN_PIECES), max_size=8), min_size=1, max_size=16))
@settings(max_examples=300, deadline=None)
def test_any_texts_of_encoded_runs_redacted_from_a_batchs_proof_are_what_redact_into_makes(
    pieces: list[list[str]],
) -> None:
    """Runs at the edges of texts joined in one read, beside `=` and newlines, long and short, hex, base64
    of secrets and of plain text, with a character outside ASCII now and then (not proven: as ever)."""
    assert_redacted_alike(["".join(each) for each in pieces], size=7)


@given(st.lists(st.text(alphabet="aZ09+/_-=:. \nAFé", max_size=60), min_size=1, max_size=8))
@settings(max_examples=300, deadline=None)
def test_the_runs_to_judge_of_texts_joined_are_those_of_each_text_alone(texts: list[str]) -> None:
    """A run holds no newline: read joined by newlines, each text has the runs it has alone, where it has
    them; and a text without any is one the decoding step gives back judging nothing."""
    judged: list[str] = []

    def judge(view: str) -> tuple[str, list[str]]:
        judged.append(view)
        return view, ["judged"]

    joined = decode.runs_to_judge("\n".join(texts))
    offset, alone = 0, []
    for text in texts:
        own = decode.runs_to_judge(text)
        alone += [offset + start for start in own]
        offset += len(text) + 1
        if not own:  # nothing judged, the text given back (no escape in this alphabet)
            assert decode.rejudge(text, judge) == (text, []) and not judged
    assert joined == alone
