"""One case's answer against its ground truth.

- fault file / function top-1: the answer's fault location names one of the files the real fix changed,
  and (function) the function there the fix changed, by its simple name;
- class: the answer's class is the true one (`unknown` is right exactly where abstaining is);
- evidence verified: the answer's evidence items and fault location that the checks verified, out of all
  (not counted where the sources are missing: nothing could be checked);
- correct, for calibration: the function found for crash cases, the class for the others, the abstention
  for abstain cases; read beside the answer's confidence.
"""

from __future__ import annotations

from pydantic import Field

from rounds_bot.diagnosis.model import Confidence, Diagnosis, DiagnosisOutcome
from rounds_bot.eval.cases import Case
from rounds_bot.models import Frozen


class CaseScore(Frozen):
    file_hit: bool | None = Field(default=None, description="None: the case has no true location")
    function_hit: bool | None = None
    class_hit: bool
    abstained: bool
    confidence: Confidence
    correct: bool
    evidence_verified: int = 0
    evidence_total: int = 0


def score(case: Case, outcome: DiagnosisOutcome, *, sources: bool) -> CaseScore | None:
    """None when there is no answer to score (a failed run)."""
    diagnosis = outcome.diagnosis
    if diagnosis is None:
        return None
    file_hit, function_hit = _location_hits(case, diagnosis)
    class_hit = diagnosis.classification == case.truth.classification
    correct = _correct(case, diagnosis, function_hit, class_hit)
    verified, total = _evidence(outcome) if sources else (0, 0)
    return CaseScore(
        file_hit=file_hit,
        function_hit=function_hit,
        class_hit=class_hit,
        abstained=diagnosis.abstains,
        confidence=diagnosis.confidence,
        correct=correct,
        evidence_verified=verified,
        evidence_total=total,
    )


def simple_name(function: str) -> str:
    head = function.strip().split("(")[0].replace("::", ".").replace("#", ".")
    return head.rsplit(".", 1)[-1].strip()


def _location_hits(case: Case, diagnosis: Diagnosis) -> tuple[bool | None, bool | None]:
    if not case.truth.faults:
        return None, None
    located = diagnosis.fault_location
    if located is None:
        return False, False
    path = located.path.strip().removeprefix("./")
    in_file = [fault for fault in case.truth.faults if fault.path == path]
    name = simple_name(located.function)
    return bool(in_file), any(simple_name(fault.function) == name for fault in in_file)


def _correct(case: Case, diagnosis: Diagnosis, function_hit: bool | None, class_hit: bool) -> bool:
    if case.truth.abstain:
        return diagnosis.abstains
    if case.kind == "crash" and function_hit is not None:
        return bool(function_hit) and not diagnosis.abstains
    return class_hit


def _evidence(outcome: DiagnosisOutcome) -> tuple[int, int]:
    checks = [check.verified for check in outcome.evidence_checks]
    if outcome.location_check is not None:
        checks.append(outcome.location_check.verified)
    return sum(checks), len(checks)
