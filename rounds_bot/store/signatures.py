"""A `Signature` as a row of the `signatures` table and back: the one place that knows those columns."""

from __future__ import annotations

import json
from typing import Any

from rounds_bot.clock import iso, parse_iso
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent, sharing_fields_set
from rounds_bot.signature import Signature


def to_row(signature: Signature) -> dict[str, Any]:
    """The row for `signature`; sets are stored as sorted JSON lists, models as JSON text."""
    return {
        "id": signature.id,
        "service": signature.service,
        "title": signature.title,
        "error_type": signature.error_type,
        "normalized_message": signature.normalized_message,
        "fingerprint_hash": signature.fingerprint_hash,
        "fingerprint_version": signature.fingerprint_version,
        "first_tier": signature.first_tier,
        "explanation": signature.explanation,
        "representative": signature.representative.model_dump_json(),
        "grouping_state": signature.grouping_state.model_dump_json() if signature.grouping_state else "",
        "first_seen": iso(signature.first_seen),
        "last_seen": iso(signature.last_seen),
        "total_count": signature.total_count,
        "services": json.dumps(sorted(signature.services)),
        "versions": json.dumps(sorted(signature.versions)),
        "environments": json.dumps(sorted(signature.environments)),
        "related": json.dumps(sorted(signature.related)),
        "issue_ref": signature.issue_ref,
        "created_run": signature.created_run,
        "counted_through": iso(signature.counted_through) if signature.counted_through else None,
    }


def from_row(row: dict[str, Any]) -> Signature:
    """The signature of a row; a round reads thousands, each given the same fields (`sharing_fields_set`)."""
    signature = Signature(
        id=row["id"],
        service=row["service"],
        title=row["title"] or "",
        error_type=row["error_type"] or "",
        normalized_message=row["normalized_message"] or "",
        fingerprint_hash=row["fingerprint_hash"] or "",
        fingerprint_version=row["fingerprint_version"] or "",
        first_tier=row["first_tier"] or "",
        explanation=row["explanation"] or "",
        representative=ErrorEvent.model_validate_json(row["representative"]),
        grouping_state=grouping_state(row["grouping_state"]),
        first_seen=parse_iso(row["first_seen"]),
        last_seen=parse_iso(row["last_seen"]),
        total_count=row["total_count"] or 0,
        services=frozenset(_list(row["services"])),
        versions=frozenset(_list(row["versions"])),
        environments=frozenset(_list(row["environments"])),
        related=frozenset(_list(row["related"])),
        issue_ref=row["issue_ref"] or None,
        created_run=row["created_run"] or "",
        counted_through=parse_iso(row["counted_through"]) if row.get("counted_through") else None,
    )
    return sharing_fields_set(signature)


def grouping_state(text: str | None) -> SignatureState | None:
    return SignatureState.model_validate_json(text) if text else None


def _list(text: str | None) -> list[str]:
    values = json.loads(text) if text else []
    return [str(value) for value in values]
