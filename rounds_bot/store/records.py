"""Rows of the event log and of the run history, as typed records (the store alone reads their columns)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, ValidationError

from rounds_bot.diagnosis.model import DiagnosisOutcome
from rounds_bot.models import Frozen


class Logged(Frozen):
    """One fact in the event log."""

    key: str = Field(description="its idempotency key: the same fact is never logged twice")
    kind: str
    signature_id: str | None = None
    run_id: str | None = None
    at: str = Field(description="when it happened, ISO-8601 UTC")
    payload: dict[str, Any] = Field(default_factory=dict)


class RunRecord(Frozen):
    """One round in the run history."""

    id: str
    started_at: str
    finished_at: str | None = None
    source: str | None = None
    status: str | None = None
    plans: dict[str, str] = Field(default_factory=dict, description="signature id -> what the round did")


def logged(row: dict[str, Any]) -> Logged:
    return Logged(
        key=row["idempotency_key"],
        kind=row["kind"],
        signature_id=row["signature_id"],
        run_id=row["run_id"],
        at=row["at"],
        payload=json.loads(row["payload"] or "{}"),
    )


def run_record(row: dict[str, Any]) -> RunRecord:
    stats = json.loads(row.get("stats") or "{}")
    return RunRecord(
        id=row["id"],
        started_at=row["started_at"],
        finished_at=row.get("finished_at"),
        source=row.get("source"),
        status=row.get("status"),
        plans=stats.get("plans", {}),
    )


def run_row(run: RunRecord) -> dict[str, Any]:
    return {
        "id": run.id,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "source": run.source,
        "status": run.status,
        "stats": json.dumps({"plans": run.plans}, sort_keys=True),
    }


class Booking(Frozen):
    """One model call paid for, as the ledger holds it."""

    run_id: str
    signature_id: str
    at: str = Field(description="when it was paid, ISO-8601 UTC")
    usd: float
    model: str = ""
    note: str = ""


def booking(row: dict[str, Any]) -> Booking:
    return Booking(
        run_id=row["run_id"] or "",
        signature_id=row["signature_id"] or "",
        at=row["at"],
        usd=row["usd"] or 0.0,
        model=row["model"] or "",
        note=row["note"] or "",
    )


class DiagnosisRecord(Frozen):
    """One diagnosis attempt, cached per signature and code revision (`cache_key`)."""

    cache_key: str
    signature_id: str
    revision: str
    at: str = Field(description="when it was attempted, ISO-8601 UTC")
    status: str
    trigger: str = ""
    cost_usd: float = 0.0
    outcome: DiagnosisOutcome


def diagnosis_record(row: dict[str, Any]) -> DiagnosisRecord:
    """A stored diagnosis; one whose answer this release refuses (a rule added since it was stored: a path
    with a line break) reads as an invalid answer, not used, rather than stopping every round."""
    try:
        outcome = DiagnosisOutcome.model_validate_json(row["outcome"])
    except ValidationError as exc:
        detail = f"the stored answer breaks a rule of this release ({exc.error_count()} problem(s)); not used"
        outcome = DiagnosisOutcome(status="invalid_answer", detail=detail)
    return DiagnosisRecord(
        cache_key=row["cache_key"],
        signature_id=row["signature_id"],
        revision=row["revision"],
        at=row["at"],
        status=outcome.status if outcome.status == "invalid_answer" else row["status"],
        trigger=row["trigger"] or "",
        cost_usd=row["cost_usd"] or 0.0,
        outcome=outcome,
    )


def diagnosis_row(record: DiagnosisRecord) -> dict[str, Any]:
    return {**record.model_dump(exclude={"outcome"}), "outcome": record.outcome.model_dump_json()}
