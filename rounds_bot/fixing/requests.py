"""Who asked for a fix, and which requests no attempt has answered yet.

A request is a `FixRequested` fact keyed `fix:<origin>`: `fix:<comment id>` for `/rounds fix`, `fix:auto:...`
when rounds chose the signature itself, `fix:cli:...` for `rounds fix --issue N`. The attempt that carries it
out answers with a `FixProposed` or `FixFailed` fact keyed `fixdone:<origin>`, so a request whose run died
half-way is still pending and the next run carries it out (after a push, without opening a second PR).

A person's request may carry their instructions (`/rounds fix <instructions>`: cleaned and capped by the
command grammar), which reach the fix prompt fenced as a collaborator's words; a request made on one of
rounds' fix pull requests names it (`pull`), and the attempt adds a commit to that pull request's branch.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from rounds_bot.events import Fact
from rounds_bot.models import Frozen
from rounds_bot.store import Logged, Store

#: a person's instructions to a fix (`/rounds fix <instructions>`) are cut to this many characters
MAX_INSTRUCTIONS_CHARS = 1_000

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
    instructions: str | None = Field(default=None, description="what the person asked of the change")
    pull: int | None = Field(default=None, description="the fix pull request it was asked on, to revise")

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
    return [request_of(fact) for fact in found if fact.signature_id]


def request_of(fact: Logged) -> FixRequest:
    """The request a `FixRequested` fact records."""
    payload = fact.payload
    pull = payload.get("pull")
    return FixRequest(
        key=fact.key,
        signature_id=fact.signature_id or "",
        issue_number=int(payload.get("issue") or 0),
        by=str(payload.get("by") or "unknown"),
        trigger=payload.get("trigger") or "command",
        at=fact.at,
        instructions=str(payload.get("instructions") or "") or None,
        pull=int(pull) if pull else None,
    )


def request_by_key(store: Store, key: str) -> FixRequest | None:
    """The request logged under `key` (answered or not), or None."""
    fact = store.fact(key)
    return request_of(fact) if fact is not None and fact.kind == Fact.FIX_REQUESTED else None


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
    instructions: str | None = None,
) -> bool:
    """Log a request (call inside a transaction); False when this origin asked before."""
    payload: dict[str, object] = {"by": by, "issue": issue_number, "trigger": trigger}
    if instructions:
        payload["instructions"] = instructions
    return store.append_event(
        Fact.FIX_REQUESTED,
        REQUEST_PREFIX + origin,
        signature_id=signature_id,
        run_id="fix",
        at=at,
        payload=payload,
    )
