"""Who may command rounds, by repository role: GitHub's collaborator-permission endpoint gives the legacy base
role as `permission` ("the `maintain` role is mapped to `write` and the `triage` role is mapped to `read`",
its description in GitHub's REST description) and the role itself as `role_name`. The fake answers that way,
so a maintainer's command is obeyed and a triager's refused, as on GitHub. Before, the fake answered a role
as the permission itself (`maintain`), which GitHub never does.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for, running_actions_fake
from fake_github.rounds import START, filed_problems

from rounds_bot import controls
from rounds_bot.commands.runner import CommandContext, comment_from_event, handle_comment
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


def pause_by(fake: ActionsFakeGitHub, tmp_path: Path, user: str) -> tuple[str, object]:
    """`/rounds pause` commented by `user` on issue 1: the outcome's status, and the pause it left."""
    filed_problems(fake, tmp_path)
    comment = fake.comment(1, "/rounds pause", user=user)
    repo = fake.repo
    payload = {
        "action": "created",
        "issue": fake.state.issue_json(repo, repo.issues[1]),
        "comment": fake.state.comment_json(repo, comment),
        "repository": fake.state.repository_json(repo),
        "sender": fake.state.user(user),
    }
    store = Store.open(tmp_path / "rounds.db")
    try:
        ctx = CommandContext(
            api=actions_api_for(fake, tmp_path), store=store, now=START + timedelta(minutes=10)
        )
        outcome = handle_comment(ctx, comment_from_event(payload))
        return outcome.status, controls.load_controls(store).pause
    finally:
        store.close()


@pytest.mark.parametrize("role", ["maintain", "write", "admin"])
def test_a_role_with_write_access_commands_rounds(fake, tmp_path, role):
    fake.repo.collaborators["mia"] = role
    status, pause = pause_by(fake, tmp_path, "mia")
    assert status != "refused" and pause is not None


@pytest.mark.parametrize("role", ["triage", "read"])
def test_a_role_without_write_access_is_refused(fake, tmp_path, role):
    fake.repo.collaborators["tom"] = role
    status, pause = pause_by(fake, tmp_path, "tom")
    assert status == "refused" and pause is None


def test_the_fake_gives_the_legacy_permission_and_the_role_as_github_does(fake, tmp_path):
    fake.repo.collaborators.update({"mia": "maintain", "tom": "triage"})
    api = actions_api_for(fake, tmp_path)
    assert api.collaborator_permission("mia") == "write"
    assert api.collaborator_permission("tom") == "read"
