"""`/rounds` commands handled against the fake GitHub: receipt, authorisation, effects, record, reply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for, running_actions_fake
from fake_github.fixtures import TOKEN
from fake_github.rounds import START, filed_problems
from fake_github.state import Issue

from rounds_bot import controls
from rounds_bot.cli.app import main
from rounds_bot.commands.grammar import command_lines
from rounds_bot.commands.runner import (
    CommandContext,
    acknowledge,
    catch_up,
    comment_from_event,
    handle_comment,
    post_unreplied,
)
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


@pytest.fixture
def filed(fake: ActionsFakeGitHub, tmp_path: Path) -> dict[int, str]:
    """Three problems filed by a round: issue number -> signature id."""
    found = filed_problems(fake, tmp_path)
    fake.repo.collaborators.update({"alice": "write", "olivia": "admin", "rita": "read"})
    assert sorted(found) == [1, 2, 3]
    return found


def context(fake: ActionsFakeGitHub, tmp_path: Path, minutes: int = 10) -> CommandContext:
    store = Store.open(tmp_path / "rounds.db")
    return CommandContext(
        api=actions_api_for(fake, tmp_path), store=store, now=START + timedelta(minutes=minutes)
    )


def event(
    fake: ActionsFakeGitHub, number: int, body: str, user: str = "alice", action: str = "created"
) -> dict:
    """An issue_comment webhook payload shaped like GitHub's, for a comment posted on the fake."""
    comment = fake.comment(number, body, user=user)
    repo = fake.repo
    return {
        "action": action,
        "issue": fake.state.issue_json(repo, repo.issues[number]),
        "comment": fake.state.comment_json(repo, comment),
        "repository": fake.state.repository_json(repo),
        "sender": fake.state.user(user),
    }


def handle(fake, tmp_path, number, body, user="alice", action="created", minutes=10):
    ctx = context(fake, tmp_path, minutes)
    try:
        payload = event(fake, number, body, user, action)
        outcome = handle_comment(ctx, comment_from_event(payload))
        return outcome, controls.load_controls(ctx.store), payload["comment"]["id"]
    finally:
        ctx.store.close()


def test_help_is_acknowledged_then_answered_without_a_command_in_the_reply(fake, filed, tmp_path):
    outcome, _, comment_id = handle(fake, tmp_path, 1, "/rounds help")
    assert outcome.status == "handled" and outcome.commands == ["help"]
    assert fake.reactions_on(comment_id) == ["eyes"]
    [reply] = fake.replies(1)[-1:]
    assert reply.startswith("@alice:")
    assert "`/rounds merge #N`" in reply and "`/rounds pause`" in reply
    assert command_lines(reply) == []
    assert f"<!-- rounds:reply {comment_id} -->" in reply


@pytest.mark.parametrize(("user", "held"), [("rita", "read permission"), ("mallory", "no permission")])
def test_users_without_write_permission_are_refused_and_nothing_happens(fake, filed, tmp_path, user, held):
    outcome, state, comment_id = handle(fake, tmp_path, 1, "/rounds pause", user=user)
    assert outcome.status == "refused" and held in outcome.why
    assert state.pause is None
    assert fake.reactions_on(comment_id) == ["eyes"]
    assert f"@{user}: nothing was done" in fake.replies(1)[-1]
    assert fake.requests("repos/get-collaborator-permission-level")


@pytest.mark.parametrize(("user", "held"), [("rita", "read permission"), ("mallory", "no permission")])
def test_the_acknowledging_job_answers_a_refused_author_once_and_the_catch_up_does_not_again(
    fake, filed, tmp_path, user, held
):
    """`rounds command --acknowledge` decides before any database: eyes, then the permission; a refused
    author is answered there (marked), and the round's catch-up later records it without a second reply."""
    payload = event(fake, 1, "/rounds pause", user=user)
    api = actions_api_for(fake, tmp_path)
    acknowledged = acknowledge(api, comment_from_event(payload))
    assert not acknowledged.authorised and held in acknowledged.message
    assert fake.reactions_on(payload["comment"]["id"]) == ["eyes"]
    [reply] = fake.replies(1)
    assert reply.startswith(f"@{user}: nothing was done") and held in reply
    ctx = context(fake, tmp_path)
    try:
        outcomes = catch_up(ctx)
        assert [o.status for o in outcomes] == ["already-handled"]
        assert controls.load_controls(ctx.store).pause is None
    finally:
        ctx.store.close()
    assert fake.replies(1) == [reply]


def test_the_acknowledging_job_lets_a_collaborators_command_through_and_says_so(
    fake, filed, tmp_path, clean_env
):
    payload = event(fake, 1, "/rounds pause", user="alice")
    acknowledged = acknowledge(actions_api_for(fake, tmp_path), comment_from_event(payload))
    assert acknowledged.authorised and "write permission" in acknowledged.message
    assert fake.replies(1) == [] and fake.reactions_on(payload["comment"]["id"]) == ["eyes"]
    outputs = tmp_path / "outputs"
    for body, user, expected in (
        ("/rounds pause", "alice", "true"),
        ("/rounds pause", "mallory", "false"),
        ("no command here", "alice", "false"),
    ):
        path = tmp_path / "event.json"
        path.write_text(json.dumps(event(fake, 2, body, user=user)), encoding="utf-8")
        outputs.write_text("", encoding="utf-8")
        env = {
            **dispatch_env(fake, tmp_path, ""),
            "GITHUB_EVENT_NAME": "issue_comment",
            "GITHUB_EVENT_PATH": str(path),
            "GITHUB_OUTPUT": str(outputs),
        }
        result = CliRunner().invoke(main, ["command", "--acknowledge"], env=env)
        assert result.exit_code == 0, result.output
        assert outputs.read_text(encoding="utf-8") == f"authorised={expected}\n", (body, user)


def test_admins_may_command(fake, filed, tmp_path):
    outcome, state, _ = handle(fake, tmp_path, 2, "/rounds pause", user="olivia")
    assert outcome.status == "handled" and state.pause is not None and state.pause.by == "olivia"


def test_bots_and_edited_comments_are_ignored_without_a_reaction(fake, filed, tmp_path):
    before = len(fake.exchanges)
    bot, _, bot_id = handle(fake, tmp_path, 1, "/rounds pause", user="github-actions[bot]")
    edited, state, edited_id = handle(fake, tmp_path, 1, "/rounds pause", action="edited")
    assert (bot.status, edited.status) == ("ignored", "ignored")
    assert state.pause is None
    assert fake.reactions_on(bot_id) == fake.reactions_on(edited_id) == []
    assert len(fake.exchanges) == before  # not even a permission check


def test_quoted_and_fenced_commands_are_not_executed(fake, filed, tmp_path):
    body = "> /rounds pause\n```\n/rounds pause\n```\nwhy did it say `/rounds pause`?"
    outcome, state, comment_id = handle(fake, tmp_path, 1, body)
    assert outcome.status == "ignored" and state.pause is None and fake.reactions_on(comment_id) == []


def test_several_commands_malformed_and_unknown_ones_get_one_reply(fake, filed, tmp_path):
    body = "/rounds pause\n/rounds ignore for banana\n/rounds teleport\n/rounds status"
    outcome, state, _ = handle(fake, tmp_path, 1, body)
    assert outcome.commands == ["pause", "status"] and state.pause is not None
    reply = fake.replies(1)[-1]
    assert "cannot read the duration" in reply and "unknown command `teleport`" in reply
    assert "rounds is **paused** (by @alice" in reply
    assert len(fake.replies(1)) == 1


def test_a_comment_is_handled_once_even_when_delivered_twice(fake, filed, tmp_path):
    ctx = context(fake, tmp_path)
    try:
        payload = event(fake, 1, "/rounds pause")
        first = handle_comment(ctx, comment_from_event(payload))
        again = handle_comment(ctx, comment_from_event(payload))
    finally:
        ctx.store.close()
    assert (first.status, again.status) == ("handled", "already-handled")
    assert len(fake.replies(1)) == 1


def test_after_a_lost_database_the_reply_on_github_says_the_comment_was_handled(fake, filed, tmp_path):
    payload = None
    ctx = context(fake, tmp_path)
    try:
        payload = event(fake, 1, "/rounds ignore")
        handle_comment(ctx, comment_from_event(payload))
    finally:
        ctx.store.close()
    (tmp_path / "rounds.db").unlink()
    fresh = context(fake, tmp_path)
    try:
        outcome = handle_comment(fresh, comment_from_event(payload))
        assert outcome.status == "already-handled"
        assert controls.handled_comment(fresh.store, payload["comment"]["id"]) is not None
    finally:
        fresh.store.close()
    assert len(fake.replies(1)) == 1


def test_a_reply_github_failed_to_take_is_posted_by_the_next_run(fake, filed, tmp_path):
    fake.fail(502, "issues/create-comment")
    ctx = context(fake, tmp_path)
    try:
        with pytest.raises(Exception, match="502"):
            handle_comment(ctx, comment_from_event(event(fake, 1, "/rounds pause")))
        assert controls.load_controls(ctx.store).pause is not None  # the effect stands
        assert fake.replies(1) == []
        assert post_unreplied(ctx) == 1
        assert post_unreplied(ctx) == 0
    finally:
        ctx.store.close()
    assert len(fake.replies(1)) == 1 and "paused" in fake.replies(1)[0]


def test_pause_resume_and_status(fake, filed, tmp_path):
    _, paused, _ = handle(fake, tmp_path, 1, "/rounds pause")
    handle(fake, tmp_path, 1, "/rounds pause")
    status, _, _ = handle(fake, tmp_path, 3, "/rounds status")
    resumed, state, _ = handle(fake, tmp_path, 2, "/rounds resume")
    assert paused.pause is not None and paused.pause.where == "#1"
    assert "already paused by @alice" in fake.replies(1)[-1]
    assert "paused" in (status.reply or "") and f"signature `{filed[3]}`" in (status.reply or "")
    assert resumed.needs_round and state.pause is None


def test_ignore_and_unignore(fake, filed, tmp_path):
    _, muted, _ = handle(fake, tmp_path, 1, "/rounds ignore for 7d")
    mute = muted.mutes[filed[1]]
    assert mute.by == "alice" and mute.until is not None and mute.count_at == 1
    assert "ignored until" in fake.replies(1)[-1]
    _, counted, _ = handle(fake, tmp_path, 2, "/rounds ignore until 50 occurrences")
    assert counted.mutes[filed[2]].until_occurrences == 50
    _, unmuted, _ = handle(fake, tmp_path, 1, "/rounds unignore")
    assert filed[1] not in unmuted.mutes and filed[2] in unmuted.mutes
    nothing, _, _ = handle(fake, tmp_path, 3, "/rounds unignore")
    assert "nothing to undo" in (nothing.reply or "")


def test_merge_closes_this_issue_as_a_duplicate_and_split_undoes_it(fake, filed, tmp_path):
    outcome, state, _ = handle(fake, tmp_path, 2, "/rounds merge #1")
    assert state.merges == {filed[2]: filed[1]} and state.target_of(filed[2]) == filed[1]
    issue = fake.repo.issues[2]
    assert (issue.state, issue.state_reason) == ("closed", "duplicate")
    assert "merged into #1" in (outcome.reply or "")
    on_target, _, _ = handle(fake, tmp_path, 1, "/rounds split")
    assert "#2 merged into this issue" in (on_target.reply or "")
    split, state, _ = handle(fake, tmp_path, 2, "/rounds split")
    assert state.merges == {} and "reopened" in (split.reply or "")
    assert (fake.repo.issues[2].state, fake.repo.issues[2].state_reason) == ("open", "reopened")


def test_merging_into_itself_or_into_an_issue_rounds_did_not_file_is_refused(fake, filed, tmp_path):
    itself, _, _ = handle(fake, tmp_path, 1, "/rounds merge #1")
    foreign, state, _ = handle(fake, tmp_path, 1, "/rounds merge #99")
    assert "cannot be merged into itself" in (itself.reply or "")
    assert "#99 is not an issue rounds filed" in (foreign.reply or "")
    assert state.merges == {}


def test_a_merged_issue_is_split_before_it_is_merged_elsewhere(fake, filed, tmp_path):
    handle(fake, tmp_path, 2, "/rounds merge #1")
    outcome, state, _ = handle(fake, tmp_path, 2, "/rounds merge #3")
    assert "already merged into #1" in (outcome.reply or "") and state.merges == {filed[2]: filed[1]}


def test_merges_cannot_make_a_loop(fake, filed, tmp_path):
    handle(fake, tmp_path, 1, "/rounds merge #3")
    outcome, state, _ = handle(fake, tmp_path, 3, "/rounds merge #1")
    assert "would make a loop" in (outcome.reply or "") and state.merges == {filed[1]: filed[3]}


def test_signature_commands_need_an_issue_rounds_filed(fake, filed, tmp_path):
    human = fake.state.create_issue(fake.repo, "Feature request", "no marker here", [], "alice")
    pull = Issue(
        number=50,
        title="fix",
        body="",
        user="alice",
        labels=[],
        created_at=START,
        updated_at=START,
        pull=True,
    )
    fake.repo.issues[50] = pull
    on_issue, _, _ = handle(fake, tmp_path, human.number, "/rounds ignore\n/rounds help")
    on_pull, _, _ = handle(fake, tmp_path, 50, "/rounds rediagnose")
    assert "works only on issues rounds filed" in (on_issue.reply or "")
    assert on_issue.commands == ["ignore", "help"]
    assert "not on pull requests" in (on_pull.reply or "")


def test_rediagnose_is_queued_with_its_hint_and_asks_for_a_round(fake, filed, tmp_path):
    outcome, _, _ = handle(fake, tmp_path, 3, "/rounds rediagnose check the retry loop in client.py")
    assert outcome.needs_round
    store = Store.open(tmp_path / "rounds.db")
    try:
        assert controls.pending_rediagnoses(store) == {filed[3]: "check the retry loop in client.py"}
    finally:
        store.close()
    assert "`check the retry loop in client.py`" in fake.replies(3)[-1]


def test_fix_says_why_it_is_off_when_the_run_has_no_fix_settings(fake, filed, tmp_path):
    outcome, _, _ = handle(fake, tmp_path, 1, "/rounds fix")
    assert "fix pull requests are off here" in (outcome.reply or "") and not outcome.needs_round


def test_catch_up_handles_comments_whose_run_never_came(fake, filed, tmp_path):
    late = fake.comment(1, "/rounds ignore", user="alice")
    fake.comment(2, "/rounds pause", user="dependabot[bot]")
    fake.comment(3, "/rounds pause", user="alice", edited=True)
    fake.comment(3, "just a remark", user="alice")
    ctx = context(fake, tmp_path, minutes=5)
    try:
        outcomes = catch_up(ctx)
        again = catch_up(ctx)
        state = controls.load_controls(ctx.store)
        watermark = controls.command_watermark(ctx.store)
    finally:
        ctx.store.close()
    assert [(o.comment_id, o.status) for o in outcomes if o.status != "ignored"] == [(late.id, "handled")]
    assert not [o for o in again if o.status == "handled"]
    assert filed[1] in state.mutes and state.pause is None
    assert watermark is not None and watermark.endswith("Z")
    assert len(fake.replies(1)) == 1 and fake.replies(2) == [] and fake.replies(3) == []


def dispatch_env(fake, tmp_path, rediagnose: str) -> dict[str, str]:
    payload = json.loads((Path(__file__).parent / "events" / "workflow_dispatch.json").read_text())
    payload["inputs"]["rediagnose"] = rediagnose
    payload["repository"] = fake.state.repository_json(fake.repo)
    event_file = tmp_path / f"event-{len(rediagnose)}.json"
    event_file.write_text(json.dumps(payload))
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": str(event_file),
        "GITHUB_RUN_ID": "77",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "octo/app",
        "ROUNDS_GITHUB_API_URL": fake.base_url,
        "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
        "GITHUB_OUTPUT": str(tmp_path / "outputs"),
    }


def test_the_run_workflow_button_can_ask_for_a_rediagnosis(fake, filed, tmp_path, clean_env):
    runner = CliRunner()
    asked = runner.invoke(main, ["command"], env=dispatch_env(fake, tmp_path, "#2"))
    assert asked.exit_code == 0, asked.output
    assert "@olivia asked to diagnose" in asked.output
    assert (tmp_path / "outputs").read_text() == "round=true\n"
    store = Store.open(tmp_path / "rounds.db")
    try:
        assert controls.pending_rediagnoses(store) == {filed[2]: ""}
    finally:
        store.close()
    unknown = runner.invoke(main, ["command"], env=dispatch_env(fake, tmp_path, "sig_nope"))
    assert unknown.exit_code == 2 and "no signature 'sig_nope'" in unknown.output


def test_a_comment_that_waits_is_listed_again_though_an_older_one_was_edited_after_it(fake, filed, tmp_path):
    """GitHub's repository comment listing filters `since` on `updated_at` but is sorted here by
    `created_at` (REST "List issue comments for a repository": "since: Only show results that were last
    updated after the given time"): an older comment edited later comes first, and the watermark a waiting
    comment leaves must not pass that comment's own `updated_at`, or no later run lists it again."""
    remark = fake.comment(1, "just a remark", user="alice")
    waiting = fake.comment(2, "/rounds ignore", user="alice")
    remark.updated_at = waiting.updated_at + timedelta(minutes=1)  # edited after the command was posted
    fake.fail(422, "reactions/create-for-issue-comment", message="Validation Failed")
    ctx = context(fake, tmp_path, minutes=5)
    try:
        first = catch_up(ctx)
        second = catch_up(ctx)
        state = controls.load_controls(ctx.store)
    finally:
        ctx.store.close()
    assert not [o for o in first if o.status == "handled"] and ctx.warnings
    handled = [(o.comment_id, o.status) for o in second if o.comment_id == waiting.id]
    assert handled == [(waiting.id, "handled")]
    assert filed[2] in state.mutes
