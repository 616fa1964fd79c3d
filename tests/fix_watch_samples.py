"""A fix's life after its pull request, without the model or git: the draft pull request a proposal leaves on
the fake GitHub with its FixProposed, a person's `/rounds ignore`, and the fix job's watch (merge, release,
evaluation, markers). Used by the lifecycle and rebuild tests."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from fake_github.fixtures import REPOSITORY
from fake_github.pulls_routes import PullsFakeGitHub
from fake_github.rounds import tracker_for
from fake_github.state import Pull

from rounds_bot import controls
from rounds_bot.events import Fact
from rounds_bot.fixing.watch import Watch, watch_fixes
from rounds_bot.github.pulls import PullsApi
from rounds_bot.models import ErrorEvent
from rounds_bot.store import Store

QUIET = timedelta(hours=24)


def on_version(event: ErrorEvent, version: str | None, at: datetime, serial: int = 0) -> ErrorEvent:
    """`event` again at `at` (+ `serial` seconds), on `version` (None: no `service.version`)."""
    moment = at + timedelta(seconds=serial)
    return event.model_copy(
        update={
            "service_version": version,
            "timestamp": moment,
            "event_id": f"{event.event_id}-{version}-{moment:%H%M%S}",
        }
    )


def fix_job(fake: PullsFakeGitHub, path: Path, now: datetime) -> list[str]:
    """The fix job's first part (`rounds fix --watch-only`): its notes."""
    store = Store.open(path)
    try:
        pulls = PullsApi.sharing(tracker_for(fake).api)
        return watch_fixes(Watch(store, pulls, now, QUIET))
    finally:
        store.close()


def open_pull(fake: PullsFakeGitHub, path: Path, signature_id: str, issue: int, at: datetime) -> int:
    """What `rounds fix` leaves behind for a proposal: a draft pull request and its FixProposed."""
    number = fake.repo.next_number()
    branch = f"rounds/fix-{signature_id}-20260302"
    fake.repo.pulls[number] = Pull(number, "Fix", f"Fixes #{issue}", branch, "main", True, "bot", at)
    store = Store.open(path)
    with store.transaction():
        store.append_event(
            Fact.FIX_PROPOSED,
            f"fixdone:{issue}",
            signature_id=signature_id,
            run_id="fix",
            at=at,
            payload={
                "pr": number,
                "url": f"https://github.com/{REPOSITORY}/pull/{number}",
                "issue": f"#{issue}",
                "branch": branch,
                "files": ["checkout/session.py", "tests/test_session.py"],
            },
        )
    store.close()
    return number


def merge(fake: PullsFakeGitHub, pr: int, issue: int, at: datetime) -> None:
    """A person merges the pull request; its `Fixes #N` closes the issue."""
    fake.merge(pr, at=at)
    fake.state.set_state(fake.repo.issues[issue], "closed", "completed")


def ignore(path: Path, signature_id: str, at: datetime, occurrences: int, comment: int = 4242) -> None:
    """`/rounds ignore <occurrences> occurrences` as the command job records it (by bob)."""
    store = Store.open(path)
    signature = store.signature(signature_id)
    assert signature is not None
    payload = controls.mute_payload(
        "bob", now=at, duration=None, occurrences=occurrences, count_at=signature.total_count
    )
    with store.transaction():
        controls.record(
            store, Fact.INCIDENT_SUPPRESSED, f"ignore:{comment}", at=at, signature_id=signature_id, **payload
        )
    store.close()
