"""`/rounds fix` in an issue comment: queued once for the fix job, refused where it cannot work."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for, running_actions_fake
from fake_github.rounds import START, round_against
from fix_samples import ask_for_fix, pricing_events

from rounds_bot.commands.runner import CommandContext, comment_from_event, handle_comment
from rounds_bot.events import Fact
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.store import Store

pytestmark = pytest.mark.fix_loop


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


@pytest.fixture
def issue(fake: ActionsFakeGitHub, tmp_path: Path) -> int:
    round_against(fake, tmp_path, pricing_events(), 10)
    fake.repo.collaborators["alice"] = "write"
    return 1


def ask(fake: ActionsFakeGitHub, tmp_path: Path, number: int, body: str, fixes_off: str | None = None) -> str:
    store = Store.open(tmp_path / "rounds.db")
    ctx = CommandContext(
        api=actions_api_for(fake, tmp_path), store=store, now=START + timedelta(hours=1), fixes_off=fixes_off
    )
    comment = fake.comment(number, body, user="alice")
    repo = fake.repo
    payload = {
        "action": "created",
        "issue": fake.state.issue_json(repo, repo.issues[number]),
        "comment": fake.state.comment_json(repo, comment),
    }
    try:
        outcome = handle_comment(ctx, comment_from_event(payload))
    finally:
        store.close()
    return outcome.reply or ""


def test_fix_is_queued_once_for_the_fix_job(fake, issue, tmp_path):
    first = ask(fake, tmp_path, issue, "/rounds fix")
    second = ask(fake, tmp_path, issue, "/rounds fix")
    assert "queued" in first and "DRAFT pull request" in first and "never merges" in first
    assert "already queued (asked for by alice)" in second
    store = Store.open(tmp_path / "rounds.db")
    try:
        [request] = pending_requests(store)
        assert (request.issue_number, request.by, request.trigger) == (issue, "alice", "command")
        assert len(store.facts([Fact.FIX_REQUESTED])) == 1
    finally:
        store.close()


def test_fix_says_why_when_fixes_are_off(fake, issue, tmp_path):
    reply = ask(fake, tmp_path, issue, "/rounds fix", fixes_off="ROUNDS_FIX_TEST_COMMAND is not set")
    assert "fix pull requests are off here: ROUNDS_FIX_TEST_COMMAND is not set" in reply
    store = Store.open(tmp_path / "rounds.db")
    try:
        assert pending_requests(store) == []
    finally:
        store.close()


def test_fix_works_only_on_issues_rounds_filed(fake, issue, tmp_path):
    fake.state.create_issue(fake.repo, "A feature", "no marker", [], "alice")
    reply = ask(fake, tmp_path, 2, "/rounds fix")
    assert "works only on issues rounds filed" in reply


def test_fix_on_an_automatic_request_that_could_not_start_says_why_it_waits(fake, issue, tmp_path):
    store = Store.open(tmp_path / "rounds.db")
    try:
        [signature] = store.signatures()
        ask_for_fix(store, signature.id, issue, origin="auto:x", trigger="auto")
        [waiting] = pending_requests(store)
        reason = "the repository's tests already fail on `main` (commit `0123456789ab`) without any change"
        with store.transaction():
            store.append_event(
                Fact.FIX_BLOCKED,
                "fixblocked:auto:x:baseline:0123456789ab",
                signature_id=signature.id,
                run_id="fix",
                at=START,
                payload={"request": waiting.key, "blocked": "baseline", "reason": reason},
            )
    finally:
        store.close()
    reply = ask(fake, tmp_path, issue, "/rounds fix")
    assert "already queued (chosen by rounds" in reply
    assert reply.endswith(
        "it waits: the repository's tests already fail on `main` (commit `0123456789ab`) without any change"
    )


def test_a_fix_request_needs_only_the_test_command_in_the_job_that_answers_it(clean_env):
    """The key and the CLI are the fix job's: the round's step answering `/rounds fix` may hold neither."""
    from rounds_bot.fixing.enabled import fixes_off, requests_off
    from rounds_bot.settings import load_settings

    without_key = load_settings(None).model_copy(update={"fix_test_command": "python -m pytest -x -q"})
    assert requests_off(without_key) is None
    assert fixes_off(without_key) == "ANTHROPIC_API_KEY is not set (the Claude Code CLI writes the fix)"
    assert requests_off(load_settings(None)) == (
        "ROUNDS_FIX_TEST_COMMAND (the repository's own test command) is not set"
    )
