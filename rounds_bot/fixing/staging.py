"""Which run's fix stages hold a request: a request is edited once, not once per run that finds it pending.

In GitHub Actions the three stages of one run are three jobs; only fix-edit and fix-publish touch the
database, and each holds the database's lock only while it runs. The fix-test job between them runs outside it
(up to an hour) while the schedule starts a run every 30 minutes, so a later run's round and fix-edit can
come before this run's fix-publish. The request is still pending then (fix-publish answers it), and that
fix-edit would edit it again: the model paid twice, the tests run twice.

So fix-edit records that it staged each request it carried into its bundle, in its run (a `FixBlocked` fact
keyed `fixstaged:<origin>:<run>`, with `blocked: staged`), and fix-publish records that it settled the
bundle's requests of that run (`fixstaged:<origin>:<run>:published`, with `blocked: published`). A later
run's fix-edit leaves a request staged by another run that has not published it alone for STAGED_HOLD after
the staging, and says so; after that the staging run is taken to have given up (it failed, or was
cancelled), and the request is edited again, with the report saying why. The same run's fix-edit run again
(a re-run of the job) edits it again: its bundle replaces the one before.

These marks are not refusals: `blocked.py`'s readers of `FixBlocked` facts leave them out (`is_staging`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from rounds_bot.clock import iso, parse_iso
from rounds_bot.events import Fact
from rounds_bot.fixing.requests import REQUEST_PREFIX, FixRequest
from rounds_bot.store import Store
from rounds_bot.store.records import Logged

#: how long a request staged by another run's fix-edit is left to that run's fix-publish: its fix-test job
#: may take an hour (its time limit), and its fix-publish then waits for the database's lock behind a round
STAGED_HOLD = timedelta(hours=2)
STAGED_PREFIX = "fixstaged:"
STAGED = "staged"
PUBLISHED = "published"


def is_staging(fact: Logged) -> bool:
    """Whether a `FixBlocked` fact is one of these marks, not a refusal."""
    return fact.payload.get("blocked") in (STAGED, PUBLISHED)


def record_staged(store: Store, request: FixRequest, run_id: str, now: datetime) -> None:
    """Fix-edit carried `request` into run `run_id`'s bundle (inside its own transaction)."""
    _record(store, request.key, request.signature_id, run_id, now, STAGED)


def record_published(store: Store, request_key: str, signature_id: str, run_id: str, now: datetime) -> None:
    """Run `run_id`'s fix-publish settled the request it staged (inside its own transaction)."""
    _record(store, request_key, signature_id, run_id, now, PUBLISHED)


def held_by_another_run(store: Store, request: FixRequest, run_id: str, now: datetime) -> tuple[bool, str]:
    """Whether this run's fix-edit leaves `request` alone, and what its report says (nothing when no other
    run holds it): held while another run staged it less than STAGED_HOLD ago and has not published it;
    edited again, and said why, once that is longer ago."""
    marks = _marks(store, request)
    published = {str(f.payload.get("run") or "") for f in marks if f.payload.get("blocked") == PUBLISHED}
    staged = [f for f in marks if f.payload.get("blocked") == STAGED]
    if not staged:
        return False, ""
    latest = staged[-1]
    other = str(latest.payload.get("run") or "")
    if other == run_id or other in published:
        return False, ""
    since = parse_iso(latest.at)
    where = f"#{request.issue_number} ({request.signature_id})"
    hours = f"{STAGED_HOLD.total_seconds() / 3600:g} hours"
    if now - since < STAGED_HOLD:
        return True, (
            f"{where}: not edited again: run {other} staged it at {latest.at} and its fix-publish has not "
            f"answered it yet (it is edited again from {iso(since + STAGED_HOLD)} if that run never does)"
        )
    return False, (
        f"{where}: edited again: run {other} staged it at {latest.at} and its fix-publish did not answer it "
        f"within {hours} (the run failed or was cancelled)"
    )


def _record(store: Store, request_key: str, signature_id: str, run_id: str, now: datetime, mark: str) -> None:
    origin = request_key.removeprefix(REQUEST_PREFIX)
    key = f"{STAGED_PREFIX}{origin}:{run_id}" + (f":{PUBLISHED}" if mark == PUBLISHED else "")
    payload = {"request": request_key, "blocked": mark, "run": run_id}
    with store.transaction():
        store.append_event(
            Fact.FIX_BLOCKED, key, signature_id=signature_id, run_id="fix", at=now, payload=payload
        )


def _marks(store: Store, request: FixRequest) -> list[Logged]:
    return [
        f
        for f in store.facts([Fact.FIX_BLOCKED])
        if f.payload.get("request") == request.key and is_staging(f)
    ]
