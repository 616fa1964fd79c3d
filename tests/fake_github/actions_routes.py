"""The fake GitHub, plus what the Actions side of rounds reads: workflows and the repository's comments.

    with ActionsFakeGitHub() as github:
        github.workflows["rounds.yml"] = "disabled_inactivity"
        github.comment(12, "/rounds pause", user="alice")      # a comment as a person would post it
        github.fork_artifacts.add(artifact.id)                  # an artifact saved by a fork's run

Served on top of `FakeGitHub` (same validation against GitHub's REST description):

    GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}     actions/get-workflow (actions: read)
    GET /repos/{owner}/{repo}/issues/comments                     issues/list-comments-for-repo
    GET /repos/{owner}/{repo}/actions/permissions/workflow        the repository's workflow permissions
                                                                  (administration: read, which a workflow's
                                                                  GITHUB_TOKEN never has: 403)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from werkzeug.routing import Rule
from werkzeug.wrappers import Request

from rounds_bot.github.actions import ActionsApi, actions_api_from_settings

from .fixtures import BOT_PERMISSIONS, REPOSITORY, TOKEN, require_description
from .server import ApiError, FakeGitHub, R, Token, found
from .state import BOT_LOGIN, Comment, Repo, ts

#: seconds a fake that whole workflows run against lives if a test never stops it (a safety net, not a limit)
WORKFLOW_LIFETIME = 900.0

WORKFLOW_PERMISSIONS = "actions/get-github-actions-default-workflow-permissions-repository"
ACTIONS_ROUTES = [
    ("actions/get-workflow", "GET", f"{R}/actions/workflows/<workflow_id>"),
    ("issues/list-comments-for-repo", "GET", f"{R}/issues/comments"),
    (WORKFLOW_PERMISSIONS, "GET", f"{R}/actions/permissions/workflow"),
]
ACTIONS_PERMISSIONS = {
    "actions/get-workflow": ("actions", "read"),
    # GitHub Docs, "REST API endpoints for GitHub Actions permissions": a fine-grained token for "Get
    # default workflow permissions for a repository" needs "Administration" repository permissions (read).
    WORKFLOW_PERMISSIONS: ("administration", "read"),
}


class ActionsFakeGitHub(FakeGitHub):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.workflows: dict[str, str] = {"rounds.yml": "active"}  # file name -> state
        self.fork_artifacts: set[int] = set()
        for operation, method, path in ACTIONS_ROUTES:
            self._map.add(Rule(path, endpoint=operation, methods=[method]))
        self._handlers["actions/get-workflow"] = self._op_actions_get_workflow
        self._handlers["issues/list-comments-for-repo"] = self._op_issues_list_comments_for_repo
        self._handlers[WORKFLOW_PERMISSIONS] = self._op_workflow_permissions

    # --- test controls ------------------------------------------------------------------------
    def comment(self, issue_number: int, body: str, *, user: str = "alice", edited: bool = False) -> Comment:
        """A comment on an issue, as a person (or a bot, `user="x[bot]"`) would post it."""
        issue = self.repo.issues[issue_number]
        now = self.state.now()
        comment = Comment(self.state.next_id(), issue_number, body, user, now, now)
        if edited:
            comment.updated_at = now + timedelta(seconds=1)
        self.repo.comments[comment.id] = comment
        issue.comments += 1
        return comment

    def reactions_on(self, comment_id: int) -> list[str]:
        return [r.content for r in self.repo.reactions.get(comment_id, [])]

    def replies(self, issue_number: int) -> list[str]:
        """Bodies of the bot's comments on an issue, oldest first."""
        return [
            c.body
            for c in sorted(self.repo.comments.values(), key=lambda c: c.id)
            if c.issue_number == issue_number and c.user == BOT_LOGIN
        ]

    # --- routing ------------------------------------------------------------------------------
    def _authorise(self, token: Token, operation: str, method: str) -> None:
        if operation in ACTIONS_PERMISSIONS:
            permission, level = ACTIONS_PERMISSIONS[operation]
            granted = token.permissions.get(permission)
            # A workflow's GITHUB_TOKEN never has `administration`: the `permissions:` key cannot grant it
            # (GitHub Docs, "Controlling permissions for GITHUB_TOKEN", lists every permission it can have).
            if token.kind == "workflow" and permission == "administration":
                granted = None
            if granted not in ("write", level):
                raise ApiError(
                    403,
                    "Resource not accessible by integration",
                    {"X-Accepted-GitHub-Permissions": f"{permission}={level}"},
                )
            return
        super()._authorise(token, operation, method)

    def _op_actions_get_workflow(
        self, request: Request, repo: Repo, token: Token, body: Any, workflow_id: str
    ) -> Any:
        state = found(self.workflows.get(workflow_id))
        number = int(hashlib.sha1(workflow_id.encode()).hexdigest()[:6], 16)
        created = ts(datetime(2026, 1, 5, tzinfo=UTC))
        path = f".github/workflows/{workflow_id}"
        return {
            "id": number,
            "node_id": f"W_{number}",
            "name": workflow_id.rsplit(".", 1)[0],
            "path": path,
            "state": state,
            "created_at": created,
            "updated_at": created,
            "url": f"{self.state.repo_url(repo)}/actions/workflows/{number}",
            "html_url": f"https://github.com/{repo.full_name}/blob/main/{path}",
            "badge_url": f"https://github.com/{repo.full_name}/workflows/{number}/badge.svg",
        }

    def _op_workflow_permissions(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        return {
            "default_workflow_permissions": repo.default_workflow_permissions,
            "can_approve_pull_request_reviews": repo.can_approve_pull_request_reviews,
        }

    def _op_issues_list_comments_for_repo(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        since = request.args.get("since")
        key = "updated_at" if request.args.get("sort") == "updated" else "created_at"
        comments = [c for c in repo.comments.values() if since is None or ts(c.updated_at) >= since]
        comments.sort(key=lambda c: (getattr(c, key), c.id), reverse=request.args.get("direction") == "desc")
        status, chunk, headers = self._page(request, comments)
        payload = []
        for comment in chunk:
            data = self.state.comment_json(repo, comment)
            if repo.issues.get(comment.issue_number) and repo.issues[comment.issue_number].pull:
                data["html_url"] = data["html_url"].replace("/issues/", "/pull/")
            payload.append(data)
        return status, payload, headers

    def _op_actions_list_artifacts_for_repo(
        self, request: Request, repo: Repo, token: Token, body: Any
    ) -> Any:
        status, payload, headers = super()._op_actions_list_artifacts_for_repo(request, repo, token, body)
        for item in payload["artifacts"]:
            if item["id"] in self.fork_artifacts:
                item["workflow_run"]["head_repository_id"] = repo.id + 1
        return status, payload, headers


def running_actions_fake() -> Iterator[ActionsFakeGitHub]:
    """Like `fixtures.running_fake`, with the Actions routes; violations of the description fail the test."""
    require_description()
    # a whole workflow runs against it: on a busy machine that outlasts the default lifetime
    with ActionsFakeGitHub(repository=REPOSITORY, lifetime=WORKFLOW_LIFETIME) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        yield fake
    assert fake.violations == [], "exchanges that violate GitHub's REST description:\n" + "\n".join(
        fake.violations
    )


def actions_api_for(fake: FakeGitHub, tmp_path: Path) -> ActionsApi:
    """The bot's ActionsApi talking to the fake, without waiting between writes."""
    from .rounds import quick_options, settings_for

    return actions_api_from_settings(settings_for(tmp_path, fake), quick_options())
