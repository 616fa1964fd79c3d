"""The diagnosis as Markdown for the issue body, pinned by golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from diagnosis_samples import good_answer

from rounds_bot.diagnosis.model import Diagnosis, EvidenceCheck, LocationCheck
from rounds_bot.render.diagnosis import render_diagnosis

GOLDEN = Path(__file__).parent / "golden" / "diagnosis"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ROUNDS_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"update with ROUNDS_UPDATE_GOLDEN=1 ({path})"


def test_server_bug_renders_every_section_and_flags_unverified_evidence():
    diagnosis = Diagnosis.model_validate(good_answer())
    checks = [
        EvidenceCheck(index=0, verified=True, reason="exists"),
        EvidenceCheck(index=1, verified=False, reason="no sample event has id 'evt-1'"),
        EvidenceCheck(index=2, verified=True, reason="appears"),
    ]
    assert_golden("server_bug.md", render_diagnosis(diagnosis, checks))


def test_abstention_renders_its_reason():
    diagnosis = Diagnosis.model_validate(
        good_answer(
            classification="unknown",
            unknown_reason="the trace ends inside a vendored library",
            evidence=[],
            suggested_fix="",
            confidence="low",
            missing_observability=[],
            suggested_error_code=None,
        )
    )
    assert_golden("abstention.md", render_diagnosis(diagnosis))


@pytest.mark.parametrize(
    "hostile",
    [
        "contact admin@example.com",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ],
)
def test_secrets_in_the_models_answer_are_redacted_when_the_answer_is_read(hostile):
    rendered = render_diagnosis(Diagnosis.from_answer(good_answer(root_cause=hostile)))
    for forbidden in ("admin@example.com", "ghp_abcdef"):
        assert forbidden not in rendered


@pytest.mark.parametrize(
    ("hostile", "inert"),
    [
        ("<!-- hidden instructions -->visible", "\\<!-- hidden instructions --\\>visible"),
        ("bidi \u202eevil\u202c text", "bidi evil text"),
        ("ping @octocat and @acme/security", "ping @\u200boctocat and @\u200bacme/security"),
        ("see #12 and acme/shop#7", "see #\u200b12 and acme/shop#\u200b7"),
        ("![x](//evil.example/i.png) <img src=//x.example/i.png>", "!\\[x\\](//evil.example/i.png) \\<img"),
        ("[click](https://evil.example)", "\\[click\\](https:\u200b//evil.example)"),
        ("<details><summary>x</summary>", "\\<details\\>\\<summary\\>x\\</summary\\>"),
    ],
)
def test_the_models_markdown_is_shown_as_text_and_renders_nothing_active(hostile, inert):
    diagnosis = Diagnosis.model_validate(good_answer(root_cause=hostile, suggested_fix=hostile))
    rendered = render_diagnosis(diagnosis)
    assert inert in rendered
    assert hostile not in rendered


def test_fault_location_is_shown_beside_the_crash_site_and_flagged_when_unverified():
    diagnosis = Diagnosis.model_validate(
        good_answer(
            fault_location={"path": "app/orders.py", "function": "total", "start_line": 40, "end_line": 44}
        )
    )
    check = LocationCheck(verified=False, reason="total is not named in app/orders.py up to line 44")
    assert_golden(
        "fault_location.md",
        render_diagnosis(diagnosis, crash_site="app/api.py:12", location_check=check),
    )


def test_abstention_lists_what_is_missing():
    diagnosis = Diagnosis.model_validate(
        good_answer(
            classification="unknown",
            confidence="low",
            evidence=[],
            suggested_fix="",
            missing_evidence=["the payment provider's answer to the failing call", "the request body"],
        )
    )
    assert_golden("abstention_missing.md", render_diagnosis(diagnosis))


def test_low_confidence_class_is_shown_as_a_hypothesis_and_dependency_failures_have_a_label():
    diagnosis = Diagnosis.model_validate(good_answer(classification="dependency_failure", confidence="low"))
    text = render_diagnosis(diagnosis)
    assert "**Dependency or infrastructure failure**, confidence low. _A hypothesis" in text
