"""What `/rounds` commands change in the rounds that follow: pause, ignore, merge and split, rediagnose."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for, running_actions_fake
from fake_github.rounds import START, error_event, round_against

from rounds_bot import controls
from rounds_bot.commands.runner import CommandContext, comment_from_event, handle_comment
from rounds_bot.diagnosis.model import DiagnosisOutcome, DiagnosisRequest
from rounds_bot.round.report import RoundReport
from rounds_bot.signature import Signature
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()
    # (running_actions_fake asserts every exchange matched GitHub's REST description)


class Recorder:
    """A diagnoser that only records what it was asked (no model)."""

    name = "recorder"

    def __init__(self) -> None:
        self.asked: list[DiagnosisRequest] = []

    def estimate_cost(self, request: DiagnosisRequest) -> float:
        return 0.0

    def diagnose(self, request: DiagnosisRequest) -> DiagnosisOutcome:
        self.asked.append(request)
        return DiagnosisOutcome(status="no_data", detail="recorded only")


def round_at(fake, tmp_path, minutes, events, **kwargs) -> RoundReport:
    return round_against(
        fake, tmp_path, events, minutes, settings={"ROUNDS_CODE_REVISION": "abc123"}, **kwargs
    )


def command(fake, tmp_path, number, body, minutes):
    fake.repo.collaborators["alice"] = "write"
    store = Store.open(tmp_path / "rounds.db")
    ctx = CommandContext(
        api=actions_api_for(fake, tmp_path), store=store, now=START + timedelta(minutes=minutes)
    )
    repo = fake.repo
    comment = fake.comment(number, body, user="alice")
    payload = {
        "action": "created",
        "issue": fake.state.issue_json(repo, repo.issues[number]),
        "comment": fake.state.comment_json(repo, comment),
    }
    try:
        outcome = handle_comment(ctx, comment_from_event(payload))
    finally:
        store.close()
    assert outcome.status == "handled", outcome
    return outcome


def occurrences(index: int, at_minutes: int, count: int = 1):
    return [error_event(index, at=START + timedelta(minutes=at_minutes), serial=s) for s in range(count)]


def signature_of(tmp_path: Path, issue: str) -> Signature:
    store = Store.open(tmp_path / "rounds.db")
    try:
        return next(signature for signature in store.signatures() if signature.issue_ref == issue)
    finally:
        store.close()


def test_a_paused_round_counts_but_writes_nothing_and_resume_files_what_waited(fake, tmp_path):
    round_at(fake, tmp_path, 5, occurrences(0, 0))
    command(fake, tmp_path, 1, "/rounds pause", minutes=6)
    before = len(fake.exchanges)
    paused = round_at(fake, tmp_path, 20, occurrences(0, 0) + occurrences(0, 10, 3) + occurrences(1, 12))
    assert fake.exchanges[before:] == [], "a paused round must not touch GitHub"
    assert any("paused by @alice" in note for note in paused.notes)
    assert paused.new == [] and [line.note for line in paused.deferred] == ["paused"]
    assert signature_of(tmp_path, "#1").total_count == 4
    assert len(fake.issues()) == 1

    command(fake, tmp_path, 1, "/rounds resume", minutes=21)
    resumed = round_at(fake, tmp_path, 30, occurrences(1, 12))
    assert [line.issue for line in resumed.new] == ["#2"]
    assert len(fake.issues()) == 2


def test_an_ignored_signature_is_counted_but_never_commented_on_or_reopened(fake, tmp_path):
    round_at(fake, tmp_path, 5, occurrences(0, 0))
    command(fake, tmp_path, 1, "/rounds ignore", minutes=6)
    issue = fake.repo.issues[1]
    fake.state.set_state(issue, "closed", "completed")
    comments_before = issue.comments
    report = round_at(fake, tmp_path, 30, occurrences(0, 20, 5))
    assert (issue.state, issue.comments) == ("closed", comments_before)
    assert report.regressed == [] and [line.note for line in report.updated] == [
        "muted by @alice until `unignore`"
    ]
    assert signature_of(tmp_path, "#1").total_count == 6
    assert "6" in issue.body  # the count in the body still updates


def test_ignore_until_n_occurrences_lapses_and_rounds_speaks_again(fake, tmp_path):
    round_at(fake, tmp_path, 5, occurrences(0, 0))
    command(fake, tmp_path, 1, "/rounds ignore until 3 occurrences", minutes=6)
    fake.state.set_state(fake.repo.issues[1], "closed", "completed")
    quiet = round_at(fake, tmp_path, 20, occurrences(0, 10, 2))
    assert quiet.regressed == [] and fake.repo.issues[1].state == "closed"
    loud = round_at(fake, tmp_path, 40, occurrences(0, 30, 2))
    assert [line.issue for line in loud.regressed] == ["#1"]
    assert any("no longer ignored" in note for note in loud.notes)
    store = Store.open(tmp_path / "rounds.db")
    try:
        assert controls.load_controls(store).mutes == {}
    finally:
        store.close()


def test_ignore_for_a_while_lapses_when_its_time_runs_out(fake, tmp_path):
    round_at(fake, tmp_path, 5, occurrences(0, 0))
    command(fake, tmp_path, 1, "/rounds ignore for 1h", minutes=6)
    fake.state.set_state(fake.repo.issues[1], "closed", "completed")
    assert round_at(fake, tmp_path, 30, occurrences(0, 20)).regressed == []
    later = round_at(fake, tmp_path, 90, occurrences(0, 80))
    assert [line.issue for line in later.regressed] == ["#1"]


def test_a_merged_signature_counts_its_occurrences_under_the_other_until_split(fake, tmp_path):
    round_at(fake, tmp_path, 5, occurrences(0, 0) + occurrences(1, 1))
    command(fake, tmp_path, 2, "/rounds merge #1", minutes=6)
    report = round_at(fake, tmp_path, 30, occurrences(1, 20, 4))
    assert signature_of(tmp_path, "#1").total_count == 5
    assert signature_of(tmp_path, "#2").total_count == 1
    assert [line.issue for line in report.updated] == ["#1"] and report.new == []
    assert len(fake.issues()) == 2

    command(fake, tmp_path, 2, "/rounds split", minutes=31)
    round_at(fake, tmp_path, 50, occurrences(1, 40, 2))
    assert signature_of(tmp_path, "#2").total_count == 3
    assert signature_of(tmp_path, "#1").total_count == 5


def test_rediagnose_reaches_the_next_round_with_its_hint_once(fake, tmp_path):
    round_at(fake, tmp_path, 5, occurrences(0, 0))
    command(fake, tmp_path, 1, "/rounds rediagnose the cookie is set by the gateway", minutes=6)
    recorder = Recorder()
    round_at(fake, tmp_path, 20, [], diagnoser=recorder, diagnosis_mode="recorder")
    assert [(r.signature_id, r.rediagnose_hint) for r in recorder.asked] == [
        (signature_of(tmp_path, "#1").id, "the cookie is set by the gateway")
    ]
    store = Store.open(tmp_path / "rounds.db")
    try:
        assert controls.pending_rediagnoses(store) == {}  # answered: later rounds do not ask again
    finally:
        store.close()
