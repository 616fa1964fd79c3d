"""Who asked for a fix, and which requests no attempt has answered yet.

A request is a `FixRequested` fact keyed `fix:<origin>`: `fix:<comment id>` for `/rounds fix`, `fix:auto:...`
when rounds chose the signature itself, `fix:cli:...` for `rounds fix --issue N`. The attempt that carries it
out answers with a `FixProposed` or `FixFailed` fact keyed `fixdone:<origin>`, so a request whose run died
half-way is still pending and the next run carries it out (after a push, without opening a second PR).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from rounds_bot.events import Fact
from rounds_bot.models import Frozen
from rounds_bot.store import Store

REQUEST_PREFIX = "fix:"
ANSWER_PREFIX = "fixdone:"
Trigger = Literal["command", "auto", "cli"]


class FixRequest(Frozen):
    key: str
    signature_id: str
    issue_number: int
    by: str
    trigger: Trigger
    at: str

    @property
    def answer_key(self) -> str:
        return ANSWER_PREFIX + self.key.removeprefix(REQUEST_PREFIX)

    def asked_by(self) -> str:
        """Who asked, for a sentence: a person, or rounds' own choice."""
        if self.trigger == "auto":
            return "chosen by rounds: a server bug diagnosed with high confidence"
        return f"asked for by {self.by}"


def pending_requests(store: Store) -> list[FixRequest]:
    """Requests no attempt answered, oldest first."""
    found = store.unanswered(Fact.FIX_REQUESTED, asked=REQUEST_PREFIX, answered=ANSWER_PREFIX)
    return [
        FixRequest(
            key=fact.key,
            signature_id=fact.signature_id or "",
            issue_number=int(fact.payload.get("issue") or 0),
            by=str(fact.payload.get("by") or "unknown"),
            trigger=fact.payload.get("trigger") or "command",
            at=fact.at,
        )
        for fact in found
        if fact.signature_id
    ]


def pending_for(store: Store, signature_id: str) -> FixRequest | None:
    return next((r for r in pending_requests(store) if r.signature_id == signature_id), None)


def record_request(
    store: Store,
    *,
    origin: str,
    signature_id: str,
    issue_number: int,
    by: str,
    trigger: Trigger,
    at: datetime,
) -> bool:
    """Log a request (call inside a transaction); False when this origin asked before."""
    return store.append_event(
        Fact.FIX_REQUESTED,
        REQUEST_PREFIX + origin,
        signature_id=signature_id,
        run_id="fix",
        at=at,
        payload={"by": by, "issue": issue_number, "trigger": trigger},
    )
