"""What rounds reads back from GitHub as its own record counts only when rounds wrote it: a hidden comment
key or marker is text anyone can copy into a comment or an issue of their own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import FakeGitHub
from fake_github.fixtures import BOT_PERMISSIONS, TOKEN, running_fake
from fake_github.rounds import tracker_for
from fake_github.state import BOT_LOGIN, Comment

from rounds_bot.github.rebuild import rebuild_database
from rounds_bot.marker import MarkedMute, MarkerState, write_marker
from rounds_bot.store import Store
from rounds_bot.tracker.base import IssueDraft

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


def draft(text: str = "Body") -> IssueDraft:
    marker = write_marker(MarkerState(signature_id="sig_a", service="api", total_count=1))
    return IssueDraft(
        signature_id="sig_a", title="[api] E", body=f"{text}\n\n{marker}", labels=["rounds", "service:api"]
    )


def comment_as(fake: FakeGitHub, number: int, body: str, user: str) -> None:
    now = fake.state.now()
    comment = Comment(fake.state.next_id(), number, body, user, now, now)
    fake.repo.comments[comment.id] = comment


def test_a_comment_key_someone_else_copied_does_not_stop_rounds_posting_its_comment(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    fake_github.fail(502, "issues/create-comment")  # not applied, and its answer lost
    tracker.update(ref, draft("v2"), comment="Regression: 2 occurrences")
    [intent] = tracker.journal.open_intents("comment")
    comment_as(fake_github, 1, f"me too\n\n<!-- rounds:comment {intent.key} -->", "mallory")
    tracker_for(fake_github, tracker.journal).finish_round()  # the next run checks before posting
    posted = [c for c in fake_github.repo.comments.values() if c.user == BOT_LOGIN]
    assert [c.body.split("\n")[0] for c in posted] == ["Regression: 2 occurrences"]
    assert tracker.journal.open_intents("comment") == []


def test_a_comment_rounds_posted_is_still_found_and_not_posted_twice(fake_github: FakeGitHub):
    tracker = tracker_for(fake_github)
    ref = tracker.create(draft())
    fake_github.fail(502, "issues/create-comment", applied=True)
    tracker.update(ref, draft("v2"), comment="Regression: 2 occurrences")
    tracker_for(fake_github, tracker.journal).finish_round()
    assert len(fake_github.repo.comments) == 1
    assert fake_github.requests("graphql") == []  # the workflow token's own account: nothing to ask


def test_a_rebuild_reads_only_the_issues_rounds_opened(fake_github: FakeGitHub):
    state, repo = fake_github.state, fake_github.repo
    real = write_marker(MarkerState(signature_id="sig_a", service="api", total_count=7))
    muted = MarkerState(
        signature_id="sig_a", service="api", mute=MarkedMute(by="mallory", since="2026-03-01T00:00:00+00:00")
    )
    forged = write_marker(MarkerState(signature_id="sig_b", service="api", total_count=3))
    # an outsider's issue, labelled (by an issue form, or by a maintainer triaging it), filed before the
    # real one with a marker naming its signature and an ignore, and another naming a signature of its own
    state.create_issue(repo, "[api] E", f"Please look\n\n{write_marker(muted)}", ["rounds"], "mallory")
    state.create_issue(repo, "[api] E", f"Body\n\n{real}", ["rounds"], BOT_LOGIN)
    state.create_issue(repo, "[api] F", f"Body\n\n{forged}", ["rounds"], "mallory")
    store = Store.memory()
    result = rebuild_database(tracker_for(fake_github).api, store)
    assert (result.signatures, result.not_ours, result.duplicates, result.ignored) == (1, ["#1", "#3"], [], 0)
    rebuilt = store.signature("sig_a")
    assert rebuilt is not None and (rebuilt.issue_ref, rebuilt.total_count) == ("#2", 7)
    assert store.signature("sig_b") is None and store.status("sig_a") == "open"


def test_a_rebuild_with_an_apps_token_reads_the_apps_issues(fake_github: FakeGitHub):
    fake_github.add_token(TOKEN, "rounds-app[bot]", kind="app", **BOT_PERMISSIONS)
    state, repo = fake_github.state, fake_github.repo
    for number, (signature_id, author) in enumerate(
        [("sig_a", "github-actions[bot]"), ("sig_b", "rounds-app[bot]"), ("sig_c", "other-app[bot]")]
    ):
        marker = write_marker(MarkerState(signature_id=signature_id, service="api", total_count=1))
        state.create_issue(repo, f"[api] E{number}", f"Body\n\n{marker}", ["rounds"], author)
    store = Store.memory()
    result = rebuild_database(tracker_for(fake_github).api, store)
    assert sorted(s.id for s in store.signatures()) == ["sig_a", "sig_b"]
    assert result.not_ours == ["#3"]
    assert (result.requests, len(fake_github.requests("graphql"))) == (2, 1)  # the listing, whose token


def test_an_issue_an_outsider_filed_with_a_copied_marker_is_not_the_signatures(fake_github: FakeGitHub):
    """An issue form labels an outsider's issue, whose body carries a rounds issue's marker: the round's sync
    leaves it alone, and rounds files the signature's own issue instead of updating the outsider's."""
    state, repo = fake_github.state, fake_github.repo
    state.create_issue(repo, "[api] E", draft("Please look").body, ["rounds"], "mallory")
    tracker = tracker_for(fake_github)
    assert tracker.find("sig_a") is None
    assert any("marker, not rounds'" in note for note in tracker.notes)
    ref = tracker.create(draft())
    assert ref.ref == "#2" and repo.issues[1].body.startswith("Please look")
