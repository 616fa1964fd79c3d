"""Evidence must point at something that exists; what does not is flagged, not dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from diagnosis_samples import good_answer, make_checkout, sample_request

from rounds_bot.diagnosis.evidence import check_evidence, check_location
from rounds_bot.diagnosis.lookups import journal
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome, Evidence, LookupAnswer


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


# --------------------------------------------------------------------------- the fault location


def location(request, **changes) -> tuple[bool, str]:
    fault = {"path": "shop/cart.py", "function": "average_price", "start_line": 7, **changes}
    diagnosis = Diagnosis.model_validate(good_answer(fault_location=fault))
    assert diagnosis.fault_location is not None
    check = check_location(diagnosis.fault_location, request.checkout)
    return check.verified, check.reason


@pytest.mark.parametrize("path", [".git/config", "shop/../.git/config", ".GIT/config", ".git"])
def test_git_s_own_files_are_not_files_of_the_revision(request_, path):
    """`.git` holds git's records (its configuration, remotes, hooks), not a file of any commit: git refuses a
    path with a `.git` component in any case (git's read-cache.c, `verify_path`). An answer citing one is
    citing something no revision holds."""
    checkout = request_.checkout
    (checkout / ".git").mkdir()
    (checkout / ".git" / "config").write_text("[core]\n\tbare = false\n", encoding="utf-8")
    (checkout / ".GIT").mkdir(exist_ok=True)  # a case-insensitive file system shows it the same way
    (checkout / ".GIT" / "config").write_text("[core]\n", encoding="utf-8")
    if path == ".git":
        (checkout / ".git").rename(checkout / "gitdir")
        (checkout / ".git").write_text("gitdir: gitdir\n", encoding="utf-8")  # a worktree's `.git` file
    [(ok, reason)] = checks_for(request_, {"kind": "file", "path": path, "line": 1, "explanation": "x"})
    assert (ok, reason) == (False, f"{path} is git's own record, not a file of the repository")
    assert location(request_, path=path, start_line=1) == (False, reason)


def test_fault_location_in_an_existing_function_is_verified(request_):
    assert location(request_) == (True, "shop/cart.py:7 exists and names average_price")
    assert location(request_, function="Cart.average_price()")[0]  # qualified names read as the simple one


def test_fault_location_is_flagged_when_its_file_lines_or_function_are_not_there(request_):
    assert location(request_, path="shop/missing.py") == (
        False,
        "shop/missing.py does not exist at this revision",
    )
    assert location(request_, start_line=7, end_line=99) == (False, "shop/cart.py has 11 lines, not 99")
    verified, reason = location(request_, function="apply_discount")
    assert not verified and reason == "apply_discount is not named in shop/cart.py up to line 7"
    assert (
        location(request_, path="../../etc/passwd", start_line=1)[1]
        == "../../etc/passwd is outside the repository"
    )


def test_a_log_line_returned_by_a_look_up_during_the_diagnosis_is_verified(request_):
    quoted = "2024-05-01T10:00:00+00:00 shop ERROR payment gateway answered 502 for cart 991"
    diagnosis = Diagnosis.model_validate(
        good_answer(evidence=[{"kind": "log", "log_line": quoted, "explanation": "upstream failed"}])
    )
    [before] = check_evidence(diagnosis, request_)
    answered = LookupAnswer(tool="get_logs_around", arguments={"event_id": "evt-1"}, answer=f"x\n{quoted}\ny")
    [after] = check_evidence(diagnosis, request_, [answered])
    assert not before.verified
    assert after.verified and after.reason == "log line was returned by an incident look-up in this diagnosis"


def test_the_look_up_journal_reads_back_what_the_server_recorded_and_skips_a_torn_line(tmp_path):
    path = tmp_path / "lookups.jsonl"
    journal.record(path, "get_logs_around", {"event_id": "evt-1", "minutes_before": 5}, "line one\nline two")
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"tool": "get_tr')  # a run stopped while writing
    [answer] = journal.read(path)
    assert answer.tool == "get_logs_around" and answer.answer == "line one\nline two"
    assert journal.read(tmp_path / "none.jsonl") == []
