"""The GitHub tracker against the fake GitHub: one issue per signature, never a twin, clear errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import FakeGitHub
from fake_github.fixtures import REPOSITORY, TOKEN, running_fake
from fake_github.rounds import tracker_for

from rounds_bot.errors import ConfigError, TrackerError
from rounds_bot.github.journal import Journal
from rounds_bot.github.labels import label_spec
from rounds_bot.github.tracker import github_tracker_from_settings
from rounds_bot.marker import MarkerState, read_marker, write_marker
from rounds_bot.tracker.base import IssueDraft, TrackerStopped

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


def draft(signature_id: str = "sig_a", text: str = "Body", service: str = "api") -> IssueDraft:
    marker = write_marker(MarkerState(signature_id=signature_id, service=service, total_count=1))
    return IssueDraft(
        signature_id=signature_id,
        title=f"[{service}] KeyError: 'user' ({signature_id})",
        body=f"{text}\n\n{marker}",
        labels=["rounds", f"service:{service}"],
    )


def test_create_files_one_issue_with_the_marker_and_the_labels(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    assert tracker.find("sig_a") is None
    ref = tracker.create(draft())
    [issue] = fake_github.issues()
    assert ref.ref == f"#{issue.number}"
    assert read_marker(issue.body).signature_id == "sig_a"
    assert issue.labels == ["rounds", "service:api"]
    assert tracker.find("sig_a") == ref


def test_labels_are_created_once_with_colour_and_description(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    tracker.create(draft("sig_a"))
    tracker.create(draft("sig_b"))
    labels = fake_github.repo.labels
    assert labels["rounds"].color == label_spec("rounds").color
    assert labels["service:api"].description == "rounds: errors of service api"
    assert len(fake_github.requests("issues/create-label")) == 2
    assert len(fake_github.requests("issues/list-labels-for-repo")) == 1


def test_a_label_a_human_already_made_is_used_as_it_is(fake_github: FakeGitHub):
    fake_github.state.ensure_label(fake_github.repo, "rounds").color = "000000"
    tracker_for(fake_github).create(draft())
    assert fake_github.repo.labels["rounds"].color == "000000"
    assert [e.request_json["name"] for e in fake_github.requests("issues/create-label")] == ["service:api"]


def test_a_lost_database_never_produces_a_twin(fake_github: FakeGitHub):
    tracker_for(fake_github).create(draft())
    # a new run with an empty journal and no database: it lists the bot's issues and finds the marker
    fresh = tracker_for(fake_github)
    ref = fresh.find("sig_a")
    assert ref is not None
    again = fresh.create(draft(text="Body, counted again"))
    assert again.ref == ref.ref
    assert len(fake_github.issues()) == 1
    assert fake_github.issues()[0].body.startswith("Body, counted again")


def test_find_never_uses_search_so_a_lagging_index_cannot_cause_a_twin(fake_github: FakeGitHub):
    from datetime import timedelta

    fake_github.search_lag = timedelta(minutes=10)
    tracker_for(fake_github).create(draft())
    assert tracker_for(fake_github).find("sig_a") is not None
    assert fake_github.requests("search/issues-and-pull-requests") == []


def test_update_edits_the_body_in_place_and_skips_an_edit_that_changes_nothing(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    tracker.update(ref, draft(text="Body v2"))
    tracker.update(ref, draft(text="Body v2"))
    assert len(fake_github.requests("issues/update")) == 1
    assert fake_github.issues()[0].body.startswith("Body v2")
    assert fake_github.issues()[0].comments == 0


def test_an_update_keeps_the_labels_a_human_added(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    fake_github.repo.issues[1].labels.append("triaged")
    fake_github.state.ensure_label(fake_github.repo, "triaged")
    fresh = tracker_for(fake_github, tracker.journal)
    fresh.find("sig_a")
    fresh.update(ref, draft(text="Body v2"), comment="Regression", reopen=True)
    assert set(fake_github.repo.issues[1].labels) == {"rounds", "service:api", "triaged", "regression"}


def test_a_regression_reopens_with_a_label_and_one_comment(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    issue = fake_github.repo.issues[1]
    fake_github.state.set_state(issue, "closed", "completed")
    next_round = tracker_for(fake_github, tracker.journal)
    found = next_round.find("sig_a")
    assert (found.state, found.state_reason) == ("closed", "completed")
    next_round.update(
        found, draft(text="Body v2"), comment="Regression: 4 occurrences in this round.", reopen=True
    )
    assert (issue.state, issue.state_reason) == ("open", "reopened")
    assert "regression" in issue.labels
    [comment] = fake_github.repo.comments.values()
    assert comment.body.startswith("Regression: 4 occurrences in this round.")
    assert ref.ref == found.ref


def test_closed_as_not_planned_stays_closed_while_counts_update(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    tracker.create(draft())
    issue = fake_github.repo.issues[1]
    fake_github.state.set_state(issue, "closed", "not_planned")
    next_round = tracker_for(fake_github, tracker.journal)
    found = next_round.find("sig_a")
    assert found.state_reason == "not_planned"
    next_round.update(found, draft(text="Body, 9 occurrences"))
    assert issue.state == "closed" and issue.body.startswith("Body, 9 occurrences")
    assert "state" not in fake_github.requests("issues/update")[-1].request_json


def test_at_most_one_comment_per_issue_per_round_and_the_rest_waits(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    tracker.update(ref, draft(text="v2"), comment="Spike: 40 occurrences")
    tracker.update(ref, draft(text="v3"), comment="Diagnosis added")
    notes = tracker.finish_round()
    assert len(fake_github.repo.comments) == 1
    assert any("waits for the next round" in note for note in notes)
    next_round = tracker_for(fake_github, tracker.journal)
    next_round.finish_round()
    bodies = [c.body for c in fake_github.repo.comments.values()]
    assert len(bodies) == 2 and bodies[1].startswith("Diagnosis added")


def test_the_comment_cap_defers_comments_to_the_next_round(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, max_comments_per_round=1)
    refs = [tracker.create(draft(f"sig_{i}")) for i in range(3)]
    for i, ref in enumerate(refs):
        tracker.update(ref, draft(f"sig_{i}", text="v2"), comment=f"Spike on {i}")
    assert len(fake_github.repo.comments) == 1
    assert sum("comment cap" in note for note in tracker.finish_round()) == 2
    tracker_for(fake_github, tracker.journal, max_comments_per_round=1).finish_round()
    tracker_for(fake_github, tracker.journal, max_comments_per_round=1).finish_round()
    assert sorted(c.body.split("\n")[0] for c in fake_github.repo.comments.values()) == [
        "Spike on 0",
        "Spike on 1",
        "Spike on 2",
    ]


def test_a_comment_whose_answer_was_lost_is_not_posted_twice(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    fake_github.fail(502, "issues/create-comment", applied=True)
    tracker.update(ref, draft(text="v2"), comment="Regression: 2 occurrences")
    tracker_for(fake_github, tracker.journal).finish_round()  # the next run checks before posting
    assert len(fake_github.repo.comments) == 1


def test_a_create_whose_answer_was_lost_is_found_instead_of_filed_again(fake_github: FakeGitHub):
    fake_github.fail(502, "issues/create", applied=True)
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    assert ref.ref == "#1"
    assert len(fake_github.issues()) == 1
    assert tracker.journal.intent("create:sig_a").status == "done"


def test_a_5xx_before_the_create_is_a_tracker_error_and_no_issue(fake_github: FakeGitHub):
    fake_github.fail(503, "issues/create")
    tracker = tracker_for(fake_github)
    with pytest.raises(TrackerError, match="GitHub answered 503") as caught:
        tracker.create(draft())
    assert "next round retries" in str(caught.value)
    assert fake_github.issues() == []
    assert tracker_for(fake_github, tracker.journal).create(draft()).ref == "#1"


def test_reads_are_retried_after_a_5xx(fake_github: FakeGitHub):
    fake_github.fail(502, "issues/list-for-repo")
    tracker = tracker_for(fake_github)
    assert tracker.find("sig_a") is None
    assert [e.status for e in fake_github.requests("issues/list-for-repo")] == [502, 200]


def test_retry_after_is_honoured(fake_github: FakeGitHub):
    fake_github.fail(429, "issues/create", headers={"Retry-After": "3"}, message="Too many requests")
    sleeps: list[float] = []
    tracker_for(fake_github, sleeps=sleeps).create(draft())
    assert sleeps == [3.0]
    assert len(fake_github.issues()) == 1


def test_a_spent_primary_limit_waits_until_the_reset(fake_github: FakeGitHub):
    fake_github.rate.remaining = 0
    now = fake_github.clock().timestamp()
    fake_github.rate.reset = int(now) + 4
    sleeps: list[float] = []
    tracker = tracker_for(fake_github, sleeps=sleeps, rate_limit_reserve=0)
    # the wait is measured against the tracker's clock: held where the reset was set, so a loaded machine's
    # delay before the answer is read does not shorten it
    tracker.api.waiter.clock = lambda: now

    def refill(seconds: float) -> None:
        sleeps.append(seconds)
        fake_github.rate.remaining = 1000

    tracker.api.waiter.sleep = refill
    tracker.find("sig_a")
    assert 3.0 <= sleeps[0] <= 6.0
    assert [e.status for e in fake_github.requests("issues/list-for-repo")] == [403, 200]


def test_a_rate_limit_longer_than_the_round_may_wait_stops_cleanly(fake_github: FakeGitHub):
    fake_github.fail(
        403,
        "issues/create",
        headers={"Retry-After": "3600"},
        message="You have exceeded a secondary rate limit",
    )
    with pytest.raises(TrackerStopped, match="3600 s"):
        tracker_for(fake_github, max_wait_seconds=60).create(draft())
    assert fake_github.issues() == []


def test_the_call_budget_stops_cleanly(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github, max_requests_per_round=5)
    tracker.create(draft("sig_a"))  # list issues, list labels, create two labels, create the issue
    with pytest.raises(TrackerStopped, match=r"request budget \(5\)"):
        tracker.create(draft("sig_b"))
    assert len(fake_github.issues()) == 1


def test_the_hourly_limit_reserve_stops_before_it_is_spent(fake_github: FakeGitHub):
    fake_github.rate.remaining = 12
    tracker = tracker_for(fake_github, rate_limit_reserve=10)
    tracker.find("sig_a")
    with pytest.raises(TrackerStopped, match="nearly spent"):
        tracker.create(draft())


def test_a_bad_token_says_so(fake_github: FakeGitHub):
    with pytest.raises(TrackerError, match="rejected the token") as caught:
        tracker_for(fake_github, token="wrong").find("sig_a")
    assert "GITHUB_TOKEN" in str(caught.value)


def test_a_token_without_issues_write_names_the_missing_permission(fake_github: FakeGitHub):
    fake_github.add_token("read-only", issues="read")
    tracker = tracker_for(fake_github, token="read-only")
    assert tracker.find("sig_a") is None
    with pytest.raises(TrackerError, match="lacks the `issues: write` permission") as caught:
        tracker.create(draft())
    assert "permissions:" in str(caught.value)


def test_an_unknown_repository_is_named(fake_github: FakeGitHub):
    with pytest.raises(TrackerError, match="repository octo/missing was not found") as caught:
        tracker_for(fake_github, repository="octo/missing").find("sig_a")
    assert "GITHUB_REPOSITORY" in str(caught.value)


def test_disabled_issues_are_explained(fake_github: FakeGitHub):
    fake_github.repo.has_issues = False
    tracker = tracker_for(fake_github)
    assert tracker.find("sig_a") is None
    with pytest.raises(TrackerError, match="410") as caught:
        tracker.create(draft())
    assert "enable them" in str(caught.value)


def test_a_body_over_githubs_limit_is_refused_before_sending(fake_github: FakeGitHub):
    too_long = draft(text="x" * 70_000)
    with pytest.raises(TrackerError, match="over GitHub's limit"):
        tracker_for(fake_github).create(too_long)
    assert fake_github.requests("issues/create") == []


def test_a_marker_a_human_deleted_is_restored_through_the_database_ref(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    fake_github.repo.issues[1].body = "A human rewrote the whole body."
    fake_github.state.touch(fake_github.repo.issues[1])
    next_round = tracker_for(fake_github)
    found = next_round.find("sig_a", known_ref=ref.ref)
    assert found is not None and found.ref == ref.ref
    next_round.update(found, draft(text="Body v2"))
    assert read_marker(fake_github.repo.issues[1].body).signature_id == "sig_a"
    assert len(fake_github.issues()) == 1


def test_a_garbled_marker_is_matched_by_title_when_the_database_is_lost(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    tracker.create(draft())
    issue = fake_github.repo.issues[1]
    issue.body = issue.body.replace('"signature_id"', '"signature_')
    next_round = tracker_for(fake_github)
    assert next_round.find("sig_a") is None
    ref = next_round.create(draft(text="Body v2"))
    assert ref.ref == "#1" and len(fake_github.issues()) == 1
    assert read_marker(issue.body).signature_id == "sig_a"
    assert any("no readable marker" in note for note in next_round.finish_round())


def test_pull_requests_with_the_label_are_ignored(fake_github: FakeGitHub):
    issue = fake_github.state.create_issue(
        fake_github.repo, "a PR", write_marker(MarkerState(signature_id="sig_a")), ["rounds"], "x"
    )
    issue.pull = True
    assert tracker_for(fake_github).find("sig_a") is None


def test_an_unchanged_listing_costs_no_quota(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    tracker.create(draft())
    journal = tracker.journal
    tracker_for(fake_github, journal).find("sig_a")
    used = fake_github.rate.used
    tracker_for(fake_github, journal).find("sig_a")
    assert fake_github.requests("issues/list-for-repo")[-1].status == 304
    assert fake_github.rate.used == used


def test_the_listing_pages_through_many_issues(fake_github: FakeGitHub):
    for i in range(250):
        marker = write_marker(MarkerState(signature_id=f"sig_{i}"))
        fake_github.state.create_issue(
            fake_github.repo, f"issue {i}", marker, ["rounds"], "github-actions[bot]"
        )
    tracker = tracker_for(fake_github)
    assert tracker.find("sig_249").ref == "#250"
    assert len(fake_github.requests("issues/list-for-repo")) == 3


def test_the_settings_name_what_is_missing(tmp_path):
    from fake_github.rounds import settings_for

    settings = settings_for(tmp_path, GITHUB_TOKEN=None)
    with pytest.raises(ConfigError, match="GITHUB_TOKEN"):
        github_tracker_from_settings(settings)


def test_github_enterprise_base_url_works(tmp_path):
    from fake_github.fixtures import BOT_PERMISSIONS, require_description

    require_description()
    with FakeGitHub(enterprise=True) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        tracker = tracker_for(fake, Journal.open(tmp_path / "j.db"))
        tracker.create(draft())
        assert fake.base_url.endswith("/api/v3")
        assert len(fake.issues()) == 1
        assert fake.violations == []
    assert REPOSITORY == "octo/app"
