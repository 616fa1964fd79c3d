"""Crashes and dependency faults: a round interrupted anywhere, or hit by a failing dependency, is recovered
by
the next round with no twin issue, no lost or double-counted occurrence, no double charge, and the cursor
where it belongs.

Crash points: the telemetry request, the model call (before and after it is booked), each GitHub write
(created but its answer lost), the commit. Fault kinds: GitHub 5xx, 429 with Retry-After, a model timeout,
a model 5xx, a truncated model answer, a full disk at commit, a source that fails mid-read, two rounds at
once.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_github.fixtures import running_fake
from fake_github.rounds import START, FixedSource, error_event, settings_for, tracker_for
from fake_github.server import FakeGitHub
from recovery_tally import record
from security_harness import RecordingModel, benign_answer

from rounds_bot.errors import RoundsError, SourceError
from rounds_bot.marker import read_marker
from rounds_bot.round.run import INGEST_DELAY, run_round
from rounds_bot.store import Store

pytestmark = [pytest.mark.security, pytest.mark.github_spec]

EVENTS = [error_event(index, serial=serial) for index in range(4) for serial in range(3)]
ROUND_AT = START + timedelta(minutes=30)


class Crash(Exception):
    """The process dies here."""


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


class Model(RecordingModel):
    """The recording model, with faults on request: each reply in `faults` is used once, in order."""

    def __init__(self) -> None:
        super().__init__(benign_answer())
        self.faults: list[Callable[[], httpx.Response]] = []
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.faults:
            return self.faults.pop(0)()
        return super().__call__(request)


def one_round(fake: FakeGitHub, tmp_path: Path, model: Model, source: Any = None, at: Any = ROUND_AT) -> None:
    settings = settings_for(tmp_path, fake, ROUNDS_DIAGNOSE_THRESHOLD="1", ROUNDS_REPO_PATH=str(tmp_path))
    store = Store.open(settings.signatures_db_path)
    tracker = tracker_for(fake, Path(settings.signatures_db_path))
    try:
        run_round(
            settings,
            source or FixedSource(EVENTS),
            tracker,
            store,
            now=at,
            reads_whole_history=True,
            diagnoser=model.diagnoser(),
            diagnosis_mode="diagnosis by a recording model",
        )
    finally:
        store.close()
        tracker.journal.close()


def invariants(
    fake: FakeGitHub, tmp_path: Path, model: Model, last_round: Any = ROUND_AT + timedelta(minutes=30)
) -> dict[str, int]:
    """What must hold after recovery (the last round ran at `last_round`); returns the counts."""
    store = Store.open(tmp_path / "rounds.db")
    try:
        signatures = store.signatures()
        markers = Counter(read_marker(issue.body).signature_id for issue in fake.issues())  # type: ignore[union-attr]
        twins = sum(n - 1 for n in markers.values() if n > 1)
        counted = sum(signature.total_count for signature in signatures)
        booked = store.db.execute("select count(*) from ledger").fetchone()[0]
        paid = len(model.prompts)
        cursor = store.cursor("fixed")
    finally:
        store.close()
    record(twins=twins, happened=len(EVENTS), counted=counted, paid_twice=max(paid - len(signatures), 0))
    assert twins == 0, markers
    assert set(markers) == {signature.id for signature in signatures}
    assert counted == len(EVENTS), f"{counted} occurrences counted, {len(EVENTS)} happened"
    assert booked == paid, f"{paid} model calls answered, {booked} booked"
    assert paid <= len(signatures), "a signature was paid for twice"
    assert cursor is not None and cursor <= last_round - INGEST_DELAY
    assert cursor >= max(event.timestamp for event in EVENTS)
    return {"twins": twins, "lost": len(EVENTS) - counted}


def crash_then_recover(fake: FakeGitHub, tmp_path: Path, model: Model, arm: Callable[[], None]) -> None:
    arm()
    with pytest.raises((Crash, RoundsError)):
        one_round(fake, tmp_path, model)
    disarm_all()
    one_round(fake, tmp_path, model, at=ROUND_AT + timedelta(minutes=30))
    invariants(fake, tmp_path, model)


_UNDO: list[Callable[[], None]] = []


def disarm_all() -> None:
    while _UNDO:
        _UNDO.pop()()


def crash_in(
    monkeypatch: pytest.MonkeyPatch, target: str, *, after: bool = False, nth: int = 1
) -> Callable[[], None]:
    """Arm a crash at the `nth` call of `target` (module path and attribute), before or after it runs."""
    module_path, name = target.rsplit(".", 1)
    module = __import__(module_path, fromlist=[name])
    original = getattr(module, name)
    calls = [0]

    def crashing(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == nth and not after:
            raise Crash(target)
        result = original(*args, **kwargs)
        if calls[0] == nth and after:
            raise Crash(target)
        return result

    def arm() -> None:
        monkeypatch.setattr(module, name, crashing)
        _UNDO.append(lambda: monkeypatch.setattr(module, name, original))

    return arm


CRASH_POINTS = {
    "telemetry request": ("tests_fixed_source_poll", False),
    "model call, before it is booked": ("rounds_bot.round.diagnosis_step._call", False),
    "model call, after it is booked": ("rounds_bot.round.diagnosis_step._record", True),
    "second model call": ("rounds_bot.round.diagnosis_step._record", True),
    "commit": ("rounds_bot.round.run.commit", False),
    "commit, written but not returned": ("rounds_bot.round.run.commit", True),
    "issue creation": ("rounds_bot.round.filing._file_issue", False),
    "issue creation, after GitHub answered": ("rounds_bot.round.filing._file_issue", True),
}


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_a_round_interrupted_at_each_point_is_recovered_by_the_next(
    point, fake_github, tmp_path, monkeypatch
):
    target, after = CRASH_POINTS[point]
    model = Model()
    if target == "tests_fixed_source_poll":

        def arm() -> None:
            def dead(*_: Any) -> Any:
                raise Crash("telemetry request")

            monkeypatch.setattr(FixedSource, "poll", dead)
            _UNDO.append(lambda: monkeypatch.undo())
    else:
        arm = crash_in(monkeypatch, target, after=after, nth=2 if point.startswith("second") else 1)
    crash_then_recover(fake_github, tmp_path, model, arm)


def test_github_creates_the_issue_but_its_answer_is_lost(fake_github, tmp_path):
    model = Model()
    fake_github.fail(502, "issues/create", applied=True)
    one_round(fake_github, tmp_path, model)
    one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=30))
    invariants(fake_github, tmp_path, model)


FAULTS: dict[str, Callable[[FakeGitHub, Model, pytest.MonkeyPatch], None]] = {
    "github 5xx": lambda fake, model, mp: fake.fail(503, "issues/create", times=2) and None,
    "github 429 with retry-after": lambda fake, model, mp: (
        fake.fail(429, "issues/create", headers={"retry-after": "1"}, message="rate limited") and None
    ),
    "model timeout": lambda fake, model, mp: model.faults.append(
        lambda: (_ for _ in ()).throw(httpx.ReadTimeout("timed out"))
    ),
    "model 5xx": lambda fake, model, mp: model.faults.append(lambda: httpx.Response(503, text="overloaded")),
    "model truncated body": lambda fake, model, mp: model.faults.append(
        lambda: httpx.Response(200, content=b'{"id": "c1", "choices": [{"message": {"content": "{\\"classif')
    ),
}


# How many rounds each fault can stop: a create GitHub refuses with a 5xx has an unknown outcome, so the
# round stops there (its intent waits in the journal, nothing is saved) and the next round retries; refused
# twice, it stops two rounds. A stopped round must cost nothing twice, and the rounds after it must succeed.
ROUNDS_STOPPED = {"github 5xx": 2}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_dependency_fault_leaves_nothing_doubled_or_lost(fault, fake_github, tmp_path, monkeypatch):
    model = Model()
    FAULTS[fault](fake_github, model, monkeypatch)
    for n in range(ROUNDS_STOPPED.get(fault, 1)):
        with contextlib.suppress(RoundsError):  # a fault may stop the round; the next one must recover
            one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=n))
    one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=30))
    one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=60))
    # each answered call booked once, no signature paid twice, the cursor where the last round left it
    invariants(fake_github, tmp_path, model, last_round=ROUND_AT + timedelta(minutes=60))


def test_a_full_disk_at_commit_saves_nothing_and_the_next_round_recovers(fake_github, tmp_path, monkeypatch):
    model = Model()
    import rounds_bot.round.run as round_run

    original = round_run.commit

    def full(*_: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(round_run, "commit", full)
    with pytest.raises(sqlite3.OperationalError):
        one_round(fake_github, tmp_path, model)
    monkeypatch.setattr(round_run, "commit", original)
    one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=30))
    invariants(fake_github, tmp_path, model)


def test_a_source_that_fails_mid_read_moves_no_cursor(fake_github, tmp_path):
    model = Model()

    class Failing(FixedSource):
        def poll(self, window: Any, known_group_ids: frozenset[str]) -> Any:
            raise SourceError("SigNoz answered a truncated body")

    with pytest.raises(SourceError):
        one_round(fake_github, tmp_path, model, source=Failing(EVENTS))
    one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=30))
    invariants(fake_github, tmp_path, model)


def test_two_rounds_at_once_file_no_twin(fake_github, tmp_path):
    model = Model()
    errors: list[BaseException] = []

    def go() -> None:
        try:
            one_round(fake_github, tmp_path, model)
        except BaseException as exc:  # collected and judged below
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(isinstance(error, RoundsError) for error in errors), errors
    one_round(fake_github, tmp_path, model, at=ROUND_AT + timedelta(minutes=30))
    invariants(fake_github, tmp_path, model)
