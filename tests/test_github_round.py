"""Whole rounds against the fake GitHub: killed at every call, stopped by budgets, failing mid-way.

The promise: zero duplicate issues, zero lost signatures, whatever call a round dies at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from fake_github import FakeGitHub
from fake_github.fixtures import BOT_PERMISSIONS, TOKEN, require_description, running_fake
from fake_github.rounds import (
    START,
    FixedSource,
    error_event,
    round_against,
    settings_for,
    tracker_for,
)

from rounds_bot.errors import TrackerError
from rounds_bot.marker import read_marker
from rounds_bot.round.report import RoundReport, render_report
from rounds_bot.round.run import run_round
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


class Killed(BaseException):
    """The process died: nothing after this point runs, no handler catches it."""


def run(tmp_path: Path, fake: FakeGitHub, events: list, minutes: int, **options) -> RoundReport:
    return round_against(fake, tmp_path, events, minutes, tracker_options=options)


def first_round_events() -> list:
    return [error_event(i, serial=s) for i in range(4) for s in range(2)]


def second_round_events() -> list:
    later = START + timedelta(minutes=20)
    return first_round_events() + [error_event(i, at=later, serial=s) for i in (0, 1, 4, 5) for s in range(2)]


def issues_by_signature(fake: FakeGitHub) -> Counter:
    return Counter(read_marker(issue.body).signature_id for issue in fake.issues())


@pytest.fixture
def kill_switch(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """Kill the client at the Nth HTTP call, before it is sent or after its answer arrived."""
    plan = {"at": None, "after": False, "calls": 0}
    send = requests.adapters.HTTPAdapter.send

    def killing_send(self, request, *args, **kwargs):
        plan["calls"] += 1
        if plan["calls"] == plan["at"] and not plan["after"]:
            raise Killed(f"killed before call {plan['at']}: {request.method} {request.url}")
        response = send(self, request, *args, **kwargs)
        if plan["calls"] == plan["at"]:
            raise Killed(f"killed after call {plan['at']}: {request.method} {request.url}")
        return response

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", killing_send)
    yield plan


def prepared_fake(tmp_path: Path) -> FakeGitHub:
    """After round 1 (four issues), issue #1 was closed as completed: round 2 will reopen it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    fake = FakeGitHub().start()
    fake.add_token(TOKEN, **BOT_PERMISSIONS)
    run(tmp_path, fake, first_round_events(), minutes=5)
    fake.state.set_state(fake.repo.issues[1], "closed", "completed")
    return fake


def test_a_round_killed_at_any_github_call_leaves_no_twin_and_loses_nothing(tmp_path, kill_switch):
    require_description()
    # how many calls a clean second round makes
    with prepared_fake(tmp_path / "clean") as fake:
        kill_switch["calls"] = 0
        run(tmp_path / "clean", fake, second_round_events(), minutes=30)
        total_calls = kill_switch["calls"]
        expected = issues_by_signature(fake)
    assert total_calls >= 6 and len(expected) == 6

    for at in range(1, total_calls + 1):
        for after in (False, True):
            where = tmp_path / f"kill-{at}-{after}"
            with prepared_fake(where) as fake:
                kill_switch.update(at=None, calls=0)
                kill_switch.update(at=at, after=after)
                with pytest.raises(Killed):
                    run(where, fake, second_round_events(), minutes=30)
                kill_switch.update(at=None)
                run(where, fake, second_round_events(), minutes=31)  # the next scheduled run
                run(where, fake, second_round_events(), minutes=32)  # and one more: nothing changes

                context = f"killed {'after' if after else 'before'} call {at}"
                assert issues_by_signature(fake) == expected, context
                store = Store.open(where / "rounds.db")
                rows = {signature.id: signature for signature in store.signatures()}
                store.close()
                assert set(rows) == set(expected), context
                for signature_id, row in rows.items():
                    [issue] = [i for i in fake.issues() if read_marker(i.body).signature_id == signature_id]
                    assert row.issue_ref == f"#{issue.number}", context
                    assert read_marker(issue.body).total_count == row.total_count, context
                reopened = fake.repo.issues[1]
                assert reopened.state == "open" and "regression" in reopened.labels, context
                regression_comments = [
                    c for c in fake.repo.comments.values() if c.body.startswith("Regression")
                ]
                assert len(regression_comments) == 1, context
                assert fake.violations == [], context


def test_a_quiet_round_makes_at_most_two_requests(tmp_path, fake_github: FakeGitHub):
    run(tmp_path, fake_github, first_round_events(), minutes=5)
    before = len(fake_github.exchanges)
    report = run(tmp_path, fake_github, first_round_events(), minutes=20)
    assert report.quiet
    assert len(fake_github.exchanges) - before <= 2


def test_ten_new_signatures_cost_at_most_three_requests_each(tmp_path, fake_github: FakeGitHub):
    report = run(tmp_path, fake_github, [error_event(i) for i in range(10)], minutes=5)
    assert len(report.new) == 10
    assert len(fake_github.exchanges) <= 30


def test_an_update_round_costs_one_listing_and_one_edit_per_issue(tmp_path, fake_github: FakeGitHub):
    run(tmp_path, fake_github, first_round_events(), minutes=5)
    before = len(fake_github.exchanges)
    later = START + timedelta(minutes=20)
    report = run(tmp_path, fake_github, [*first_round_events(), error_event(0, at=later)], minutes=30)
    assert [line.round_count for line in report.updated] == [1]
    calls = [e.operation for e in fake_github.exchanges[before:]]
    assert calls == ["issues/list-for-repo", "issues/update"]


def test_the_new_issue_cap_defers_the_rest_to_the_next_round(tmp_path, fake_github: FakeGitHub):
    events = [error_event(i) for i in range(5)]
    settings_cap = {"ROUNDS_MAX_NEW_ISSUES_PER_ROUND": 3}
    first = run_with(tmp_path, fake_github, events, 5, settings_cap)
    assert (len(first.new), len(first.deferred)) == (3, 2)
    second = run_with(tmp_path, fake_github, events, 20, settings_cap)
    assert len(second.new) == 2 and len(fake_github.issues()) == 5


def run_with(tmp_path: Path, fake: FakeGitHub, events: list, minutes: int, overrides: dict) -> RoundReport:
    settings = settings_for(tmp_path, fake, **overrides)
    store = Store.open(settings.signatures_db_path)
    tracker = tracker_for(fake, Path(settings.signatures_db_path))
    try:
        return run_round(
            settings, FixedSource(events), tracker, store, now=START + timedelta(minutes=minutes)
        )
    finally:
        store.close()


def test_a_spent_budget_stops_cleanly_saves_state_and_says_why(tmp_path, fake_github: FakeGitHub):
    events = [error_event(i) for i in range(6)]
    report = run(tmp_path, fake_github, events, minutes=5, max_requests_per_round=8)
    markdown = render_report(report)
    assert "request budget (8)" in markdown
    filed = len(fake_github.issues())
    assert 0 < filed < 6
    assert len(report.new) == filed and len(report.deferred) == 6 - filed
    store = Store.open(tmp_path / "rounds.db")
    assert sum(1 for signature in store.signatures() if signature.issue_ref) == filed
    assert len(store.signatures()) == 6
    store.close()
    run(tmp_path, fake_github, events, minutes=20)
    assert sorted(issues_by_signature(fake_github).values()) == [1] * 6


def test_a_5xx_in_the_middle_of_a_round_is_a_clear_error_and_the_rerun_files_no_twin(
    tmp_path, fake_github: FakeGitHub
):
    events = [error_event(i) for i in range(4)]
    fake_github.fail(502, "issues/create", skip=2, times=5)
    with pytest.raises(TrackerError, match="GitHub answered 502") as caught:
        run(tmp_path, fake_github, events, minutes=5)
    assert "nothing was lost" in str(caught.value)
    assert len(fake_github.issues()) == 2
    store = Store.open(tmp_path / "rounds.db")
    assert store.signatures() == []  # the round's database write never happened
    store.close()
    fake_github.faults.clear()
    report = run(tmp_path, fake_github, events, minutes=20)
    assert sorted(issues_by_signature(fake_github).values()) == [1, 1, 1, 1]
    # the two filed before the failure are found by their markers and updated, the other two filed now
    assert (len(report.new), len(report.updated)) == (2, 2)
