"""What people asked rounds to do with `/rounds` commands, kept in the event log and read back by the round.

Every control is an event in the append-only log (`store.py`), so it has an author, a time and an
idempotency key (the comment that asked for it); the current state is derived from the latest event of each
kind:

    RoundsPaused / RoundsResumed            repository-wide: no automated writes while paused
    IncidentSuppressed / IncidentUnsuppressed   a signature muted (for a while, or for N more occurrences)
    SignatureMerged / SignatureSplit        a signature's occurrences follow another signature
    RediagnoseRequested                     a signature should be diagnosed again, with a hint
    CommandHandled / CommandReplied         a comment's commands were carried out / answered

Mutes the round derives from GitHub (an issue closed as not planned) are not controls: only suppressions
carrying `"source": "command"` are read here. An active mute is also remembered in the issue's marker
(`marker_memory.py`), so `rounds db rebuild` gives it back with its author, limits and key.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import Field

from rounds_bot.clock import iso, parse_iso
from rounds_bot.events import Fact
from rounds_bot.models import Frozen
from rounds_bot.store import Logged, Store

PAUSED, RESUMED = Fact.ROUNDS_PAUSED, Fact.ROUNDS_RESUMED
MUTED, UNMUTED = Fact.INCIDENT_SUPPRESSED, Fact.INCIDENT_UNSUPPRESSED
MERGED, SPLIT = Fact.SIGNATURE_MERGED, Fact.SIGNATURE_SPLIT
REDIAGNOSE = Fact.REDIAGNOSE_REQUESTED
HANDLED = Fact.COMMAND_HANDLED
COMMAND_SOURCE = "command"
# Merges may chain (A into B, B into C); a longer chain than this is treated as broken.
MAX_MERGE_DEPTH = 20
_WATERMARK_KEY = "commands_watermark"


class Paused(Frozen):
    by: str
    since: str
    where: str | None = Field(default=None, description="the issue the pause was asked on, e.g. #12")


class Mute(Frozen):
    signature_id: str
    by: str
    since: str
    until: str | None = Field(default=None, description="ISO time the mute ends; None: no time limit")
    until_occurrences: int | None = Field(default=None, description="the mute ends after this many more")
    count_at: int = Field(default=0, description="the signature's total count when it was muted")
    key: str = Field(default="", description="its event's idempotency key (`ignore:<comment id>`)")

    def lapsed(self, now: datetime, total_count: int) -> str | None:
        """Why the mute is over, or None while it holds."""
        if self.until is not None and now >= parse_iso(self.until):
            return f"its time ran out at {self.until}"
        if self.until_occurrences is not None and total_count - self.count_at >= self.until_occurrences:
            more = total_count - self.count_at
            return f"{more} more occurrences reached the {self.until_occurrences} asked for"
        return None

    def describe(self) -> str:
        if self.until is not None:
            return f"muted by @{self.by} until {self.until}"
        if self.until_occurrences is not None:
            return f"muted by @{self.by} for {self.until_occurrences} more occurrences (from {self.count_at})"
        return f"muted by @{self.by} until `unignore`"


class Controls(Frozen):
    """The controls in force when a round starts."""

    pause: Paused | None = None
    mutes: dict[str, Mute] = Field(default_factory=dict)
    merges: dict[str, str] = Field(
        default_factory=dict, description="signature id -> the one it was merged into"
    )

    def target_of(self, signature_id: str) -> str:
        """Where a signature's occurrences go: itself, or the end of its merge chain (a cycle stops early)."""
        current, seen = signature_id, {signature_id}
        for _ in range(MAX_MERGE_DEPTH):
            following = self.merges.get(current)
            if following is None or following in seen:
                return current
            seen.add(following)
            current = following
        return current

    def merged_into(self, signature_id: str) -> list[str]:
        """Signatures merged directly into this one."""
        return sorted(source for source, target in self.merges.items() if target == signature_id)


def load_controls(store: Store) -> Controls:
    """Read pause, mutes and merges from the event log (three small queries)."""
    pause = None
    latest = store.latest_facts([PAUSED, RESUMED], per_signature=False)
    if latest and latest[0].kind == PAUSED:
        fact = latest[0]
        pause = Paused(by=fact.payload.get("by", "unknown"), since=fact.at, where=fact.payload.get("where"))
    mutes = {}
    for fact in store.latest_facts([MUTED, UNMUTED]):
        payload = fact.payload
        if fact.kind == MUTED and payload.get("source") == COMMAND_SOURCE and fact.signature_id:
            mutes[fact.signature_id] = Mute(
                signature_id=fact.signature_id,
                by=payload.get("by", "unknown"),
                since=fact.at,
                until=payload.get("until"),
                until_occurrences=payload.get("until_occurrences"),
                count_at=int(payload.get("count_at") or 0),
                key=fact.key,
            )
    merges = {
        fact.signature_id: str(fact.payload["into"])
        for fact in store.latest_facts([MERGED, SPLIT])
        if fact.kind == MERGED and fact.payload.get("into") and fact.signature_id
    }
    return Controls(pause=pause, mutes=mutes, merges=merges)


# --- recording (call inside `store.transaction()`) -------------------------------------------------
def record(
    store: Store,
    kind: Fact,
    key: str,
    *,
    at: datetime,
    signature_id: str | None = None,
    run_id: str = "command",
    **payload: Any,
) -> bool:
    """Append one control event; False when its idempotency key was seen before."""
    return store.append_event(kind, key, signature_id=signature_id, run_id=run_id, at=at, payload=payload)


def mute_payload(
    by: str, *, now: datetime, duration: timedelta | None, occurrences: int | None, count_at: int
) -> dict[str, Any]:
    return {
        "source": COMMAND_SOURCE,
        "by": by,
        "until": iso(now + duration) if duration is not None else None,
        "until_occurrences": occurrences,
        "count_at": count_at,
    }


# --- rediagnose requests ------------------------------------------------------------------------
class RediagnoseRequest(Frozen):
    signature_id: str
    by: str
    at: str
    hint: str | None = None


def rediagnose_requests(store: Store) -> list[RediagnoseRequest]:
    """The newest request per signature to diagnose it again, oldest first."""
    requests = [
        RediagnoseRequest(
            signature_id=fact.signature_id,
            by=fact.payload.get("by", "unknown"),
            at=fact.at,
            hint=fact.payload.get("hint"),
        )
        for fact in store.latest_facts([REDIAGNOSE])
        if fact.signature_id
    ]
    return sorted(requests, key=lambda r: r.at)


def pending_rediagnoses(store: Store) -> dict[str, str]:
    """Requests no diagnosis has answered yet: signature id -> hint ("" without one), for the round."""
    pending = {}
    for request in rediagnose_requests(store):
        latest = store.latest_diagnosis(request.signature_id)
        if latest is None or parse_iso(latest.at) < parse_iso(request.at):
            pending[request.signature_id] = request.hint or ""
    return pending


# --- handled comments ----------------------------------------------------------------------------
class Handled(Frozen):
    comment_id: int
    reply: str
    issue_number: int
    replied: bool


def handled_comment(store: Store, comment_id: int) -> Handled | None:
    handled = store.fact(f"command:{comment_id}")
    if handled is None:
        return None
    return _handled(comment_id, handled, replied=store.fact(f"replied:{comment_id}") is not None)


def unreplied(store: Store) -> list[Handled]:
    """Comments handled whose reply was never posted (the run died, or GitHub failed, in between)."""
    return [
        _handled(int(fact.key.split(":", 1)[1]), fact, replied=False)
        for fact in store.unanswered(HANDLED, asked="command:", answered="replied:")
    ]


def _handled(comment_id: int, fact: Logged, *, replied: bool) -> Handled:
    return Handled(
        comment_id=comment_id,
        reply=fact.payload.get("reply", ""),
        issue_number=int(fact.payload.get("issue", 0)),
        replied=replied,
    )


def command_watermark(store: Store) -> str | None:
    return store.meta(_WATERMARK_KEY)


def set_command_watermark(store: Store, value: str) -> None:
    store.set_meta(_WATERMARK_KEY, value)
