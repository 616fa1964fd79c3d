"""The hidden, versioned marker every issue carries.

GitHub is the record of facts: the marker holds the signature id and the minimal state needed to rebuild the
signature database from the issues alone. It is an HTML comment, invisible in the rendered issue:

    <!-- rounds:marker v1 {"signature_id": "...", ...} -->

Besides the signature it remembers what the event log alone would otherwise know: the latest good diagnosis
and the money paid for it, the fix pull requests (`fixes`, at most MAX_MARKED_FIXES, newest last) with their
merge, release and evaluation, how many fix attempts failed or were left to a person, an active
`/rounds ignore` (`mute`) and the signature's cascade links (`cascade`: the signatures it was caused by and
causes, with their trace counts, as the store keeps them). Those keys are left out while empty, so a marker
without them is byte for byte what earlier versions wrote; every key has a default, so earlier markers still
read. Keys this version does not know are ignored rather than refused, so a marker written by a later rounds
still names its signature.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from rounds_bot.models import Frozen

MARKER_VERSION = 1
#: the newest fix pull requests a marker remembers (older ones stay in the event log, not in the marker)
MAX_MARKED_FIXES = 5
#: what one remembered fix keeps of its files, versions and regression reason
MAX_MARKED_FILES = 20
MAX_MARKED_VERSIONS = 30
MAX_MARKED_REASON_CHARS = 300
#: the cascade links a marker remembers each way, those with the most traces (the issue body names them all)
MAX_MARKED_LINKS = 20
_MARKER = re.compile(r"<!-- rounds:marker v(?P<version>\d+) (?P<state>\{.*?\}) -->", re.DOTALL)
#: `_MARKER` up to its state's opening brace, and what ends it: the state runs to the first `} -->` after
#: that brace, as `_MARKER`'s lazy `.*?` takes it (found by `str.find`: the lazy pattern tries to end the
#: match at every character of a marker's state, a thousand and more, on every draft a round writes)
_MARKER_HEAD = re.compile(r"<!-- rounds:marker v(?P<version>\d+) (?=\{)")
_MARKER_END = "} -->"


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


class MarkedFix(Frozen):
    """One fix pull request and what became of it (`lifecycle.FixRecord` without what the issue gives back:
    the signature, the issue and the pull request's address). Written without its empty or default fields."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    pr: int
    branch: str = ""
    status: Literal["proposed", "merged", "resolved", "regressed", "abandoned"] = "proposed"
    proposed_at: str = ""
    updated_at: str = Field(default="", description="the last push, when after the first")
    revisions: int = 1
    files: list[str] = Field(default_factory=list)
    merged_at: str | None = None
    versions_before: list[str] = Field(default_factory=list)
    rate_before: float | None = None
    before_from: str | None = None
    before_occurrences: int | None = None
    released_version: str | None = None
    released_at: str | None = None
    rate_after: float | None = None
    rate_after_release: float | None = None
    resolved_at: str | None = None
    judged_from: Literal["release", "merge"] | None = None
    regressed_at: str | None = None
    regression: str | None = None
    closed_at: str | None = None


class MarkedMute(Frozen):
    """An active `/rounds ignore`: who asked, since when, and until when (or for how many occurrences)."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    by: str
    since: str
    until: str | None = None
    until_occurrences: int | None = None
    count_at: int = 0
    key: str = Field(default="", description="the idempotency key of the command's event, e.g. ignore:<id>")


class MarkedCascade(Frozen):
    """The signature's cascade links (`store/cascades.py`): the signatures whose errors came first in the
    same traces (`caused_by`) and those that came after (`causes`), each with its number of traces. Written
    without an empty side."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    caused_by: dict[str, int] = Field(default_factory=dict)
    causes: dict[str, int] = Field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.caused_by or self.causes)


class MarkerMemory(Frozen):
    """What the marker remembers beyond the signature: diagnoses, spending, fixes, an ignore and the
    cascade links."""

    diagnosis: MarkedDiagnosis | None = None
    spend: list[MarkedSpend] = Field(default_factory=list)
    fixes: list[MarkedFix] = Field(default_factory=list)
    failed_fixes: int = 0
    offered_fixes: int = 0
    mute: MarkedMute | None = None
    cascade: MarkedCascade | None = None

    def lifecycle(self) -> dict[str, Any]:
        """The fix and ignore part, as the marker writes it (compared to tell whether a marker is stale)."""
        return _lifecycle_json(self.fixes, self.failed_fixes, self.offered_fixes, self.mute)


class MarkerState(Frozen):
    """Everything `rounds db rebuild` needs for a signature that the rest of the issue does not carry.

    Fields are only ever added, with defaults, so older markers still read; a change that cannot be read that
    way bumps MARKER_VERSION. Unknown keys (from a later rounds) are ignored.
    """

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

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
    fixes: list[MarkedFix] = Field(default_factory=list)
    failed_fixes: int = 0
    offered_fixes: int = 0
    mute: MarkedMute | None = None
    cascade: MarkedCascade | None = None

    @property
    def memory(self) -> MarkerMemory:
        return MarkerMemory(
            diagnosis=self.diagnosis,
            spend=self.spend,
            fixes=self.fixes,
            failed_fixes=self.failed_fixes,
            offered_fixes=self.offered_fixes,
            mute=self.mute,
            cascade=self.cascade,
        )

    def remembering(self, memory: MarkerMemory) -> MarkerState:
        """This marker with `memory`'s fixes, fix attempts and ignore instead of its own."""
        if (memory.fixes, memory.failed_fixes, memory.offered_fixes, memory.mute) == (
            self.fixes,
            self.failed_fixes,
            self.offered_fixes,
            self.mute,
        ):
            return self  # the same already (most markers remember none): frozen, so shared as it is
        return self.model_copy(
            update={
                "fixes": memory.fixes,
                "failed_fixes": memory.failed_fixes,
                "offered_fixes": memory.offered_fixes,
                "mute": memory.mute,
            }
        )


def _lifecycle_json(
    fixes: list[MarkedFix], failed: int, offered: int, mute: MarkedMute | None
) -> dict[str, Any]:
    """The non-empty parts only: a marker without fixes, attempts or an ignore reads as earlier ones did."""
    found: dict[str, Any] = {}
    if fixes:
        found["fixes"] = [fix.model_dump(mode="json", exclude_defaults=True) for fix in fixes]
    if failed:
        found["failed_fixes"] = failed
    if offered:
        found["offered_fixes"] = offered
    if mute is not None:
        found["mute"] = mute.model_dump(mode="json", exclude_defaults=True)
    return found


def _cascade_json(cascade: MarkedCascade | None) -> dict[str, Any]:
    """The links when there are any: a marker without them reads as earlier ones did."""
    if not cascade:
        return {}
    return {"cascade": cascade.model_dump(mode="json", exclude_defaults=True)}


def write_marker(state: MarkerState) -> str:
    lifecycle = _lifecycle_json(state.fixes, state.failed_fixes, state.offered_fixes, state.mute)
    omitted = {"fixes", "failed_fixes", "offered_fixes", "mute", "cascade"}
    dumped = state.model_dump(mode="json", exclude=omitted)
    payload = json.dumps(
        {**dumped, **lifecycle, **_cascade_json(state.cascade)}, sort_keys=True, separators=(",", ":")
    )
    # "--" cannot appear inside an HTML comment; JSON never needs it unescaped
    payload = payload.replace("--", "-\\u002d")
    return f"<!-- rounds:marker v{MARKER_VERSION} {payload} -->"


@dataclass(frozen=True)
class _Found:
    """The last marker of a body as `_MARKER.match` finds it where it starts: its version, its state's text
    and where it starts and ends."""

    start: int
    version: int
    state: str
    end: int


def _last_marker(text: str) -> _Found | None:
    start = text.rfind("<!-- rounds:marker v")
    head = _MARKER_HEAD.match(text, start) if start >= 0 else None
    if head is None:
        return None
    close = text.find(_MARKER_END, head.end())
    if close < 0:
        return None
    return _Found(start, int(head["version"]), text[head.end() : close + 1], close + len(_MARKER_END))


def read_marker(body: str) -> MarkerState | None:
    """The marker in an issue body, or None when it is absent, garbled or from an unknown version."""
    # The real marker is the body's last: untrusted text rendered above it (a stack trace, a message) may
    # carry a look-alike, which must not decide whose issue this is.
    found = _last_marker(body or "")
    if found is None or found.version > MARKER_VERSION:
        return None
    try:
        return MarkerState.model_validate(json.loads(found.state))
    except (ValueError, ValidationError):
        return None


class MarkerHead(Frozen):
    """Whose issue a marker names, and whether that issue is closed: all a tracker needs to answer for a
    body it wrote itself (read without building the rest of the state)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    signature_id: str
    closed: bool = False


def read_marker_head(body: str) -> MarkerHead | None:
    """`read_marker`'s signature and closed state, for a body whose marker `write_marker` wrote: the same
    marker (the body's last, of a known version) read for those two fields only. A marker another hand
    wrote is read whole, with `read_marker`."""
    found = _last_marker(body or "")
    if found is None or found.version > MARKER_VERSION:
        return None
    try:
        return MarkerHead.model_validate_json(found.state)
    except ValidationError:
        return None


def replace_marker(body: str, state: MarkerState) -> str | None:
    """`body` with its marker (the last one) rewritten as `state`; None when it has no readable marker."""
    text = body or ""
    found = _last_marker(text)
    if found is None:
        return None
    return text[: found.start] + write_marker(state) + text[found.end :]
