"""A rounds marker is trusted only in an issue rounds opened itself: anyone can copy the invisible marker of a
real rounds issue into an issue of their own, and a command on that issue must not reach the signature it
names. The database's record of rounds' issues comes first; a marker counts only when the issue's author
is rounds' own account (the workflow token's `github-actions[bot]`, or the account of rounds' token)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for, running_actions_fake
from fake_github.fixtures import BOT_PERMISSIONS, TOKEN
from fake_github.rounds import START, filed_problems
from fake_github.state import BOT_LOGIN

from rounds_bot import controls
from rounds_bot.commands.runner import (
    CommandContext,
    Outcome,
    comment_from_event,
    comment_from_listing,
    handle_comment,
)
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.marker import MarkerState, write_marker
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


@pytest.fixture
def filed(fake: ActionsFakeGitHub, tmp_path: Path) -> dict[int, str]:
    """Three problems filed by a round: issue number -> signature id."""
    found = filed_problems(fake, tmp_path)
    fake.repo.collaborators.update({"alice": "write"})
    assert sorted(found) == [1, 2, 3]
    return found


def copied_marker(fake: ActionsFakeGitHub, number: int) -> str:
    """The invisible marker at the end of a real rounds issue, as anyone can copy it from its source."""
    body = fake.repo.issues[number].body
    return body[body.rindex("<!-- rounds:marker") :]


def outsiders_issue(fake: ActionsFakeGitHub, marker: str, user: str = "mallory") -> int:
    body = f"Our checkout is broken, please look\n\n{marker}"
    return fake.state.create_issue(fake.repo, "checkout broken", body, [], user).number


def command(
    fake: ActionsFakeGitHub, tmp_path: Path, number: int, body: str, *, listed: bool = False
) -> tuple[Outcome, controls.Controls, list[str]]:
    """`body` commented by alice on issue `number` and handled with fixes on: from the webhook event, or
    (`listed`) from the repository's comment listing, which carries no issue body or author."""
    store = Store.open(tmp_path / "rounds.db")
    api = actions_api_for(fake, tmp_path)
    ctx = CommandContext(api=api, store=store, now=START + timedelta(minutes=10), fixes_off=None)
    try:
        posted = fake.comment(number, body)
        repo = fake.repo
        if listed:
            url = f"{fake.state.repo_url(repo)}/issues/{number}"
            comment = comment_from_listing({**fake.state.comment_json(repo, posted), "issue_url": url})
            assert comment is not None and comment.issue_body is None
        else:
            payload = {
                "action": "created",
                "issue": fake.state.issue_json(repo, repo.issues[number]),
                "comment": fake.state.comment_json(repo, posted),
            }
            comment = comment_from_event(payload)
        outcome = handle_comment(ctx, comment)
        requests = [request.signature_id for request in pending_requests(store)]
        return outcome, controls.load_controls(store), requests
    finally:
        store.close()


def test_merge_into_an_outsiders_issue_carrying_a_copied_marker_is_refused(fake, filed, tmp_path):
    fake_issue = outsiders_issue(fake, copied_marker(fake, 2))
    outcome, state, _ = command(fake, tmp_path, 1, f"/rounds merge #{fake_issue}")
    reply = outcome.reply or ""
    assert f"not done: #{fake_issue} is not an issue rounds filed" in reply
    assert "opened by `mallory`, not by rounds" in reply and "trusted only in an issue rounds opened" in reply
    assert state.merges == {}
    assert fake.repo.issues[1].state == "open"


@pytest.mark.parametrize("listed", [False, True], ids=["event", "listing"])
def test_ignore_and_fix_on_an_outsiders_issue_carrying_a_copied_marker_are_refused(
    fake, filed, tmp_path, listed
):
    fake_issue = outsiders_issue(fake, copied_marker(fake, 2))
    body = "/rounds ignore\n/rounds fix"
    outcome, state, requests = command(fake, tmp_path, fake_issue, body, listed=listed)
    reply = outcome.reply or ""
    assert outcome.status == "handled" and outcome.commands == ["ignore", "fix"]
    assert "not done: `ignore` works only on issues rounds filed, and this one is not" in reply
    assert "not done: `fix` works only on issues rounds filed, and this one is not" in reply
    assert reply.count("opened by `mallory`, not by rounds") == 2
    assert state.mutes == {} and requests == []


def test_the_issues_rounds_filed_still_take_the_same_commands(fake, filed, tmp_path):
    merged, state, _ = command(fake, tmp_path, 3, "/rounds merge #2")
    assert "merged into #2" in (merged.reply or "") and state.merges == {filed[3]: filed[2]}
    ignored, state, requests = command(fake, tmp_path, 1, "/rounds ignore\n/rounds fix")
    assert "ignored until someone comments `unignore`" in (ignored.reply or "")
    assert set(state.mutes) == {filed[1]} and requests == [filed[1]]


@pytest.mark.parametrize("listed", [False, True], ids=["event", "listing"])
def test_an_issue_rounds_opened_that_the_database_does_not_know_is_read_from_its_marker(
    fake, filed, tmp_path, listed
):
    """A database that lost the issue's record (a crash between filing and saving): rounds' own account
    opened it, so its marker is the record."""
    marker = write_marker(MarkerState(signature_id="sig_unsaved", service="api", total_count=1))
    own = fake.state.create_issue(fake.repo, "[api] E", f"Body\n\n{marker}", ["rounds"], BOT_LOGIN).number
    outcome, state, requests = command(fake, tmp_path, own, "/rounds ignore\n/rounds fix", listed=listed)
    assert "ignored until" in (outcome.reply or "")
    assert set(state.mutes) == {"sig_unsaved"} and requests == ["sig_unsaved"]
    assert fake.requests("graphql") == []  # the workflow token's own account: nothing to ask


def test_with_an_apps_token_its_own_issues_are_trusted_and_another_apps_are_not(fake, filed, tmp_path):
    fake.add_token(TOKEN, "rounds-app[bot]", kind="app", **BOT_PERMISSIONS)
    marker = write_marker(MarkerState(signature_id="sig_by_app", service="api", total_count=1))
    own = fake.state.create_issue(fake.repo, "[api] E", f"Body\n\n{marker}", ["rounds"], "rounds-app[bot]")
    other = outsiders_issue(fake, copied_marker(fake, 2), user="other-app[bot]")
    trusted, state, _ = command(fake, tmp_path, own.number, "/rounds ignore")
    refused, _, _ = command(fake, tmp_path, other, "/rounds ignore")
    assert set(state.mutes) == {"sig_by_app"}
    assert "opened by `other-app[bot]`, not by rounds" in (refused.reply or "")
    assert "ignored until" in (trusted.reply or "")
    assert len(fake.requests("graphql")) == 2  # whose token it is, asked once a run


def test_a_reply_mark_another_bot_copied_does_not_count_as_rounds_answer(fake, filed, tmp_path):
    """After a lost database, rounds' own reply on GitHub says a comment was answered; another account's
    comment carrying the same hidden mark does not."""
    store = Store.open(tmp_path / "rounds.db")
    api = actions_api_for(fake, tmp_path)
    ctx = CommandContext(api=api, store=store, now=START + timedelta(minutes=10))
    try:
        posted = fake.comment(1, "/rounds pause")
        fake.comment(1, f"done <!-- rounds:reply {posted.id} -->", user="other-app[bot]")
        payload = {
            "action": "created",
            "issue": fake.state.issue_json(fake.repo, fake.repo.issues[1]),
            "comment": fake.state.comment_json(fake.repo, posted),
        }
        outcome = handle_comment(ctx, comment_from_event(payload))
        assert outcome.status == "handled" and controls.load_controls(store).pause is not None
    finally:
        store.close()
