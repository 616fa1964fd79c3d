"""One round: windows and cursors, occurrences counted once, all-or-nothing commits, regressions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.errors import TrackerError
from rounds_bot.models import ErrorEvent
from rounds_bot.round.run import INGEST_DELAY, run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.tracker.dryrun import DryRunTracker

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


class ListSource:
    """A source that returns fixed events inside the window it is asked for."""

    name = "test:list"

    def __init__(self, events: list[ErrorEvent]) -> None:
        self.events = events
        self.windows: list[Window] = []

    def poll(self, window: Window, known_group_ids: frozenset[str]) -> PollResult:
        self.windows.append(window)
        return PollResult(events=[e for e in self.events if window.start <= e.timestamp < window.end])


class FailingTracker(DryRunTracker):
    """Fails on the n-th create, like a crash in the middle of filing."""

    def __init__(self, folder, fail_at: int) -> None:
        super().__init__(folder)
        self.calls = 0
        self.fail_at = fail_at

    def create(self, draft):
        self.calls += 1
        if self.calls == self.fail_at:
            raise TrackerError("simulated outage")
        return super().create(draft)


def event(n: int, minutes_ago: int, message: str = "user {n} not found", error_type: str = "LookupError"):
    return ErrorEvent(
        event_id=f"e{n}-{message[:10]}",
        timestamp=NOW - timedelta(minutes=minutes_ago),
        service="api",
        error_type=error_type,
        message=message.format(n=n),
    )


@pytest.fixture
def settings(clean_env):
    return load_settings()


def two_problems() -> list[ErrorEvent]:
    first = [event(n, 10 + n % 5) for n in range(20)]
    second = [event(n, 5, "payment gateway timed out after {n} ms", "TimeoutError") for n in range(7)]
    return first + second


def test_first_round_reads_the_lookback_and_later_rounds_read_from_the_cursor(settings, fresh_db, tmp_path):
    source = ListSource(two_problems())
    run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    later = NOW + timedelta(minutes=15)
    run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=later)
    first, second = source.windows
    assert first.end == NOW - INGEST_DELAY
    assert first.start == first.end - timedelta(minutes=settings.error_lookback_minutes)
    assert second.start == first.end - timedelta(seconds=settings.cursor_overlap_seconds)


def test_overlapping_windows_never_count_an_occurrence_twice(clean_env, fresh_db, tmp_path):
    clean_env.setenv("ROUNDS_CURSOR_OVERLAP_SECONDS", "3600")
    settings = load_settings()
    source = ListSource(two_problems())
    report = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    assert len(report.new) == 2
    assert report.occurrences_counted == 27
    again = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(seconds=60))
    assert again.quiet
    assert again.already_counted == 27
    assert sum(signature.total_count for signature in fresh_db.signatures()) == 27


def test_new_occurrences_update_counts_in_place(settings, fresh_db, tmp_path):
    source = ListSource(two_problems())
    run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    source.events.append(event(99, -5))
    report = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(minutes=10))
    assert [line.round_count for line in report.updated] == [1]
    assert not report.new
    assert len(list(tmp_path.glob("*.md"))) == 2


def test_a_round_that_fails_half_way_leaves_the_database_untouched_and_the_retry_files_no_twin(
    settings, fresh_db, tmp_path
):
    source = ListSource(two_problems())
    with pytest.raises(TrackerError):
        run_round(settings, source, FailingTracker(tmp_path, fail_at=2), fresh_db, now=NOW)
    assert fresh_db.signatures() == []
    assert fresh_db.cursor(source.name) is None
    assert fresh_db.runs() == []
    report = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW + timedelta(minutes=1))
    assert len(list(tmp_path.glob("*.md"))) == 2
    assert report.occurrences_counted == 27
    kinds = sorted(line.note or "new" for line in report.new + report.updated)
    assert len(kinds) == 2


def test_events_are_logged_once_per_signature(settings, fresh_db, tmp_path):
    source = ListSource(two_problems())
    run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    for signature in fresh_db.signatures():
        kinds = [e["kind"] for e in fresh_db.events_of(signature.id)]
        assert kinds == ["IncidentDetected", "IssueFiled"]
        assert fresh_db.status(signature.id) == "open"


def test_secrets_in_messages_never_reach_the_issue_or_the_database(settings, fresh_db, tmp_path):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    leaky = ErrorEvent(
        event_id="leak-1",
        timestamp=NOW - timedelta(minutes=3),
        service="api",
        error_type="AuthError",
        message=f"login failed for alice@example.com with token {token}",
        stacktrace=f'Traceback (most recent call last):\n  File "/app/auth.py", line 3, in login\n'
        f"    check({token!r})\nAuthError: bad token {token}\n",
    )
    report = run_round(settings, ListSource([leaky]), DryRunTracker(tmp_path), fresh_db, now=NOW)
    draft = (tmp_path / f"{report.new[0].signature_id}.md").read_text()
    stored = json.dumps(list(fresh_db.db["signatures"].rows))
    for text in (draft, stored, report.model_dump_json()):
        assert token not in text
        assert "alice@example.com" not in text


def test_signatures_waiting_for_the_same_reason_share_one_copy_of_it(settings, fresh_db, tmp_path):
    """Each new signature below the diagnosis threshold waits for the same reason: the report says it for
    each, from one copy the round keeps."""
    kinds = [
        ("disk quota exceeded", "QuotaError"),
        ("socket closed", "SocketError"),
        ("bad header", "HeaderError"),
    ]
    source = ListSource([event(n, 5, message, error_type) for n, (message, error_type) in enumerate(kinds)])
    report = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    notes = [line.note for line in report.waiting]
    assert len(notes) == len(kinds) and notes[0].startswith("new signature below the threshold")
    assert all(note is notes[0] for note in notes)
