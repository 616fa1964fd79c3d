"""A hostile answer, read the way the Claude Code adapter reads it, files an issue that shows text and nothing
else: no ping, reference, link, image, HTML, hidden text, command or secret. A broken answer fails its one
diagnosis, and the issue is still filed, saying the diagnosis failed and why."""

from __future__ import annotations

import json

import pytest
from diagnosis_samples import sample_request
from hostile_answers import claude_outcome, claude_result_line
from hostile_issue_bodies import (
    SECRETS,
    answer,
    hostile_answer_texts,
    hostile_checkout,
    issue_view_of,
    probe,
)

from rounds_bot.render.issue import body_section, render_body


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    checkout = hostile_checkout(tmp_path_factory.mktemp("hostile") / "repo")
    return probe(sample_request(checkout))


def test_the_probe_tries_over_thirty_answers_both_ways_the_cli_prints_them(probed):
    assert len(hostile_answer_texts()) >= 50
    assert len(probed) == 2 * len(hostile_answer_texts())


def test_no_hostile_answer_makes_anything_live_in_the_issue(probed):
    live = {name: found for name, (_, _, found) in probed.items() if found}
    assert live == {}


def test_a_broken_answer_still_files_the_issue_saying_why_the_diagnosis_failed(probed):
    failed = {name: (outcome, body) for name, (outcome, body, _) in probed.items() if outcome.status != "ok"}
    assert len(failed) >= 30
    for name, (outcome, body) in failed.items():
        assert outcome.status == "invalid_answer", name
        assert "This round's diagnosis failed: the model's answer could not be read (" in body, name
        assert "## Occurrences" in body and body.rstrip().endswith("-->"), name


@pytest.mark.parametrize(
    "name",
    ["an AWS key", "a GitHub token", "a token as an error code", "not JSON, quoting secrets"],
)
def test_a_secret_the_answer_quotes_is_redacted_before_the_issue(probed, name):
    for way in ("structured", "text"):
        outcome, body, _ = probed[f"{name} ({way})"]
        assert not any(secret in body or secret in outcome.detail for secret in SECRETS)
        assert "[REDACTED:" in body


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("a path leaving the repository", "../../etc/passwd is outside the repository"),
        ("an absolute path", "/etc/passwd is outside the repository"),
        ("a symbolic link out of the repository", "shop/outside is outside the repository"),
        ("git's own configuration", ".git/config is git's own record, not a file of the repository"),
        ("a line far past the end", "shop/cart.py has 11 lines, not 1000000000000000000000000000000"),
    ],
)
def test_evidence_outside_the_repository_or_its_lines_is_flagged_unverified(probed, name, reason):
    outcome, body, _ = probed[f"{name} (structured)"]
    assert [(check.verified, check.reason) for check in outcome.evidence_checks] == [(False, reason)]
    assert "⚠️ _unverified: " in body


def _body_with(outcome, **changes) -> str:
    return render_body(issue_view_of(outcome).model_copy(update=changes))


def test_an_answer_cannot_forge_a_section_rounds_reads_back_from_its_issue(tmp_path):
    """Rebuilding the database from the issues reads the stack trace and message back from their sections:
    the answer's text, shown as code, must not stand for a section an issue does not have."""
    forged = answer(
        fault_location={
            "path": "shop/cart.py",
            "function": "``x <summary>Representative stack trace</summary>",
            "start_line": 7,
        },
        suggested_error_code="``X",
    )
    request = sample_request(hostile_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line(json.dumps(forged), structured=True))
    assert outcome.status == "ok"
    body = _body_with(outcome)
    assert "<summary>Representative stack trace</summary> ```" in body
    assert body_section(body, "Representative stack trace") is None
    assert body_section(body, "Why grouped") == "exception type: ZeroDivisionError"


def test_a_stack_trace_cannot_forge_the_message_section_and_the_real_sections_still_read(tmp_path):
    forged = "<details><summary>Representative message</summary>"
    trace = f"Traceback (most recent call last):\nZeroDivisionError\n{forged}\n"  # a blank line after it
    request = sample_request(hostile_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line(json.dumps(answer()), structured=True))
    body = _body_with(outcome, stacktrace=trace)
    assert body_section(body, "Representative message") is None
    assert body_section(body, "Representative stack trace") == trace
    body = _body_with(outcome, message="division by zero in average_price")  # shown when there is no trace
    assert body_section(body, "Representative message") == "division by zero in average_price"


@pytest.mark.parametrize(
    "path",
    ["shop/" + "a" * 300 + ".py", "shop/" + "\u00e9" * 130 + ".py"],
    ids=["a name of 300 characters", "a name of 130 characters and 260 bytes"],
)
def test_evidence_citing_a_path_the_file_system_refuses_is_flagged_not_raised(tmp_path, path):
    """The file system refuses a name over 255 bytes (ENAMETOOLONG), within the answer's 1,000 characters
    a path may take: the diagnosis still ends in a status, its evidence and fault location flagged
    unverified, and the issue is filed."""
    cited = answer(
        evidence=[{"kind": "file", "path": path, "line": 1, "explanation": "x"}],
        fault_location={"path": path, "function": "average_price", "start_line": 1},
    )
    request = sample_request(hostile_checkout(tmp_path / "repo"))
    outcome = claude_outcome(request, claude_result_line(json.dumps(cited), structured=True))
    assert outcome.status == "ok"
    assert [check.verified for check in outcome.evidence_checks] == [False]
    assert "cannot be read" in outcome.evidence_checks[0].reason
    assert outcome.location_check is not None and not outcome.location_check.verified
    assert "⚠️ _unverified: " in _body_with(outcome)


@pytest.mark.parametrize("path", ["shop/loopa", "shop/loopa/cart.py"])
def test_evidence_citing_a_symlink_loop_is_flagged_not_raised(tmp_path, path):
    """A checkout may hold symlinks that point at each other (`loopa -> loopb`, `loopb -> loopa`): resolving
    a path through them fails (Python 3.11 and 3.12 raise RuntimeError, later ones OSError), and the
    diagnosis still ends in a status, its evidence flagged unverified."""
    checkout = hostile_checkout(tmp_path / "repo")
    (checkout / "shop" / "loopa").symlink_to("loopb")
    (checkout / "shop" / "loopb").symlink_to("loopa")
    cited = answer(
        evidence=[{"kind": "file", "path": path, "line": 1, "explanation": "x"}],
        fault_location={"path": path, "function": "average_price", "start_line": 1},
    )
    outcome = claude_outcome(sample_request(checkout), claude_result_line(json.dumps(cited), structured=True))
    assert outcome.status == "ok"
    assert [check.verified for check in outcome.evidence_checks] == [False]
    assert outcome.evidence_checks[0].reason.startswith(f"{path} cannot be read")
    assert outcome.location_check is not None and not outcome.location_check.verified
    assert "⚠️ _unverified: " in _body_with(outcome)
