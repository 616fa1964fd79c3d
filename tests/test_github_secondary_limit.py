"""GitHub's secondary rate limit on content creation, kept by the fake GitHub (`fake_github.secondary`, which
quotes GitHub's docs: 80 content-generating requests a minute, 500 an hour, a 403 with `retry-after` beyond),
and what the tracker does when it meets it: waits out a short refusal and files each issue once, or stops
cleanly before a long one. Before, the fake created content without limit, so nothing here could tell.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
import requests
from fake_github import FakeGitHub
from fake_github.fixtures import REPOSITORY, TOKEN, running_fake
from fake_github.rounds import START, tracker_for
from fake_github.secondary import ContentLimit

from rounds_bot.marker import MarkerState, write_marker
from rounds_bot.tracker.base import IssueDraft, TrackerStopped

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


class Clock:
    """The fake's clock, moved on only by the tracker's waits."""

    def __init__(self) -> None:
        self.now = START
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += timedelta(seconds=seconds)


def draft(signature_id: str) -> IssueDraft:
    marker = write_marker(MarkerState(signature_id=signature_id, service="api", total_count=1))
    return IssueDraft(
        signature_id=signature_id,
        title=f"[api] KeyError: 'user' ({signature_id})",
        body=f"Body\n\n{marker}",
        labels=["rounds", "service:api"],
    )


def comment(fake: FakeGitHub, number: int) -> requests.Response:
    return requests.post(
        f"{fake.base_url}/repos/{REPOSITORY}/issues/{number}/comments",
        json={"body": "hello"},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )


def test_the_81st_content_request_of_a_minute_is_refused_with_retry_after(fake_github: FakeGitHub):
    clock = Clock()
    fake_github.clock = clock
    issue = fake_github.state.create_issue(fake_github.repo, "a problem", "", [], "alice")
    assert [comment(fake_github, issue.number).status_code for _ in range(80)] == [201] * 80
    refused = comment(fake_github, issue.number)
    assert refused.status_code == 403 and "secondary rate limit" in refused.json()["message"]
    assert refused.headers["retry-after"] == "60"
    assert requests.get(  # reading is not creating content
        f"{fake_github.base_url}/repos/{REPOSITORY}/issues/{issue.number}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    ).ok
    clock.sleep(60)
    assert comment(fake_github, issue.number).status_code == 201
    assert issue.comments == 81


def test_the_hourly_limit_counts_the_last_hour():
    limit = ContentLimit(per_minute=80, per_hour=500)
    moments = [START + timedelta(seconds=i * 7) for i in range(500)]  # 500 in 58 minutes, 8 or 9 a minute
    assert all(limit.refusal("POST", moment) is None for moment in moments)
    wait = limit.refusal("PATCH", moments[-1] + timedelta(seconds=7))
    assert wait is not None and wait == pytest.approx(3600 - 500 * 7)
    assert limit.refusal("GET", moments[-1]) is None
    assert limit.refusal("POST", START + timedelta(hours=1)) is None, "the first left the hour"


def test_the_tracker_waits_out_a_short_refusal_and_files_each_issue_once(fake_github: FakeGitHub):
    clock = Clock()
    fake_github.clock = clock
    fake_github.content_limit = ContentLimit(per_minute=4)
    tracker = tracker_for(fake_github, max_wait_seconds=90)
    tracker.api.waiter.sleep = clock.sleep
    for signature in ("sig_a", "sig_b", "sig_c"):  # two labels and three issues: five creations
        tracker.create(draft(signature))
    assert sorted(issue.title for issue in fake_github.issues()) == [
        f"[api] KeyError: 'user' ({s})" for s in ("sig_a", "sig_b", "sig_c")
    ]
    assert clock.slept == [60.0]
    assert [e.status for e in fake_github.requests("issues/create")] == [201, 201, 403, 201]


def test_the_tracker_stops_cleanly_before_a_refusal_longer_than_it_may_wait(fake_github: FakeGitHub):
    clock = Clock()
    fake_github.clock = clock
    fake_github.content_limit = ContentLimit(per_hour=3)
    tracker = tracker_for(fake_github, max_wait_seconds=90)
    tracker.api.waiter.sleep = clock.sleep
    tracker.create(draft("sig_a"))  # two labels and the issue: the hour's three
    with pytest.raises(TrackerStopped, match="3600 s"):
        tracker.create(draft("sig_b"))
    assert len(fake_github.issues()) == 1 and clock.slept == []
