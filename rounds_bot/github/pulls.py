"""The pull request calls a fix proposal makes: find by branch, open as a draft, update, read its state.

One request each, through the same plumbing as every other GitHub call (`GitHubApi._call`: counted, paced,
rate limits waited out, errors translated). rounds opens pull requests and edits their description; it never
merges, approves or closes one: there is no method for it here.

Opening one with a workflow's GITHUB_TOKEN is refused (403) while the repository's (or organisation's) setting
"Allow GitHub Actions to create and approve pull requests" is off, whatever the job's `pull-requests: write`
(GitHub changelog 2022-05-03, "GitHub Actions: Prevent GitHub Actions from creating and approving pull
requests"; off in new repositories: peter-evans/create-pull-request#3979). GitHub answers `{"message": "GitHub
Actions is not permitted to create or approve pull requests.", "documentation_url":
"https://docs.github.com/rest/pulls/pulls#create-a-pull-request"}` (quoted in peter-evans/create-pull-request
#1175 and #3979, googleapis/release-please-action#767). That refusal is `PullCreationRefused`, never blamed on
the permission. A GitHub App's installation token is not affected by the setting.

Draft pull requests "are available in public repositories with GitHub Free and GitHub Free for organizations,
GitHub Pro, and legacy per-repository billing plans, and in public and private repositories with GitHub Team
and GitHub Enterprise Cloud" (REST docs, "Create a pull request", the `draft` parameter). Elsewhere (a private
repository on GitHub Free or Pro) GitHub answers 422 `{"message": "Draft pull requests are not supported in
this repository.", "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"}`
(quoted in SWE-agent/SWE-agent#179 and cli/cli#520). That refusal is `DraftsNotSupported`: nothing was opened,
and the same request would be refused again, so the caller opens the pull request as a non-draft
(`create_pull(draft=False)`).
"""

from __future__ import annotations

from typing import Any

from github import GithubException

from rounds_bot.errors import TrackerError
from rounds_bot.github.actions import ActionsApi
from rounds_bot.github.answers import json_object, message_of
from rounds_bot.github.tracker import GitHubOptions, github_api_from_settings
from rounds_bot.settings import Settings

PULLS_READ = "pull_requests: read"
PULLS_WRITE = "pull_requests: write"
#: GitHub's message when a workflow's GITHUB_TOKEN may not open pull requests (see the module docstring)
ACTIONS_MAY_NOT_OPEN = "GitHub Actions is not permitted to create or approve pull requests"
#: GitHub's message when a repository has no draft pull requests (see the module docstring)
DRAFTS_NOT_SUPPORTED = "Draft pull requests are not supported in this repository"
ACTIONS_SETTING = (
    "Settings → Actions → General → Workflow permissions → "
    '"Allow GitHub Actions to create and approve pull requests"'
)


class PullCreationRefused(TrackerError):
    """GitHub does not let this token (a workflow's GITHUB_TOKEN) open pull requests: a repository setting."""


class DraftsNotSupported(TrackerError):
    """GitHub has no draft pull requests in this repository (private, on a plan without them): none was
    opened, and asking again for a draft is refused again."""


class PullsApi(ActionsApi):
    """`ActionsApi` plus the pull request calls."""

    def pull_for_branch(self, branch: str) -> dict[str, Any] | None:
        """The newest pull request from `branch` of this repository (open or not), or None."""
        owner = self.repository.split("/")[0]
        parameters = {"head": f"{owner}:{branch}", "state": "all", "per_page": 100}
        _, data = self._call(
            f"find the pull request of branch {branch}",
            lambda: self.github.requester.requestJsonAndCheck(
                "GET", f"{self._repo.url}/pulls", parameters=parameters
            ),
            permission=PULLS_READ,
            idempotent=True,
        )
        pulls = [pull for pull in data or [] if (pull.get("head") or {}).get("ref") == branch]
        pulls.sort(key=lambda pull: (pull.get("state") == "open", int(pull["number"])), reverse=True)
        return json_object(pulls[0]) if pulls else None

    def get_pull(self, number: int) -> dict[str, Any]:
        return self._get(f"read pull request #{number}", f"{self._repo.url}/pulls/{number}", PULLS_READ)

    def create_draft_pull(self, *, title: str, body: str, head: str, base: str) -> dict[str, Any]:
        """Open a DRAFT pull request from `head` into `base` (`DraftsNotSupported` where GitHub has none)."""
        return self.create_pull(title=title, body=body, head=head, base=base, draft=True)

    def create_pull(self, *, title: str, body: str, head: str, base: str, draft: bool) -> dict[str, Any]:
        """Open a pull request from `head` into `base`, a draft when `draft`."""
        fields = {"title": title, "body": body, "head": head, "base": base, "draft": draft}
        what = f"open a {'draft ' if draft else ''}pull request from {head}"
        try:
            _, data = self._call(
                what,
                lambda: self.github.requester.requestJsonAndCheck(
                    "POST", f"{self._repo.url}/pulls", input=fields
                ),
                permission=PULLS_WRITE,
            )
        except TrackerError as error:
            if _actions_may_not_open(error.__cause__):
                raise PullCreationRefused(
                    f"GitHub refused to {what} in {self.repository}: {ACTIONS_MAY_NOT_OPEN}",
                    hint=f"turn on {ACTIONS_SETTING}, or open pull requests with a GitHub App token "
                    "(the fix action's `github-token` input)",
                ) from error.__cause__
            if draft and _drafts_not_supported(error.__cause__):
                raise DraftsNotSupported(
                    f"GitHub refused to {what} in {self.repository}: {DRAFTS_NOT_SUPPORTED}",
                    hint="draft pull requests need a public repository, or GitHub Team or Enterprise Cloud",
                ) from error.__cause__
            raise
        return json_object(data)

    def update_pull_body(self, number: int, body: str) -> dict[str, Any]:
        _, data = self._call(
            f"update the description of pull request #{number}",
            lambda: self.github.requester.requestJsonAndCheck(
                "PATCH", f"{self._repo.url}/pulls/{number}", input={"body": body}
            ),
            permission=PULLS_WRITE,
        )
        return json_object(data)


def _actions_may_not_open(cause: BaseException | None) -> bool:
    return (
        isinstance(cause, GithubException)
        and cause.status == 403
        and ACTIONS_MAY_NOT_OPEN.lower() in message_of(cause).lower()
    )


def _drafts_not_supported(cause: BaseException | None) -> bool:
    return (
        isinstance(cause, GithubException)
        and cause.status == 422
        and DRAFTS_NOT_SUPPORTED.lower() in message_of(cause).lower()
    )


def pulls_api_from_settings(settings: Settings, options: GitHubOptions | None = None) -> PullsApi:
    """The same token, repository and pacing as the tracker."""
    return PullsApi.sharing(github_api_from_settings(settings, options))


__all__ = [
    "ACTIONS_SETTING",
    "PULLS_WRITE",
    "DraftsNotSupported",
    "PullCreationRefused",
    "PullsApi",
    "pulls_api_from_settings",
]
