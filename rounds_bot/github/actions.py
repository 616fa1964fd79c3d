"""The GitHub calls rounds makes beside filing issues: commands, saved state, and `rounds doctor`.

Each method is one request (a listing: one page), made through the tracker's `GitHubApi` plumbing, so it
is counted against the same budget, waits out rate limits the same way, and fails with a `TrackerError` that
names the operation and the permission that is missing.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, Literal

from github import GithubException
from pydantic import ConfigDict, ValidationError

from rounds_bot.errors import TrackerError
from rounds_bot.github.answers import json_object
from rounds_bot.github.rest import ISSUES_READ, ISSUES_WRITE, GitHubApi, _Missing
from rounds_bot.github.tracker import GitHubOptions, github_api_from_settings
from rounds_bot.models import Frozen
from rounds_bot.settings import Settings

ACTIONS_READ = "actions: read"
CONTENTS_READ = "contents: read"
METADATA_READ = "metadata: read"
# Reading the repository's Actions settings needs it; a workflow's GITHUB_TOKEN can never be granted it (the
# `permissions:` key has no `administration`), so GitHub answers that token 403.
ADMINISTRATION_READ = "administration: read"
# Artifacts are listed newest first; the state's artifact is among the newest unless something is very wrong.
ARTIFACT_PAGES = 3


class Artifact(Frozen):
    """A workflow artifact as the bot needs to judge it."""

    id: int
    name: str
    size_in_bytes: int
    expired: bool
    created_at: datetime | None
    expires_at: datetime | None
    archive_download_url: str
    run_id: int | None
    head_branch: str | None
    head_repository_id: int | None
    repository_id: int | None


class WorkflowPermissions(Frozen):
    """What the repository lets a workflow's GITHUB_TOKEN do (Settings -> Actions -> General)."""

    model_config = ConfigDict(frozen=True, extra="ignore")  # GitHub may add fields; these two are required

    default_workflow_permissions: Literal["read", "write"]
    can_approve_pull_request_reviews: bool  # "Allow GitHub Actions to create and approve pull requests"


class ActionsApi(GitHubApi):
    """`GitHubApi` plus reactions, permissions, repository comments, issue state, artifacts and workflows."""

    # --- the repository -----------------------------------------------------------------------
    def repository_info(self) -> dict[str, Any]:
        return self._get(f"read the repository {self.repository}", self._repo.url, METADATA_READ)

    def branch_head(self, branch: str) -> str | None:
        """The commit a branch points at (proves `contents: read`), or None when the branch is missing."""
        url = f"{self._repo.url}/git/ref/heads/{branch}"
        data = self._get(f"read the branch {branch}", url, CONTENTS_READ, missing_ok=True)
        return None if data is None else str(data["object"]["sha"])

    def rate_limit(self) -> dict[str, Any]:
        data = self._get("read the rate limit", "/rate_limit", METADATA_READ)
        return dict(data["resources"]["core"])

    # --- commands -----------------------------------------------------------------------------
    def collaborator_permission(self, login: str) -> str:
        """admin, write, read or none (GitHub says write for maintain, read for triage; 404 for strangers)."""
        try:
            permission = self._call(
                f"read the permission of @{login}",
                lambda: self._repo.get_collaborator_permission(login),
                permission=METADATA_READ,
                idempotent=True,
                missing_ok=True,
            )
        except _Missing:
            return "none"
        return str(permission or "none")

    def react(self, comment_id: int, content: str) -> None:
        """Add a reaction to an issue comment (GitHub answers 200 when it is already there)."""
        self._call(
            f"react {content} to comment {comment_id}",
            lambda: self.github.requester.requestJsonAndCheck(
                "POST", f"{self._repo.url}/issues/comments/{comment_id}/reactions", input={"content": content}
            ),
            permission=ISSUES_WRITE,
            idempotent=True,
        )

    def list_repository_comments(self, since: str | None) -> list[dict[str, Any]]:
        """Issue and pull request comments of the whole repository, updated since `since`, oldest first."""
        parameters: dict[str, Any] = {"sort": "created", "direction": "asc", "per_page": 100}
        if since:
            parameters["since"] = since
        url = f"{self._repo.url}/issues/comments"
        return self._list(url, parameters, None, "list the repository's issue comments").items

    def set_issue_state(self, number: int, state: str, reason: str | None) -> dict[str, Any]:
        fields: dict[str, Any] = {"state": state}
        if reason:
            fields["state_reason"] = reason
        _, data = self._call(
            f"set issue #{number} {state}",
            lambda: self.github.requester.requestJsonAndCheck(
                "PATCH", f"{self._repo.url}/issues/{number}", input=fields
            ),
            permission=ISSUES_WRITE,
        )
        return json_object(data)

    # --- saved state and the workflow -----------------------------------------------------------
    def artifacts(self, name: str) -> list[Artifact]:
        """Artifacts called `name`, newest first (up to ARTIFACT_PAGES pages of 100)."""
        found: list[Artifact] = []
        listing = self._repo.get_artifacts(name=name)
        for page in range(ARTIFACT_PAGES):
            items = self._call(
                f"list the artifacts named {name!r}",
                partial(listing.get_page, page),
                permission=ACTIONS_READ,
                idempotent=True,
            )
            found.extend(_artifact(item) for item in items)
            if len(items) < 100:
                break
        return found

    def workflow_permissions(self) -> WorkflowPermissions | None:
        """The repository's workflow permissions settings, or None when this token may not read them (403, or
        404 where GitHub hides the endpoint): it needs `administration: read`, which no GITHUB_TOKEN has.

        GET /repos/{owner}/{repo}/actions/permissions/workflow
        (actions/get-github-actions-default-workflow-permissions-repository)"""
        url = f"{self._repo.url}/actions/permissions/workflow"
        try:
            data = self._get("read the repository's workflow permissions", url, ADMINISTRATION_READ)
        except TrackerError as error:
            cause = error.__cause__
            if isinstance(cause, GithubException) and cause.status in (403, 404):
                return None
            raise
        try:
            return WorkflowPermissions.model_validate(data)
        except ValidationError as error:
            message = f"GitHub's answer about the workflow permissions is not understood: {error}"
            raise TrackerError(message) from error

    def workflow(self, file_name: str) -> dict[str, Any] | None:
        """The workflow defined by `.github/workflows/<file_name>`, or None when GitHub does not know it."""
        url = f"{self._repo.url}/actions/workflows/{file_name}"
        return self._get(f"read the workflow {file_name}", url, ACTIONS_READ, missing_ok=True)


def _artifact(item: Any) -> Artifact:
    run = item.workflow_run
    return Artifact(
        id=item.id,
        name=item.name,
        size_in_bytes=item.size_in_bytes,
        expired=bool(item.expired),
        created_at=item.created_at,
        expires_at=item.expires_at,
        archive_download_url=item.archive_download_url,
        run_id=run.id if run is not None else None,
        head_branch=run.head_branch if run is not None else None,
        head_repository_id=run.head_repository_id if run is not None else None,
        repository_id=run.repository_id if run is not None else None,
    )


def actions_api_from_settings(settings: Settings, options: GitHubOptions | None = None) -> ActionsApi:
    """The same token, repository and pacing as the tracker."""
    return ActionsApi.sharing(github_api_from_settings(settings, options))


__all__ = ["ISSUES_READ", "ActionsApi", "Artifact", "WorkflowPermissions", "actions_api_from_settings"]
