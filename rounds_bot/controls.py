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
carrying `"source": "command"` are read here.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from pydantic import Field

from rounds_bot.events import Fact
from rounds_bot.models import Frozen
from rounds_bot.store import Store, iso, parse_iso

PAUSED, RESUMED = Fact.ROUNDS_PAUSED, Fact.ROUNDS_RESUMED
MUTED, UNMUTED = Fact.INCIDENT_SUPPRESSED, Fact.INCIDENT_UNSUPPRESSED
MERGED, SPLIT = Fact.SIGNATURE_MERGED, Fact.SIGNATURE_SPLIT
REDIAGNOSE = Fact.REDIAGNOSE_REQUESTED
HANDLED, REPLIED = Fact.COMMAND_HANDLED, Fact.COMMAND_REPLIED
COMMAND_SOURCE = "command"
# Merges may chain (A into B, B into C); a longer chain than this is treated as broken.
MAX_MERGE_DEPTH = 20
_WATERMARK_KEY = "commands_watermark"


class Pause(Frozen):
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

    pause: Pause | None = None
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
    latest = _latest(store, [PAUSED, RESUMED], per_signature=False)
    if latest and latest[0]["kind"] == PAUSED:
        payload = latest[0]["payload"]
        pause = Pause(by=payload.get("by", "unknown"), since=latest[0]["at"], where=payload.get("where"))
    mutes = {}
    for row in _latest(store, [MUTED, UNMUTED]):
        payload = row["payload"]
        if row["kind"] == MUTED and payload.get("source") == COMMAND_SOURCE:
            mutes[row["signature_id"]] = Mute(
                signature_id=row["signature_id"],
                by=payload.get("by", "unknown"),
                since=row["at"],
                until=payload.get("until"),
                until_occurrences=payload.get("until_occurrences"),
                count_at=int(payload.get("count_at") or 0),
            )
    merges = {
        row["signature_id"]: row["payload"]["into"]
        for row in _latest(store, [MERGED, SPLIT])
        if row["kind"] == MERGED and row["payload"].get("into")
    }
    return Controls(pause=pause, mutes=mutes, merges=merges)


def _latest(store: Store, kinds: list[str], *, per_signature: bool = True) -> list[dict[str, Any]]:
    """The newest event among `kinds`, per signature (or overall)."""
    marks = ",".join("?" * len(kinds))
    if per_signature:
        sql = (
            f"select e.* from events e join (select signature_id, max(id) as id from events "
            f"where kind in ({marks}) and signature_id is not null group by signature_id) last "
            "on e.id = last.id"
        )
    else:
        sql = f"select * from events where kind in ({marks}) order by id desc limit 1"
    rows = []
    for row in store.db.query(sql, kinds):
        rows.append({**row, "payload": json.loads(row["payload"] or "{}")})
    return rows


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
    requests = []
    for row in _latest(store, [REDIAGNOSE]):
        payload = row["payload"]
        requests.append(
            RediagnoseRequest(
                signature_id=row["signature_id"],
                by=payload.get("by", "unknown"),
                at=row["at"],
                hint=payload.get("hint"),
            )
        )
    return sorted(requests, key=lambda r: r.at)


def pending_rediagnoses(store: Store) -> dict[str, str]:
    """Requests no diagnosis has answered yet: signature id -> hint ("" without one), for the round."""
    pending = {}
    for request in rediagnose_requests(store):
        latest = store.latest_diagnosis(request.signature_id)
        if latest is None or parse_iso(latest["at"]) < parse_iso(request.at):
            pending[request.signature_id] = request.hint or ""
    return pending


# --- handled comments ----------------------------------------------------------------------------
class Handled(Frozen):
    comment_id: int
    reply: str
    issue_number: int
    replied: bool


def handled_comment(store: Store, comment_id: int) -> Handled | None:
    row = store.db.execute(
        "select payload from events where idempotency_key = ?", [f"command:{comment_id}"]
    ).fetchone()
    if row is None:
        return None
    payload = json.loads(row[0])
    replied = store.db.execute(
        "select 1 from events where idempotency_key = ?", [f"replied:{comment_id}"]
    ).fetchone()
    return Handled(
        comment_id=comment_id,
        reply=payload.get("reply", ""),
        issue_number=int(payload.get("issue", 0)),
        replied=replied is not None,
    )


def unreplied(store: Store) -> list[Handled]:
    """Comments handled whose reply was never posted (the run died, or GitHub failed, in between)."""
    rows = store.db.execute(
        "select h.idempotency_key, h.payload from events h where h.kind = ? and not exists "
        "(select 1 from events r where r.idempotency_key = 'replied:' || substr(h.idempotency_key, 9)) "
        "order by h.id",
        [HANDLED],
    )
    found = []
    for key, payload_text in rows:
        payload = json.loads(payload_text)
        found.append(
            Handled(
                comment_id=int(key.split(":", 1)[1]),
                reply=payload.get("reply", ""),
                issue_number=int(payload.get("issue", 0)),
                replied=False,
            )
        )
    return found


def command_watermark(store: Store) -> str | None:
    row = store.db.execute("select value from meta where key = ?", [_WATERMARK_KEY]).fetchone()
    return str(row[0]) if row else None


def set_command_watermark(store: Store, value: str) -> None:
    store.db.table("meta").upsert({"key": _WATERMARK_KEY, "value": value}, pk="key")
