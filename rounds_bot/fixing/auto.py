"""Fixes rounds proposes without being asked (ROUNDS_FIX_AUTO): few, and only where a fix is likely right.

A signature qualifies when its issue is open, it is not ignored, its latest diagnosis says `server_bug` with
`high` confidence with every item of its evidence verified by rounds (`Diagnosis.checked`), and no fix was
ever attempted for it (a failed or abandoned one, or a branch whose pull request was left to a person, is
left to people, who can still ask with `/rounds fix`). An attempt that never started (the test command
could not run, or the tests already failed without any change) is no attempt: the
request waits (`blocked.py`), and while an automatic request waits no other is chosen, so the daily cap
holds when it finally runs. At most ROUNDS_FIX_AUTO_PER_DAY requests a day (UTC), the most frequent problems
first; each is an ordinary request, carried out like `/rounds fix`.
"""

from __future__ import annotations

from datetime import datetime

from rounds_bot.controls import load_controls
from rounds_bot.events import Fact
from rounds_bot.fixing.blocked import automatic_request_waits
from rounds_bot.fixing.requests import pending_for, record_request
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature
from rounds_bot.store import Store

AUTO_BY = "rounds"


def qualifies(store: Store, signature: Signature, ignored: set[str]) -> bool:
    if not signature.issue_ref or signature.id in ignored or store.status(signature.id) != "open":
        return False
    record = store.latest_diagnosis(signature.id, ok_only=True)
    diagnosis = record.outcome.diagnosis if record is not None else None
    if diagnosis is None or (diagnosis.classification, diagnosis.confidence) != ("server_bug", "high"):
        return False
    if not diagnosis.evidence_verified:
        return False  # `high` rests on evidence rounds found; an answer citing what is not there never does
    incident = store.incident(signature.id)
    attempted = incident is not None and (
        incident.fix_pr is not None or incident.failed_fixes > 0 or incident.offered_fixes > 0
    )
    return not attempted and pending_for(store, signature.id) is None


def request_automatic_fixes(store: Store, settings: Settings, now: datetime) -> list[str]:
    """Record today's automatic requests (within the daily cap); the signatures chosen."""
    if not settings.fix_auto or automatic_request_waits(store):
        return []  # one that could not start yet waits (`blocked.py`): choosing more would overrun the cap
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    used = sum(1 for f in store.facts([Fact.FIX_REQUESTED], since=day) if f.payload.get("trigger") == "auto")
    left = settings.fix_auto_per_day - used
    if left <= 0:
        return []
    ignored = set(load_controls(store).mutes)
    chosen = [s for s in store.signatures() if qualifies(store, s, ignored)]
    chosen.sort(key=lambda s: (-s.total_count, s.id))
    with store.transaction():
        for signature in chosen[:left]:
            record_request(
                store,
                origin=f"auto:{signature.id}:{now:%Y%m%d}",
                signature_id=signature.id,
                issue_number=int((signature.issue_ref or "#0").lstrip("#")),
                by=AUTO_BY,
                trigger="auto",
                at=now,
            )
    return [s.id for s in chosen[:left]]
