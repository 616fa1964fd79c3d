"""After a merge, the issue tells the truth: it stays open until the fix is seen running (a newer
`service.version` in the telemetry), says so once, and is closed only with an evaluation; a service that
never reports a version is judged from the merge time, and says so. The rates' periods are what they say."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import START, error_event, round_against
from fix_watch_samples import QUIET, fix_job, ignore, merge, on_version, open_pull

from rounds_bot.fixing.evaluation import before_label, measure, span
from rounds_bot.models import ErrorEvent
from rounds_bot.signature import Signature
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop
MERGED = START + timedelta(hours=2)


@pytest.fixture
def fake() -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake()


def unversioned(count: int, at: datetime) -> list[ErrorEvent]:
    return [on_version(error_event(0), None, at, serial) for serial in range(count)]


def filed(fake: PullsFakeGitHub, tmp_path: Path, events: list[ErrorEvent]) -> tuple[str, int]:
    """One round files the problem's issue (#1) and rounds opens a fix for it; the signature and the pull."""
    round_against(fake, tmp_path, events, minutes=5)
    store = Store.open(tmp_path / "rounds.db")
    [signature] = store.signatures()
    store.close()
    return signature.id, open_pull(
        fake, tmp_path / "rounds.db", signature.id, 1, START + timedelta(minutes=30)
    )


def fix_of(tmp_path: Path, signature_id: str) -> dict[str, object]:
    store = Store.open(tmp_path / "rounds.db")
    try:
        return store.fix_records(signature_id)[-1].model_dump()
    finally:
        store.close()


def waiting(fake: PullsFakeGitHub, pr: int) -> list[str]:
    return [c for c in fake.replies(1) if f"<!-- rounds:waiting {pr} -->" in c]


def evaluations(fake: PullsFakeGitHub) -> list[str]:
    return [c for c in fake.replies(1) if "### Fix evaluation" in c]


def test_a_service_without_versions_is_judged_from_the_merge_time_and_says_so(tmp_path, fake):
    signature_id, pr = filed(fake, tmp_path, unversioned(4, START))
    merge(fake, pr, 1, MERGED)
    fix_job(fake, tmp_path / "rounds.db", MERGED + timedelta(minutes=10))
    [told] = waiting(fake, pr)
    assert "The telemetry of `checkout` carries no `service.version`" in told
    assert "it judges from the merge time. If the problem does not occur for 24 hours after the merge" in told
    assert fake.repo.issues[1].state == "open"

    notes = fix_job(fake, tmp_path / "rounds.db", MERGED + QUIET - timedelta(hours=1))
    assert f"{signature_id}: quiet for 23.0 of 24 h (no version information: from the merge)" in notes
    notes = fix_job(fake, tmp_path / "rounds.db", MERGED + QUIET + timedelta(minutes=1))
    resolved = f"{signature_id}: resolved by #{pr}; #1 closed as completed"
    assert f"{resolved} (no version information: judged from the merge time)" in notes
    [evaluation] = evaluations(fake)
    assert "**No version information: judged from the merge time.**" in evaluation
    assert (
        "the problem has not occurred for 24 hours since the merge (or its last occurrence after it)"
        in evaluation
    )
    assert "| 2 hours before the merge (counted since 2026-03-02 09:00 UTC) | 4 | 2.00 |" in evaluation
    assert (fake.repo.issues[1].state, fake.repo.issues[1].state_reason) == ("closed", "completed")
    assert (fix_of(tmp_path, signature_id)["status"], fix_of(tmp_path, signature_id)["judged_from"]) == (
        "resolved",
        "merge",
    )
    assert len(waiting(fake, pr)) == 1


def test_a_service_with_versions_waits_for_its_release_however_quiet_it_is(tmp_path, fake):
    signature_id, pr = filed(fake, tmp_path, [error_event(0, serial=s) for s in range(4)])
    merge(fake, pr, 1, MERGED)
    fix_job(fake, tmp_path / "rounds.db", MERGED + timedelta(minutes=10))
    for days in (2, 7):  # the quiet period is one day: two, then seven, and still no newer version
        notes = fix_job(fake, tmp_path / "rounds.db", MERGED + timedelta(days=days))
        waits = (
            f"{signature_id}: merged {days} days ago; waits for a release newer than 1.4.2 in the telemetry"
        )
        assert waits in notes
    assert fix_of(tmp_path, signature_id)["status"] == "merged"
    assert evaluations(fake) == [] and len(waiting(fake, pr)) == 1 and fake.repo.issues[1].state == "open"

    # the release shows in another problem of the same service: the quiet period starts there
    released = MERGED + timedelta(days=7, hours=1)
    round_against(fake, tmp_path, [on_version(error_event(4), "1.5.0", released)], minutes=60 * 24 * 7 + 200)
    assert fix_of(tmp_path, signature_id)["released_version"] == "1.5.0"
    fix_job(fake, tmp_path / "rounds.db", released + QUIET + timedelta(minutes=1))
    [evaluation] = evaluations(fake)
    assert "The first release after it, `1.5.0`, was first seen at 2026-03-09T12:00:00+00:00" in evaluation
    assert fix_of(tmp_path, signature_id)["judged_from"] == "release"


def test_an_ignored_issue_is_neither_reopened_nor_told_when_its_fix_is_merged(tmp_path, fake):
    signature_id, pr = filed(fake, tmp_path, [error_event(0, serial=s) for s in range(4)])
    ignore(tmp_path / "rounds.db", signature_id, START + timedelta(hours=1), occurrences=50)
    merge(fake, pr, 1, MERGED)
    fix_job(fake, tmp_path / "rounds.db", MERGED + timedelta(minutes=10))
    assert fix_of(tmp_path, signature_id)["status"] == "merged"
    assert fake.repo.issues[1].state == "closed" and waiting(fake, pr) == []


# --- the periods the rates cover ---------------------------------------------------------------------------
def with_occurrences(first_seen: datetime, buckets: dict[datetime, int], **fields: object) -> Store:
    store = Store.memory()
    event = error_event(0, at=first_seen)
    signature = Signature(
        id="sig_a", service="checkout", title="t", representative=event, first_seen=first_seen,
        last_seen=max(buckets), total_count=sum(buckets.values()), **fields,
    )  # fmt: skip
    with store.transaction():
        store.save(signature)
        store.add_occurrences("sig_a", {moment.isoformat(): count for moment, count in buckets.items()})
    return store


def test_a_young_database_measures_the_rate_before_the_merge_over_the_time_it_has_and_says_how_long():
    merged = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    first = merged - timedelta(minutes=41)
    store = with_occurrences(first, {first: 6, merged - timedelta(minutes=10): 4})
    rates = measure(store, "sig_a", merged=merged, released=None, now=merged)
    before = rates.before_period
    assert (before.start, before.end, before.occurrences) == (first, merged, 10)
    assert before.rate == round(10 / (41 / 60), 4) == 14.6341
    assert before_label(before) == "41 minutes before the merge (counted since 2026-03-02 09:19 UTC)"


def test_an_older_problem_is_measured_over_the_7_days_before_the_merge():
    merged = datetime(2026, 3, 20, 10, 0, tzinfo=UTC)
    first = merged - timedelta(days=30)
    store = with_occurrences(first, {first: 100, merged - timedelta(days=3): 84})
    before = measure(store, "sig_a", merged=merged, released=None, now=merged).before_period
    assert (before.hours, before.occurrences, before.rate) == (168.0, 84, 0.5)
    assert before_label(before) == "7 days before the merge"


def test_a_rebuilt_database_counts_only_from_the_moment_it_took_the_count_over():
    """Its buckets before the rebuild are gone: a period reaching back before it would count them as zero."""
    merged = datetime(2026, 3, 20, 10, 0, tzinfo=UTC)
    rebuilt = merged + timedelta(hours=5)
    store = with_occurrences(
        merged - timedelta(days=30), {rebuilt + timedelta(hours=1): 3}, counted_through=rebuilt
    )
    now = rebuilt + timedelta(hours=10)
    rates = measure(store, "sig_a", merged=merged, released=merged + timedelta(hours=1), now=now)
    after = rates.after_merge_period
    assert (after.start, after.hours, after.occurrences, rates.after_merge) == (rebuilt, 10.0, 3, 0.3)
    assert rates.after_release_period is not None and rates.after_release_period.start == rebuilt
    assert rates.before_period.hours == 0.0 and rates.before is None  # nothing counted before the merge


@pytest.mark.parametrize(
    ("hours", "text"),
    [(41 / 60, "41 minutes"), (1 / 60, "1 minute"), (2.0, "2 hours"), (2.5, "2.5 hours"), (72, "3 days")],
)
def test_spans_read_as_people_say_them(hours, text):
    assert span(hours) == text


def test_a_merge_seen_after_its_release_ran_quietly_long_enough_is_evaluated_not_reopened(tmp_path, fake):
    """The fix job did not run for days: the release ran in the rounds meanwhile, quiet for longer than the
    quiet period. No reopening and re-closing in one run: the evaluation, and the issue stays closed."""
    signature_id, pr = filed(fake, tmp_path, [error_event(0, serial=s) for s in range(4)])
    merge(fake, pr, 1, MERGED)
    released = MERGED + timedelta(hours=1)
    round_against(fake, tmp_path, [on_version(error_event(4), "1.5.0", released)], minutes=200)
    notes = fix_job(fake, tmp_path / "rounds.db", released + QUIET + timedelta(hours=3))
    assert f"{signature_id}: the fix in #{pr} shipped in 1.5.0" in notes
    assert f"{signature_id}: resolved by #{pr}; #1 closed as completed" in notes
    assert waiting(fake, pr) == [] and len(evaluations(fake)) == 1
    assert (fake.repo.issues[1].state, fake.repo.issues[1].state_reason) == ("closed", "completed")
    reopened = [
        e
        for e in fake.exchanges
        if e.operation == "issues/update" and (e.request_json or {}).get("state") == "open"
    ]
    assert not reopened  # the body may say "open" (its next step names a file to open); the state must not
