"""The fake GitHub, plus what fix proposals need: pull requests read and updated, a git remote behind them.

    with PullsFakeGitHub(git_remote=bare) as github:   # the branches are the bare repository's
        github.merge(7)                                 # a person merged pull request #7 (rounds never does)
        github.close(7)                                 # ... or closed it without merging

Served on top of `ActionsFakeGitHub` (same validation against GitHub's REST description):

    GET   /repos/{owner}/{repo}/pulls/{pull_number}     pulls/get (pull_requests: read)
    PATCH /repos/{owner}/{repo}/pulls/{pull_number}     pulls/update (pull_requests: write)

With `git_remote`, every pull request operation first reads the bare repository's branches, so opening a
pull request for a branch works only once it was really pushed, and a pull request shows its pushed head.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from werkzeug.routing import Rule
from werkzeug.wrappers import Request

from .actions_routes import WORKFLOW_LIFETIME, ActionsFakeGitHub
from .fixtures import BOT_PERMISSIONS, REPOSITORY, TOKEN, require_description
from .server import ApiError, R, Token, check_body_length, found
from .state import Pull, Repo, git_sha

PULLS_ROUTES = [
    ("pulls/get", "GET", f"{R}/pulls/<int:pull_number>"),
    ("pulls/update", "PATCH", f"{R}/pulls/<int:pull_number>"),
]
PULLS_PERMISSIONS = {"pulls/get": ("pull_requests", "read"), "pulls/update": ("pull_requests", "write")}


class PullsFakeGitHub(ActionsFakeGitHub):
    def __init__(self, *, git_remote: Path | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.git_remote = git_remote
        for operation, method, path in PULLS_ROUTES:
            self._map.add(Rule(path, endpoint=operation, methods=[method]))
        self._handlers["pulls/get"] = self._op_pulls_get
        self._handlers["pulls/update"] = self._op_pulls_update

    # --- test controls ------------------------------------------------------------------------
    def merge(self, number: int, at: datetime | None = None) -> Pull:
        """A person merges the pull request (into its base, as GitHub would record it)."""
        pull = self.repo.pulls[number]
        moment = at or self.state.now()
        pull.state, pull.merged_at, pull.closed_at, pull.updated_at = "closed", moment, moment, moment
        pull.merge_commit_sha = git_sha(f"merge of #{number}".encode())
        return pull

    def close(self, number: int) -> Pull:
        pull = self.repo.pulls[number]
        pull.state, pull.closed_at = "closed", self.state.now()
        return pull

    def open_pulls(self) -> list[Pull]:
        return [p for p in sorted(self.repo.pulls.values(), key=lambda p: p.number) if p.state == "open"]

    # --- routing ------------------------------------------------------------------------------
    def _dispatch(
        self, request: Request, operation: str, arguments: dict[str, Any], body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        if self.git_remote is not None and operation.startswith("pulls/"):
            self._sync_branches()
        return super()._dispatch(request, operation, arguments, body)

    def _sync_branches(self) -> None:
        listed = subprocess.run(
            ["git", "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"],
            cwd=self.git_remote,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in listed.splitlines():
            ref, sha = line.split()
            self.repo.refs[ref] = sha

    def _authorise(self, token: Token, operation: str, method: str) -> None:
        if operation not in PULLS_PERMISSIONS:
            super()._authorise(token, operation, method)
            return
        permission, level = PULLS_PERMISSIONS[operation]
        if token.permissions.get(permission) not in ("write", level):
            raise ApiError(
                403,
                "Resource not accessible by integration",
                {"X-Accepted-GitHub-Permissions": f"{permission}={level}"},
            )

    def _op_pulls_get(self, request: Request, repo: Repo, token: Token, body: Any, pull_number: int) -> Any:
        return self.state.pull_json(repo, found(repo.pulls.get(pull_number)))

    def _op_pulls_update(
        self, request: Request, repo: Repo, token: Token, body: Any, pull_number: int
    ) -> Any:
        pull = found(repo.pulls.get(pull_number))
        body = body or {}
        if "body" in body:
            text = body["body"] or ""
            check_body_length(text, "PullRequest")
            pull.body = text
        if body.get("title"):
            pull.title = str(body["title"])
        if body.get("state") in ("open", "closed") and pull.merged_at is None:
            pull.state = body["state"]
            pull.closed_at = self.state.now() if pull.state == "closed" else None
        pull.updated_at = self.state.now()
        return self.state.pull_json(repo, pull)


def running_pulls_fake(
    git_remote: Path | None = None, *, actions_may_open_pulls: bool = True
) -> Iterator[PullsFakeGitHub]:
    """Like `fixtures.running_fake`, with the Actions and pull request routes; violations fail the test.

    The token is a workflow's GITHUB_TOKEN. The repository lets it open pull requests unless
    `actions_may_open_pulls=False`, which is what a new repository does (`state.Repo`)."""
    require_description()
    # three jobs run against it: on a busy machine that outlasts the default lifetime
    with PullsFakeGitHub(repository=REPOSITORY, git_remote=git_remote, lifetime=WORKFLOW_LIFETIME) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        fake.repo.can_approve_pull_request_reviews = actions_may_open_pulls
        yield fake
    assert fake.violations == [], "exchanges that violate GitHub's REST description:\n" + "\n".join(
        fake.violations
    )
