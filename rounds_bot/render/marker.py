"""The hidden, versioned marker every issue carries.

GitHub is the record of facts: the marker holds the signature id and the minimal state needed to rebuild the
signature database from the issues alone. It is an HTML comment, invisible in the rendered issue:

    <!-- rounds:marker v1 {"signature_id": "...", ...} -->
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import Field, ValidationError

from rounds_bot.models import Frozen

MARKER_VERSION = 1
_MARKER = re.compile(r"<!-- rounds:marker v(?P<version>\d+) (?P<state>\{.*?\}) -->", re.DOTALL)


class MarkedSpend(Frozen):
    """One booked model call: the monthly budget survives a lost database."""

    at: str
    usd: float
    model: str = ""
    note: str = ""


class MarkedDiagnosis(Frozen):
    """The latest good diagnosis, so a rebuilt database neither pays for it again nor drops it from the
    issue body. `answer` is the model's answer as JSON, already shown (escaped) in the body."""

    cache_key: str
    revision: str
    at: str
    trigger: str = ""
    answer: dict[str, Any] = Field(default_factory=dict)


class MarkerMemory(Frozen):
    """What the marker remembers of a signature's diagnoses and the money spent on them."""

    diagnosis: MarkedDiagnosis | None = None
    spend: list[MarkedSpend] = Field(default_factory=list)


class MarkerState(Frozen):
    """Everything `rounds db rebuild` needs for a signature that the rest of the issue does not carry.

    Fields are only ever added, with defaults, so older markers still read; a change that cannot be read that
    way bumps MARKER_VERSION.
    """

    signature_id: str
    service: str = "unknown"
    fingerprint_hash: str = ""
    fingerprint_version: str = ""
    first_seen: str = ""
    last_seen: str = ""
    total_count: int = 0
    closed: bool = False
    grouping_state: dict[str, Any] = Field(default_factory=dict)
    title: str = ""
    error_type: str = ""
    normalized_message: str = ""
    first_tier: str = ""
    services: list[str] = Field(default_factory=list)
    versions: list[str] = Field(default_factory=list)
    environments: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    diagnosis: MarkedDiagnosis | None = None
    spend: list[MarkedSpend] = Field(default_factory=list)

    @property
    def memory(self) -> MarkerMemory:
        return MarkerMemory(diagnosis=self.diagnosis, spend=self.spend)


def write_marker(state: MarkerState) -> str:
    payload = json.dumps(state.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    # "--" cannot appear inside an HTML comment; JSON never needs it unescaped
    payload = payload.replace("--", "-\\u002d")
    return f"<!-- rounds:marker v{MARKER_VERSION} {payload} -->"


def read_marker(body: str) -> MarkerState | None:
    """The marker in an issue body, or None when it is absent, garbled or from an unknown version."""
    # The real marker is the body's last: untrusted text rendered above it (a stack trace, a message) may
    # carry a look-alike, which must not decide whose issue this is.
    text = body or ""
    start = text.rfind("<!-- rounds:marker v")
    match = _MARKER.match(text, start) if start >= 0 else None
    if not match or int(match["version"]) > MARKER_VERSION:
        return None
    try:
        return MarkerState.model_validate(json.loads(match["state"]))
    except (ValueError, ValidationError):
        return None
