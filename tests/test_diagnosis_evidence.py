"""Evidence must point at something that exists; what does not is flagged, not dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from diagnosis_samples import good_answer, make_checkout, sample_request

from rounds_bot.diagnosis.evidence import check_evidence
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome, Evidence


@pytest.fixture
def request_(tmp_path: Path):
    return sample_request(make_checkout(tmp_path / "repo"))


def checks_for(request, *evidence: dict) -> list[tuple[bool, str]]:
    diagnosis = Diagnosis.model_validate(good_answer(evidence=list(evidence)))
    return [(c.verified, c.reason) for c in check_evidence(diagnosis, request)]


def test_existing_file_line_is_verified(request_):
    [(ok, _)] = checks_for(request_, {"kind": "file", "path": "shop/cart.py", "line": 7, "explanation": "x"})
    assert ok


def test_line_past_the_end_of_the_file_is_flagged(request_):
    [(ok, reason)] = checks_for(
        request_, {"kind": "file", "path": "shop/cart.py", "line": 99, "explanation": "x"}
    )
    assert not ok and "has 11 lines" in reason


def test_missing_file_and_paths_leaving_the_checkout_are_flagged(request_):
    results = checks_for(
        request_,
        {"kind": "file", "path": "shop/missing.py", "line": 1, "explanation": "x"},
        {"kind": "file", "path": "../../../etc/passwd", "line": 1, "explanation": "x"},
        {"kind": "file", "path": "/etc/passwd", "line": 1, "explanation": "x"},
    )
    assert [ok for ok, _ in results] == [False, False, False]
    assert "does not exist" in results[0][1] and "outside" in results[1][1] and "outside" in results[2][1]


def test_event_ids_must_be_among_the_samples(request_):
    results = checks_for(
        request_,
        {"kind": "event", "event_id": "evt-2", "explanation": "x"},
        {"kind": "event", "event_id": "evt-made-up", "explanation": "x"},
    )
    assert [ok for ok, _ in results] == [True, False]


def test_log_lines_must_appear_in_the_telemetry_even_as_redacted(request_):
    results = checks_for(
        request_,
        {"kind": "log", "log_line": "checkout failed for cart 991: empty cart", "explanation": "x"},
        {"kind": "log", "log_line": "enduser.id=[REDACTED:email]", "explanation": "x"},
        {"kind": "log", "log_line": "a log line nobody ever wrote", "explanation": "x"},
        {"kind": "log", "log_line": "cart", "explanation": "x"},
    )
    assert [ok for ok, _ in results] == [True, False, False, False]


def test_evidence_needs_the_pointer_of_its_kind():
    with pytest.raises(ValueError, match="path and line"):
        Evidence(kind="file", path="a.py", explanation="x")
    with pytest.raises(ValueError, match="event_id"):
        Evidence(kind="event", explanation="x")


def test_outcome_carries_a_diagnosis_exactly_when_ok():
    with pytest.raises(ValueError):
        DiagnosisOutcome(status="ok")
    with pytest.raises(ValueError):
        DiagnosisOutcome(status="timeout", diagnosis=Diagnosis.model_validate(good_answer()))
