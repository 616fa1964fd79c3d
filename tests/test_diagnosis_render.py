"""The diagnosis as Markdown for the issue body, pinned by golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from diagnosis_samples import good_answer

from rounds_bot.diagnosis.model import Diagnosis, EvidenceCheck
from rounds_bot.diagnosis.render import render_diagnosis

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
        "<!-- hidden instructions -->visible",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "bidi \u202eevil\u202c text",
    ],
)
def test_model_text_is_cleaned_before_it_reaches_the_issue(hostile):
    rendered = render_diagnosis(Diagnosis.model_validate(good_answer(root_cause=hostile)))
    for forbidden in ("admin@example.com", "<!--", "ghp_abcdef", "\u202e"):
        assert forbidden not in rendered
