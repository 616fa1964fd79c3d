"""The answer's schema: where the fault is, the dependency class, abstention that says what is missing, and
answers stored before these existed still read."""

from __future__ import annotations

import pytest
from diagnosis_samples import good_answer
from pydantic import ValidationError

from rounds_bot.diagnosis.model import Diagnosis, diagnosis_json_schema


def test_an_answer_stored_before_fault_locations_and_missing_evidence_still_reads():
    old = good_answer()  # the answer as the schema had it: no fault_location, no missing_evidence
    diagnosis = Diagnosis.model_validate(old)
    assert diagnosis.fault_location is None and diagnosis.missing_evidence == []
    old_abstention = good_answer(classification="unknown", unknown_reason="trace ends in a vendored library")
    assert Diagnosis.model_validate(old_abstention).abstains


def test_abstaining_needs_what_is_missing_or_why():
    assert Diagnosis.model_validate(
        good_answer(classification="unknown", missing_evidence=["the upstream's answer"])
    ).abstains
    with pytest.raises(ValidationError, match="needs missing_evidence"):
        Diagnosis.model_validate(good_answer(classification="unknown", missing_evidence=["  "]))


def test_dependency_failures_have_a_class_and_low_confidence_is_tentative():
    diagnosis = Diagnosis.model_validate(good_answer(classification="dependency_failure", confidence="low"))
    assert diagnosis.tentative and not diagnosis.abstains
    assert not Diagnosis.model_validate(
        good_answer(classification="unknown", unknown_reason="x", confidence="low")
    ).tentative


def test_the_fault_location_is_in_the_schema_the_cli_is_given():
    schema = diagnosis_json_schema()
    location = schema["properties"]["fault_location"]["anyOf"][0]
    assert set(location["required"]) == {"path", "function", "start_line"}
    assert "dependency_failure" in schema["properties"]["classification"]["enum"]
    assert "$ref" not in str(schema)


def test_a_fault_location_reads_as_a_pointer():
    diagnosis = Diagnosis.model_validate(
        good_answer(fault_location={"path": "a.py", "function": "f", "start_line": 3, "end_line": 5})
    )
    assert diagnosis.fault_location is not None and diagnosis.fault_location.pointer() == "a.py:3-5"


def test_the_fix_editor_is_told_to_start_at_the_fault_location(tmp_path):
    from rounds_bot.diagnosis.prompting import fence
    from rounds_bot.fixing.prompt import FixBrief, fix_prompt

    located = Diagnosis.model_validate(
        good_answer(fault_location={"path": "shop/cart.py", "function": "average_price", "start_line": 7})
    )
    brief = FixBrief(
        signature_id="sig-1",
        service="shop",
        issue_number=4,
        title="ZeroDivisionError: division by zero",
        error_type="ZeroDivisionError",
        total_count=3,
        versions=[],
        message="division by zero",
        stacktrace=None,
        diagnosis=located,
    )
    prompt = fix_prompt(tmp_path, brief, test_command="pytest", protected=[], max_diff_lines=50)
    where = prompt.user.split("places the fault at")[1].split("Read that code first")[0]
    assert fence("shop/cart.py:7", "fault-location") in where  # the model's words: fenced, as data
    assert fence("average_price", "fault-function") in where
    unlocated = brief.model_copy(update={"diagnosis": Diagnosis.model_validate(good_answer())})
    assert (
        "places the fault"
        not in fix_prompt(tmp_path, unlocated, test_command="pytest", protected=[], max_diff_lines=50).user
    )
