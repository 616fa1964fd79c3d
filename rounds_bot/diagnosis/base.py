"""The diagnoser port: what the round needs from any model backend."""

from __future__ import annotations

from typing import Protocol

from rounds_bot.diagnosis.model import DiagnosisOutcome, DiagnosisRequest


class Diagnoser(Protocol):
    """A backend that diagnoses one signature.

    `diagnose` never raises for a failed model run: timeouts, limits, API errors and bad answers
    come back as an outcome status with the cost incurred. It raises `DiagnosisError` only when
    the backend cannot be run at all (e.g. the CLI binary is missing).
    """

    #: short, stable name for reports and the ledger, e.g. "claude-code" or "openai-compat"
    name: str

    def estimate_cost(self, request: DiagnosisRequest) -> float:
        """Expected USD cost of diagnosing `request`, computed before any call is made."""
        ...

    def diagnose(self, request: DiagnosisRequest) -> DiagnosisOutcome: ...
