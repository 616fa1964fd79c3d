"""`rounds db rebuild`: the signature database comes back from the bot's issues alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github import FakeGitHub
from fake_github.fixtures import REPOSITORY, TOKEN, running_fake
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_github.rounds import (
    START,
    error_event,
    round_against,
    tracker_for,
)
from fix_watch_samples import QUIET, fix_job, ignore, merge, on_version, open_pull

from rounds_bot import controls
from rounds_bot.cli.db import rebuild_command
from rounds_bot.github.db_rebuild import rebuild_into
from rounds_bot.github.rebuild import rebuild_database
from rounds_bot.marker import MarkedDiagnosis, MarkedSpend, MarkerState, read_marker, write_marker
from rounds_bot.marker_memory import restore_lifecycle
from rounds_bot.round.report import RoundReport
from rounds_bot.signature import Signature
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


REBUILT_FIELDS = (
    "id",
    "service",
    "title",
    "error_type",
    "normalized_message",
    "fingerprint_hash",
    "fingerprint_version",
    "first_tier",
    "explanation",
    "grouping_state",
    "first_seen",
    "last_seen",
    "total_count",
    "services",
    "versions",
    "environments",
    "related",
    "issue_ref",
)


def run(tmp_path: Path, fake: FakeGitHub, events: list, minutes: int) -> RoundReport:
    return round_against(fake, tmp_path, events, minutes)


def lost_database(tmp_path: Path, fake: FakeGitHub) -> dict[str, Signature]:
    """Two rounds, two issues closed by humans; returns the rows the database had before it was lost."""
    events = [error_event(i, serial=s) for i in range(5) for s in range(2)]
    run(tmp_path, fake, events, minutes=5)
    later = START + timedelta(minutes=20)
    run(tmp_path, fake, [*events, error_event(1, at=later), error_event(2, at=later)], minutes=30)
    fake.state.set_state(fake.repo.issues[3], "closed", "completed")
    fake.state.set_state(fake.repo.issues[4], "closed", "not_planned")
    store = Store.open(tmp_path / "rounds.db")
    rows = {signature.id: signature for signature in store.signatures()}
    store.close()
    (tmp_path / "rounds.db").unlink()  # lost; a stale -wal file may still lie beside it
    return rows


def test_the_database_is_rebuilt_from_the_issues_alone(tmp_path, fake_github: FakeGitHub):
    before = lost_database(tmp_path, fake_github)
    api = tracker_for(fake_github).api
    result = rebuild_into(
        tmp_path / "rounds.db", lambda store, journal: rebuild_database(api, store, journal)
    )
    assert (result.signatures, result.open, result.resolved, result.muted) == (5, 3, 1, 1)
    assert result.requests == 1
    store = Store.open(tmp_path / "rounds.db")
    after = {signature.id: signature for signature in store.signatures()}
    assert set(after) == set(before)
    for signature_id, row in before.items():
        for name in REBUILT_FIELDS:
            old, new = getattr(row, name), getattr(after[signature_id], name)
            assert new == old, (signature_id, name)
        old, new = row.representative, after[signature_id].representative
        assert (new.stacktrace, new.error_type, new.service) == (old.stacktrace, old.error_type, old.service)
    assert store.cursor("fixed") is None  # nothing of the lost file's write-ahead log came back
    statuses = sorted(store.status(sid) for sid in after)
    assert statuses == ["muted", "open", "open", "open", "resolved"]
    store.close()


def test_the_round_after_a_rebuild_files_no_twin_and_lists_only_what_changed(
    tmp_path, fake_github: FakeGitHub
):
    lost_database(tmp_path, fake_github)
    api = tracker_for(fake_github).api
    rebuild_into(tmp_path / "rounds.db", lambda store, journal: rebuild_database(api, store, journal))
    listed_before = len(fake_github.requests("issues/list-for-repo"))
    later = START + timedelta(minutes=50)
    run(tmp_path, fake_github, [error_event(0, at=later), error_event(9, at=later)], minutes=60)
    assert len(fake_github.issues()) == 6
    [listing] = fake_github.requests("issues/list-for-repo")[listed_before:]
    assert "since" in listing.query


def test_the_round_after_a_rebuild_counts_only_occurrences_after_each_issues_last_seen(
    tmp_path, fake_github: FakeGitHub
):
    before = lost_database(tmp_path, fake_github)
    api = tracker_for(fake_github).api
    rebuild_into(tmp_path / "rounds.db", lambda store, journal: rebuild_database(api, store, journal))
    later = START + timedelta(minutes=50)
    # the whole history again (the cursor was lost with the database), and one new occurrence of problem 1
    again = [error_event(i, serial=s) for i in range(5) for s in range(2)]
    again += [error_event(1, at=START + timedelta(minutes=20)), error_event(1, at=later)]
    report = run(tmp_path, fake_github, again, minutes=60)
    store = Store.open(tmp_path / "rounds.db")
    after = {signature.id: signature.total_count for signature in store.signatures()}
    store.close()
    grew = {sid: after[sid] - row.total_count for sid, row in before.items() if after[sid] != row.total_count}
    assert list(grew.values()) == [1]
    assert report.already_counted == len(again) - 1


def test_a_rebuilt_database_keeps_each_diagnosis_and_what_it_cost(fake_github: FakeGitHub):
    answer = {
        "classification": "server_bug",
        "root_cause": "the cache key omits the tenant",
        "suggested_fix": "add the tenant to the key",
        "confidence": "high",
    }
    marker = MarkerState(
        signature_id="sig_a",
        service="api",
        total_count=4,
        last_seen="2026-11-02T10:00:00+00:00",
        diagnosis=MarkedDiagnosis(
            cache_key="diag-v1-abc", revision="r1", at="2026-11-02T10:05:00+00:00", answer=answer
        ),
        spend=[
            MarkedSpend(at="2026-10-30T10:05:00+00:00", usd=0.25, model="m", note="new: timeout"),
            MarkedSpend(at="2026-11-02T10:05:00+00:00", usd=0.5, model="m", note="retry: ok"),
        ],
    )
    fake_github.state.create_issue(
        fake_github.repo, "[api] E", f"Body\n\n{write_marker(marker)}", ["rounds"], "github-actions[bot]"
    )
    store = Store.memory()
    result = rebuild_database(tracker_for(fake_github).api, store)
    assert result.partial == []
    cached = store.cached_diagnosis("diag-v1-abc")
    assert cached is not None and cached.outcome.diagnosis.root_cause == "the cache key omits the tenant"
    assert store.spent_since(datetime(2026, 11, 1, tzinfo=UTC)) == 0.5
    assert [booking.usd for booking in store.bookings("sig_a")] == [0.25, 0.5]
    assert store.counted_through() == {"sig_a": datetime(2026, 11, 2, 10, tzinfo=UTC)}


def a_cascade(trace: int, at: datetime) -> list:
    """One failed request: the payments service's error first, then checkout's, its caller, in one trace."""
    trace_id = f"{trace:032x}"
    cause = error_event(1, at=at).model_copy(
        update={"event_id": f"cause-{trace}", "trace_id": trace_id, "span_id": f"{trace:08x}a"}
    )
    effect = error_event(0, at=at + timedelta(seconds=1)).model_copy(
        update={
            "event_id": f"effect-{trace}",
            "trace_id": trace_id,
            "span_id": f"{trace:08x}b",
            "parent_span_id": None,
        }
    )
    return [cause, effect]


def test_a_database_rebuilt_from_the_issues_names_the_same_cascade(tmp_path, fake_github: FakeGitHub):
    events = [*a_cascade(1, START), *a_cascade(2, START + timedelta(seconds=30))]
    run(tmp_path, fake_github, events, minutes=5)
    store = Store.open(tmp_path / "rounds.db")
    lost = store.cascade_links()
    refs = {signature.id: signature.issue_ref for signature in store.signatures()}
    store.close()
    (tmp_path / "rounds.db").unlink()
    [(effect, links)] = [(sid, links) for sid, links in lost.items() if links.caused_by]
    assert dict(links.caused_by) == {next(iter(lost[effect].caused_by)): 2}  # two traces, one cause
    assert set(lost) == set(refs) and len(lost) == 2  # the cause's row keeps "causes" the same way
    marked = read_marker(fake_github.repo.issues[int(refs[effect].lstrip("#"))].body)
    assert marked is not None and marked.cascade is not None
    assert marked.cascade.caused_by == dict(links.caused_by) and marked.cascade.causes == {}
    api = tracker_for(fake_github).api
    rebuild_into(tmp_path / "rounds.db", lambda store, journal: rebuild_database(api, store, journal))
    store = Store.open(tmp_path / "rounds.db")
    assert store.cascade_links() == lost
    store.close()
    # the next round, whose window no longer holds the shared traces, still names the cause
    run(tmp_path, fake_github, [error_event(0, at=START + timedelta(minutes=20))], minutes=30)
    cause = next(iter(lost[effect].caused_by))
    body = fake_github.repo.issues[int(refs[effect].lstrip("#"))].body
    assert f"**Caused by** {refs[cause]}" in body


def test_a_marker_without_cascade_links_rebuilds_a_signature_without_any(fake_github: FakeGitHub):
    marker = '<!-- rounds:marker v1 {"service":"api","signature_id":"sig_a","total_count":2} -->'
    fake_github.state.create_issue(
        fake_github.repo, "[api] E", f"Body\n\n{marker}", ["rounds"], "github-actions[bot]"
    )
    store = Store.memory()
    assert rebuild_database(tracker_for(fake_github).api, store).signatures == 1
    assert store.cascade_links() == {}


def test_a_diagnosis_the_marker_garbles_is_reported_and_the_signature_still_rebuilt(fake_github: FakeGitHub):
    marker = MarkerState(
        signature_id="sig_a",
        service="api",
        diagnosis=MarkedDiagnosis(cache_key="k", revision="r1", at="2026-11-02T10:05:00+00:00", answer={}),
    )
    fake_github.state.create_issue(
        fake_github.repo, "[api] E", write_marker(marker), ["rounds"], "github-actions[bot]"
    )
    store = Store.memory()
    result = rebuild_database(tracker_for(fake_github).api, store)
    assert result.signatures == 1
    assert result.partial == ["#1: its diagnosis could not be read back (ValidationError); diagnosed again"]
    assert store.cached_diagnosis("k") is None


def test_unreadable_markers_and_twins_are_reported_not_guessed(tmp_path, fake_github: FakeGitHub):
    state, repo = fake_github.state, fake_github.repo
    marker = write_marker(MarkerState(signature_id="sig_a", service="api", total_count=2))
    state.create_issue(repo, "[api] first", f"Body\n\n{marker}", ["rounds"], "github-actions[bot]")
    state.create_issue(repo, "[api] copy", f"Copy\n\n{marker}", ["rounds"], "github-actions[bot]")
    state.create_issue(repo, "[api] garbled", "Body\n\n<!-- rounds:marker v1 {oops} -->", ["rounds"], "x")
    store = Store.memory()
    result = rebuild_database(tracker_for(fake_github).api, store)
    assert (result.signatures, result.unreadable, result.duplicates) == (1, ["#3"], ["#2"])
    assert store.signature("sig_a").issue_ref == "#1"


def test_a_thousand_issues_are_read_in_ten_requests(tmp_path, fake_github: FakeGitHub):
    for i in range(1000):
        marker = write_marker(MarkerState(signature_id=f"sig_{i:04d}", service="api", total_count=i))
        fake_github.state.create_issue(
            fake_github.repo, f"[api] E{i}", marker, ["rounds"], "github-actions[bot]"
        )
    store = Store.memory()
    result = rebuild_database(tracker_for(fake_github).api, store)
    assert (result.signatures, result.requests) == (1000, 10)


def test_the_rebuild_command_refuses_to_overwrite_then_replaces_with_force(
    tmp_path, fake_github: FakeGitHub, clean_env
):
    lost_database(tmp_path, fake_github)
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": REPOSITORY,
        "ROUNDS_GITHUB_API_URL": fake_github.base_url,
        "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
    }
    runner = CliRunner()
    first = runner.invoke(rebuild_command, [], env=env)
    assert first.exit_code == 0, first.output
    assert "5 signatures (3 open, 1 resolved, 1 muted)" in first.output
    assert "in 1 GitHub requests" in first.output
    again = runner.invoke(rebuild_command, [], env=env)
    assert again.exit_code == 2
    assert "already holds 5 signatures" in again.output and "--force" in again.output
    forced = runner.invoke(rebuild_command, ["--force"], env=env)
    assert forced.exit_code == 0, forced.output
    assert (tmp_path / "rounds.db.bak").exists()


def test_the_rebuild_command_names_a_missing_token(tmp_path, clean_env):
    env = {"GITHUB_REPOSITORY": REPOSITORY, "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db")}
    result = CliRunner().invoke(rebuild_command, [], env=env)
    assert result.exit_code == 2
    assert "GITHUB_TOKEN" in result.output
    assert not (tmp_path / "rounds.db").exists()
    assert json.dumps(env)  # the environment was all it had


# --- fix pull requests and ignores: what the markers remember ---------------------------------------------
def _state(path: Path) -> tuple[dict[str, list[dict[str, object]]], controls.Controls]:
    store = Store.open(path)
    try:
        return store.derived_rows(), controls.load_controls(store)
    finally:
        store.close()


def _records(rows: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    """The derived rows' full records, keyed by their table's key."""
    return {str(row.get("pr_number") or row["signature_id"]): json.loads(str(row["record"])) for row in rows}


def _differences(before: dict[str, dict[str, object]], after: dict[str, dict[str, object]]) -> list[str]:
    found = [f"{key}: only before" for key in before.keys() - after.keys()]
    found += [f"{key}: only after" for key in after.keys() - before.keys()]
    for key in sorted(before.keys() & after.keys()):
        for name in sorted({*before[key], *after[key]}):
            if before[key].get(name) != after[key].get(name):
                found.append(f"{key}.{name}: {before[key].get(name)!r} -> {after[key].get(name)!r}")
    return found


@pytest.fixture
def pulls_fake() -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake()


def a_database_with_a_fix_and_an_ignore(tmp_path: Path, fake: PullsFakeGitHub) -> tuple[str, str, int]:
    """Problem 0 gets a fix that is merged and released (its quiet period running); problem 1 is ignored for
    5 more occurrences, then closed by a person; problem 2 is left alone, problem 4 (the same service as 0)
    shows the release. Returns the fixed and the ignored signature, and the pull request."""
    path = tmp_path / "rounds.db"
    events = [error_event(i, serial=s) for i in range(3) for s in range(4)]
    round_against(fake, tmp_path, events, minutes=5)
    store = Store.open(path)
    ids = {s.issue_ref: s.id for s in store.signatures()}
    store.close()
    fixed, ignored = ids["#1"], ids["#2"]
    pr = open_pull(fake, path, fixed, 1, START + timedelta(minutes=30))
    merged = START + timedelta(hours=2)
    merge(fake, pr, 1, merged)
    fix_job(fake, path, merged + timedelta(minutes=10))
    # another problem of the same service (`checkout`) shows the release
    release = [on_version(error_event(4), "1.5.0", merged + timedelta(hours=1))]
    round_against(fake, tmp_path, [*events, *release], minutes=200)
    ignore(path, ignored, START + timedelta(hours=4), occurrences=5)
    fake.state.set_state(fake.repo.issues[2], "closed", "completed")  # then a person closes it
    fix_job(fake, path, START + timedelta(hours=5))  # the fix job brings the markers up to date
    return fixed, ignored, pr


def test_a_rebuilt_database_has_the_fixes_and_the_ignore_of_the_lost_one(tmp_path, pulls_fake):
    _, ignored, _ = a_database_with_a_fix_and_an_ignore(tmp_path, pulls_fake)
    path = tmp_path / "rounds.db"
    before, controls_before = _state(path)
    assert [
        (row["status"], json.loads(str(row["record"]))["released_version"]) for row in before["fixes"]
    ] == [("merged", "1.5.0")]
    assert controls_before.mutes[ignored].until_occurrences == 5

    result = rebuild_into(
        path, lambda store, journal: rebuild_database(tracker_for(pulls_fake).api, store, journal)
    )
    assert (result.signatures, result.fixes, result.ignored, result.requests) == (4, 1, 1, 1)
    after, controls_after = _state(path)

    # what the lost database knew of the fix, the issues and the ignore, the rebuilt one knows too ...
    assert _differences(_records(before["fixes"]), _records(after["fixes"])) == []
    assert controls_after == controls_before
    # ... except when each problem was first detected: the issue's creation stands in for it
    created = {f"#{n}": issue.created_at.isoformat() for n, issue in pulls_fake.repo.issues.items()}
    expected = [
        f"{row['signature_id']}.detected_at: {json.loads(str(row['record']))['detected_at']!r} -> "
        f"{created[str(row['issue'])]!r}"
        for row in before["incidents"]
    ]
    assert _differences(_records(before["incidents"]), _records(after["incidents"])) == expected


def test_after_a_rebuild_the_fix_is_evaluated_and_the_ignored_issue_stays_quiet(tmp_path, pulls_fake):
    fixed, ignored, pr = a_database_with_a_fix_and_an_ignore(tmp_path, pulls_fake)
    path = tmp_path / "rounds.db"
    rebuild_into(path, lambda store, journal: rebuild_database(tracker_for(pulls_fake).api, store, journal))
    comments_before = len(pulls_fake.replies(2))
    later = START + timedelta(hours=6)
    again = [error_event(1, at=later, serial=s) for s in range(3)]  # the ignored problem, 3 of its 5
    report = round_against(pulls_fake, tmp_path, again, minutes=6 * 60 + 5)
    assert report.regressed == [] and report.diagnosed == []
    store = Store.open(path)
    assert store.runs()[-1].plans == {ignored: "muted"}
    store.close()
    issue = pulls_fake.repo.issues[2]
    assert (issue.state, "regression" in issue.labels) == ("closed", False)
    assert len(pulls_fake.replies(2)) == comments_before

    notes = fix_job(pulls_fake, path, START + timedelta(hours=3) + QUIET + timedelta(minutes=5))
    assert f"{fixed}: resolved by #{pr}; #1 closed as completed" in notes
    [evaluation] = [c for c in pulls_fake.replies(1) if "### Fix evaluation" in c]
    assert "`1.5.0`" in evaluation
    assert (pulls_fake.repo.issues[1].state, pulls_fake.repo.issues[1].state_reason) == (
        "closed",
        "completed",
    )


def test_restoring_a_markers_fixes_and_ignore_twice_adds_nothing(tmp_path, pulls_fake):
    fixed, ignored, _ = a_database_with_a_fix_and_an_ignore(tmp_path, pulls_fake)
    store = Store.memory()
    rebuild_database(tracker_for(pulls_fake).api, store)
    events = store.db.execute("select count(*) from events").fetchone()[0]
    for number, signature_id in ((1, fixed), (2, ignored)):
        marker = read_marker(pulls_fake.repo.issues[number].body)
        assert marker is not None
        with store.transaction():
            again = restore_lifecycle(
                store, signature_id, marker.memory, issue_ref=f"#{number}", issue_url="", at=START
            )
        assert again == 0
    assert store.db.execute("select count(*) from events").fetchone()[0] == events
