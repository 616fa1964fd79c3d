"""Signatures, and the assignments their tallies start with, for tests that need one without a round."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.signature import Signature


def a_signature(sid: str, *, first_seen: str = "2026-11-01T10:00:00+00:00", **fields: Any) -> Signature:
    """A signature with just enough filled in; `fields` override any of its attributes."""
    seen = datetime.fromisoformat(first_seen)
    defaults: dict[str, Any] = {
        "id": sid,
        "service": "api",
        "title": f"title {sid}",
        "representative": ErrorEvent(event_id=f"{sid}-1", timestamp=seen),
        "first_seen": seen,
        "last_seen": seen,
    }
    return Signature(**{**defaults, **fields})


def an_assignment(sid: str = "sig_1", **fields: Any) -> Assignment:
    """The assignment of a new signature with just enough filled in; `fields` override any of its fields."""
    defaults: dict[str, Any] = {
        "signature_id": sid,
        "tier": "new",
        "fingerprint_hash": "h",
        "fingerprint_version": "v",
        "explanation": "",
        "title": "t",
        "normalized_message": "m",
    }
    return Assignment(**{**defaults, **fields})
