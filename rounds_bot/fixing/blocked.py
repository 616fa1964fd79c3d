"""A request whose attempt could not start: the test command cannot run here (`setup`), or the tests already
fail on the starting point without any change (`baseline`). The model never ran, so nothing was spent, and
it is no failed fix: a signature stays eligible for an automatic fix (`lifecycle.fold_incident` does not
count it).

    a person's request (`/rounds fix`, `rounds fix --issue N`)
        answered at once (FixFailed with `blocked`) with one comment saying what is wrong and what to change;
        they ask again once it is fixed
    rounds' own choice (ROUNDS_FIX_AUTO)
        NOT answered: it stays pending and every later run tries it again, so the day's automatic attempt
        is not lost to a setup problem. Each refusal is a FixBlocked keyed by the request, the kind and,
        for a failing base, its commit, so:
        - the issue gets ONE comment per request and kind, however many runs it waits;
        - a failing base is not tested again until it has a new commit (`known_failing_base`): waiting costs
          a `git fetch`, not a test run;
        - a test command that could not run is tried again each run: a failure to start costs seconds, and
          the fix job may have been given the missing step meanwhile.
        While it waits, rounds chooses no other signature (`auto.py`), so the daily cap still holds when it
        can finally run, and no model money is spent on any run until then.

In GitHub Actions the tests run in their own job, after the edit (`testing.py`), so the model would be paid
before the baseline could say that the tests cannot run or already fail. There every request is PROBED
first (`needs_probe`): the fix-edit job runs no model for it, the fix-test job runs its tests on the
unchanged base alone, and only once they pass is the request marked ready (`record_ready`), so the model
runs on the next run. A test command that cannot run, or a base that already fails, is answered (a person)
or waits (rounds' own choice) as above, and no model ran. A refusal after a ready mark (the base broke
meanwhile: the fix-test job runs the baseline again before the change) is logged again (its key counts the
ready marks), and the request is probed again.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rounds_bot.events import Fact
from rounds_bot.fixing.requests import REQUEST_PREFIX, FixRequest, pending_requests
from rounds_bot.fixing.staging import is_staging
from rounds_bot.store import Store
from rounds_bot.store.records import Logged

if TYPE_CHECKING:  # light to import: `rounds command` asks `waiting_because` without the fix machinery
    from rounds_bot.fixing.attempt import Attempt

BLOCKED_PREFIX = "fixblocked:"
#: the mark of a waiting request whose tests ran again on the unchanged base (`record_ready`)
READY = "ready"


def automatic_request_waits(store: Store) -> bool:
    """Whether one of rounds' own requests is pending because it could not start."""
    waiting = {r.key for r in pending_requests(store) if r.trigger == "auto"}
    if not waiting:
        return False
    facts = store.facts([Fact.FIX_BLOCKED])
    return any(f.payload.get("request") in waiting for f in facts if not is_staging(f))


def waiting_because(store: Store, request: FixRequest) -> str | None:
    """Why a pending request has not started yet (its latest refusal), or None when nothing held it back."""
    facts = _blocked_facts(store, request)
    if not facts:
        return None
    return str(facts[-1].payload.get("reason") or "") or None


def known_failing_base(store: Store, request: FixRequest, commit: str, command: str) -> str | None:
    """Why this waiting request cannot start yet, when its tests already failed at `commit` with `command`."""
    for fact in reversed(_blocked_facts(store, request)):
        payload = fact.payload
        if payload.get("blocked") == READY:
            return None  # they passed since
        if payload.get("blocked") == "baseline":
            same = payload.get("commit") == commit and payload.get("command") == command
            return str(payload.get("reason") or "") if same else None
    return None


def record_blocked(store: Store, request: FixRequest, attempt: Attempt, commit: str, now: datetime) -> bool:
    """Log the refusal (inside its own transaction); True when it is the first of its kind for the request."""
    assert attempt.blocked is not None
    first = not any(f.payload.get("blocked") == attempt.blocked for f in _blocked_facts(store, request))
    origin = request.key.removeprefix(REQUEST_PREFIX)
    at_commit = f":{commit}" if attempt.blocked == "baseline" else ""
    readied = sum(1 for f in _blocked_facts(store, request) if f.payload.get("blocked") == READY)
    again = f":{readied}" if readied else ""
    key = f"{BLOCKED_PREFIX}{origin}:{attempt.blocked}{at_commit}{again}"
    tests = attempt.tests
    payload = {
        "request": request.key,
        "blocked": attempt.blocked,
        "reason": attempt.reason,
        "commit": commit,
        "command": tests.command if tests is not None else "",
        "tail": tests.tail if tests is not None else "",
    }
    with store.transaction():
        store.append_event(
            Fact.FIX_BLOCKED, key, signature_id=request.signature_id, run_id="fix", at=now, payload=payload
        )
    return first


def needs_probe(store: Store, request: FixRequest) -> bool:
    """Whether the request's tests have yet to pass on its unchanged base (no ready mark since its last
    refusal, or none at all): in GitHub Actions, its tests alone first, and no model."""
    facts = _blocked_facts(store, request)
    return not facts or facts[-1].payload.get("blocked") != READY


def record_ready(store: Store, request: FixRequest, commit: str, now: datetime) -> None:
    """The tests ran on the unchanged `commit`: the waiting request goes ahead (with the model) next run."""
    origin = request.key.removeprefix(REQUEST_PREFIX)
    count = len(_blocked_facts(store, request))
    payload = {
        "request": request.key,
        "blocked": READY,
        "reason": "its tests pass on the unchanged base: the model runs on the next fix run",
        "commit": commit,
    }
    with store.transaction():
        store.append_event(
            Fact.FIX_BLOCKED,
            f"{BLOCKED_PREFIX}{origin}:{READY}:{count}",
            signature_id=request.signature_id,
            run_id="fix",
            at=now,
            payload=payload,
        )


def _blocked_facts(store: Store, request: FixRequest) -> list[Logged]:
    """The request's refusals and ready marks; not which run staged it (`staging.py`)."""
    return [
        f
        for f in store.facts([Fact.FIX_BLOCKED])
        if f.payload.get("request") == request.key and not is_staging(f)
    ]
