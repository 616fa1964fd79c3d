"""The few GitHub REST calls the tracker makes, through PyGithub, each counted, paced and translated.

Every method here is exactly one HTTP request per attempt (listings: one per page), so the tracker's request
count is exact and the round's budget holds. PyGithub does the authentication, the base URL (GitHub Enterprise
Server too) and the spacing of writes; its own retries are off, because a blind retry of a create is how twins
are born: rate limits are waited out here (`ratelimit.py`), server errors are retried only for reads, and a
write whose outcome is unknown raises `OutcomeUnknown` for the tracker to reconcile.

Third-party errors stop here: PyGithub's and requests' exceptions become `TrackerError`s that name the
operation, the repository and the permission that is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Literal, TypeVar, overload

import requests
from github import Auth, Github, GithubException
from github.Repository import Repository

from rounds_bot.errors import TrackerError
from rounds_bot.github.answers import (
    JsonObject,
    github_time,
    header,
    json_object,
    message_of,
    missing_permission,
    next_link,
    validation_details,
)
from rounds_bot.github.ratelimit import CallBudget, Waiter, is_rate_limited
from rounds_bot.github.refusals import IssueAction, issue_refusal, issues_disabled, moved_away

T = TypeVar("T")
# the issue a call is about, and what it does to it: its refusals are told apart (`refusals.py`)
_About = tuple[int, IssueAction] | None
# A JSON object as GitHub answers it (PyGithub hands answers over untyped).
PER_PAGE = 100
ISSUES_READ = "issues: read"
ISSUES_WRITE = "issues: write"
#: the account a workflow's GITHUB_TOKEN acts as; only the repository's own workflows can write as it
WORKFLOW_BOT = "github-actions[bot]"
_VIEWER = "query { viewer { login } }"


class OutcomeUnknown(TrackerError):
    """A write was sent but no answer came back (5xx, reset connection): it may or may not have happened."""


class Listing:
    """One listing's result: the items of every page, or `not_modified` when the ETag still matched."""

    def __init__(self, items: list[dict[str, Any]], etag: str | None, not_modified: bool = False) -> None:
        self.items = items
        self.etag = etag
        self.not_modified = not_modified


def make_github(
    token: str,
    api_url: str,
    *,
    write_interval_seconds: float,
    timeout_seconds: int = 30,
) -> Github:
    return Github(
        auth=Auth.Token(token),
        base_url=api_url.rstrip("/"),
        timeout=timeout_seconds,
        retry=None,  # no hidden retries: see the module docstring
        per_page=PER_PAGE,
        seconds_between_requests=None,
        seconds_between_writes=write_interval_seconds or None,
        lazy=True,
        user_agent="rounds-bot",
    )


ApiT = TypeVar("ApiT", bound="GitHubApi")


class GitHubApi:
    def __init__(
        self,
        github: Github,
        repository: str,
        budget: CallBudget,
        waiter: Waiter,
        *,
        server_error_retries: int = 2,
        backoff_seconds: float = 2.0,
    ) -> None:
        self.github = github
        self.repository = repository
        self.budget = budget
        self.waiter = waiter
        self.server_error_retries = server_error_retries
        self.backoff_seconds = backoff_seconds
        self._repo: Repository = github.get_repo(repository)  # lazy: no request
        self._own_login: str | None = None

    @classmethod
    def sharing(cls: type[ApiT], other: GitHubApi) -> ApiT:
        """An API of this kind with `other`'s token, repository, budget and pacing."""
        api = cls(
            other.github,
            other.repository,
            other.budget,
            other.waiter,
            server_error_retries=other.server_error_retries,
            backoff_seconds=other.backoff_seconds,
        )
        api._own_login = other._own_login
        return api

    @property
    def requests_made(self) -> int:
        return self.budget.used

    # --- reads --------------------------------------------------------------------------------
    def list_issues(self, label: str, since: str | None, etag: str | None = None) -> Listing:
        """Every issue and pull request carrying `label`, oldest update first; conditional on `etag`."""
        parameters: dict[str, Any] = {
            "labels": label,
            "state": "all",
            "sort": "updated",
            "direction": "asc",
            "per_page": PER_PAGE,
        }
        if since:
            parameters["since"] = since
        return self._list(f"{self._repo.url}/issues", parameters, etag, f"list the issues labelled {label!r}")

    def get_issue(self, number: int) -> dict[str, Any] | None:
        """One issue, or None when it is gone (deleted, transferred, never existed)."""
        return self._get(
            f"read issue #{number}", f"{self._repo.url}/issues/{number}", ISSUES_READ, missing_ok=True
        )

    def list_comments(self, number: int, since: str | None) -> list[dict[str, Any]]:
        parameters: dict[str, Any] = {"per_page": PER_PAGE}
        if since:
            parameters["since"] = since
        url, what = f"{self._repo.url}/issues/{number}/comments", f"list the comments of #{number}"
        return self._list(url, parameters, None, what, issue=(number, "read")).items

    def list_labels(self, etag: str | None) -> Listing:
        url = f"{self._repo.url}/labels"
        return self._list(url, {"per_page": PER_PAGE}, etag, "list the repository's labels")

    # --- who rounds is -------------------------------------------------------------------------
    def own_login(self) -> str:
        """The login of the account this token acts as: `github-actions[bot]` for a workflow's token, a
        GitHub App's `<slug>[bot]` for its installation token, a person for theirs. GraphQL's `viewer`
        answers it for every kind of token (REST's `GET /user` refuses installation tokens); asked once."""
        if self._own_login is None:
            _, data = self._call(
                "ask GitHub whose token this is",
                lambda: self.github.requester.graphql_query(_VIEWER, {}),
                permission="metadata: read",
                idempotent=True,
            )
            login = ((data.get("data") or {}).get("viewer") or {}).get("login")
            if not isinstance(login, str) or not login:
                raise TrackerError("GitHub did not say whose token this is (GraphQL `viewer` has no login)")
            self._own_login = login
        return self._own_login

    def wrote(self, item: Mapping[str, Any]) -> bool:
        """Whether rounds wrote this issue or comment (GitHub's JSON of it): its author is the workflow
        token's account, which only the repository's own workflows act as, or the account of the token
        rounds runs with (`own_login`, asked only when the author is another)."""
        login = (item.get("user") or {}).get("login")
        if not isinstance(login, str) or not login:
            return False
        return login == WORKFLOW_BOT or login == self.own_login()

    # --- writes -------------------------------------------------------------------------------
    def create_issue(self, title: str, body: str, labels: list[str]) -> dict[str, Any]:
        issue = self._call(
            "create an issue",
            lambda: self._repo.create_issue(title=title, body=body, labels=labels),
            permission=ISSUES_WRITE,
        )
        return issue.raw_data

    def edit_issue(
        self, number: int, *, body: str, state: str | None = None, labels: list[str] | None = None
    ) -> dict[str, Any]:
        """PATCH an issue; returns the fields the tracker mirrors, as GitHub answered them."""
        fields: dict[str, Any] = {"body": body}
        if state is not None:
            fields["state"] = state
        if labels is not None:
            fields["labels"] = labels
        issue = self._repo.get_issue(number)  # lazy: no request until edit()
        about: _About = (number, "edit")
        self._call(
            f"edit issue #{number}", lambda: issue.edit(**fields), permission=ISSUES_WRITE, issue=about
        )
        if (moved := moved_away(number, issue.url, self.repository)) is not None:
            raise moved
        return {
            "number": issue.number,
            "html_url": issue.html_url,
            "title": issue.title,
            "state": issue.state,
            "state_reason": issue.state_reason,
            "labels": [{"name": label.name} for label in issue.labels],
            "updated_at": github_time(issue.updated_at),
        }

    def create_comment(self, number: int, body: str) -> dict[str, Any]:
        issue = self._repo.get_issue(number)
        about: _About = (number, "comment")
        comment = self._call(
            f"comment on issue #{number}",
            lambda: issue.create_comment(body),
            permission=ISSUES_WRITE,
            issue=about,
        )
        return comment.raw_data

    def create_label(self, name: str, color: str, description: str) -> bool:
        """Create a label; False when it already exists (someone made it meanwhile)."""
        try:
            self._call(
                f"create the label {name!r}",
                lambda: self._repo.create_label(name=name, color=color, description=description),
                permission=ISSUES_WRITE,
                exists_ok=True,
            )
        except _AlreadyExists:
            return False
        return True

    # --- plumbing -----------------------------------------------------------------------------
    def _list(
        self, url: str, parameters: dict[str, Any], etag: str | None, what: str, issue: _About = None
    ) -> Listing:
        requester = self.github.requester
        headers = {"If-None-Match": etag} if etag else {}
        first_headers, data = self._call(
            what,
            lambda: requester.requestJsonAndCheck("GET", url, parameters=parameters, headers=headers),
            permission=ISSUES_READ,
            idempotent=True,
            issue=issue,
        )
        if data is None:  # 304 Not Modified: the ETag still matches, and it cost no quota
            return Listing([], etag, not_modified=True)
        items: list[dict[str, Any]] = list(data)
        next_url = next_link(first_headers)
        while next_url:
            page_headers, page = self._call(
                what,
                partial(requester.requestJsonAndCheck, "GET", next_url),
                permission=ISSUES_READ,
                idempotent=True,
            )
            items.extend(page or [])
            next_url = next_link(page_headers)
        return Listing(items, header(first_headers, "etag"))

    @overload
    def _get(
        self, what: str, url: str, permission: str, *, missing_ok: Literal[False] = False
    ) -> JsonObject: ...

    @overload
    def _get(self, what: str, url: str, permission: str, *, missing_ok: bool) -> JsonObject | None: ...

    def _get(self, what: str, url: str, permission: str, *, missing_ok: bool = False) -> JsonObject | None:
        """GET one resource; with `missing_ok`, None when GitHub answers that it is not there (404, 410)."""
        try:
            _, data = self._call(
                what,
                lambda: self.github.requester.requestJsonAndCheck("GET", url),
                permission=permission,
                idempotent=True,
                missing_ok=missing_ok,
            )
        except _Missing:
            return None
        return json_object(data)

    def _call(
        self,
        what: str,
        send: Callable[[], T],
        *,
        permission: str,
        idempotent: bool = False,
        missing_ok: bool = False,
        exists_ok: bool = False,
        issue: _About = None,  # a call about this issue: its refusal (gone, locked) is raised as such
    ) -> T:
        attempt = 0
        while True:
            if self.budget.nearly_spent():
                self.waiter.wait_for_reset(self.budget, what)
            self.budget.spend(what)
            try:
                result = send()
            except GithubException as exc:
                self._observe()
                status, headers, message = exc.status, exc.headers or {}, message_of(exc)
                if is_rate_limited(status, headers, message):
                    self.waiter.wait_out_rate_limit(headers, attempt, what)
                    self.budget.github_remaining = None  # what the refused answer said is stale now
                    attempt += 1
                    continue  # a rate-limited request was refused, not applied: safe to send again
                if status >= 500 and idempotent and attempt < self.server_error_retries:
                    self.waiter.pause(self.backoff_seconds * 2**attempt)
                    attempt += 1
                    continue
                if missing_ok and status in (404, 410):
                    raise _Missing from exc
                if exists_ok and status == 422 and "already_exists" in str(exc.data):
                    raise _AlreadyExists from exc
                if issue and (refusal := issue_refusal(status, message, issue[0], self.repository, issue[1])):
                    raise refusal from exc
                error = self._translate(status, headers, message, exc.data, what, permission, idempotent)
                raise error from exc
            except requests.RequestException as exc:
                if idempotent and attempt < self.server_error_retries:
                    self.waiter.pause(self.backoff_seconds * 2**attempt)
                    attempt += 1
                    continue
                error_class = TrackerError if idempotent else OutcomeUnknown
                raise error_class(
                    f"no answer from GitHub at {self.github.requester.base_url} to {what} in "
                    f"{self.repository}: {exc.__class__.__name__}",
                    hint="check ROUNDS_GITHUB_API_URL and the network; nothing was lost: the next round "
                    "retries",
                ) from exc
            self._observe()
            return result

    def _observe(self) -> None:
        requester = self.github.requester
        remaining, _limit = requester.rate_limiting
        self.budget.observe(remaining if remaining >= 0 else None, requester.rate_limiting_resettime)

    def _translate(
        self,
        status: int,
        headers: Mapping[str, Any],
        message: str,
        data: Any,
        what: str,
        permission: str,
        idempotent: bool,
    ) -> TrackerError:
        repo = self.repository
        said = f" (GitHub said: {message})" if message else ""
        if status == 401:
            return TrackerError(
                f"GitHub rejected the token when asked to {what} in {repo}: 401{said}",
                hint="set GITHUB_TOKEN to a valid token: in Actions `${{ secrets.GITHUB_TOKEN }}` "
                "or a GitHub App installation token",
            )
        if status == 403:
            needed = missing_permission(headers) or f"`{permission}`"
            return TrackerError(
                f"the token may not {what} in {repo}: it lacks the {needed} permission{said}",
                hint=f"grant {needed} to the workflow job (`permissions:`), the GitHub App or the "
                "fine-grained token",
            )
        if status == 404:
            return TrackerError(
                f"cannot {what}: repository {repo} was not found, or the token cannot see it (404)",
                hint="check GITHUB_REPOSITORY (owner/name) and that the token belongs to that repository",
            )
        if status == 410:
            return issues_disabled(what, repo, message)
        if status == 422:
            details = validation_details(data)
            return TrackerError(
                f"GitHub refused to {what} in {repo}: 422 {message}{details}",
                hint="the request was not applied; if this repeats, report it as a bug in rounds",
            )
        if status >= 500:
            error_class = TrackerError if idempotent else OutcomeUnknown
            return error_class(
                f"GitHub answered {status} when asked to {what} in {repo}{said}",
                hint="a GitHub outage; nothing was lost: the next round retries",
            )
        return TrackerError(f"GitHub answered {status} when asked to {what} in {repo}{said}")


class _Missing(Exception):
    """Internal: the resource is gone (404/410) and the caller said that is fine."""


class _AlreadyExists(Exception):
    """Internal: a 422 `already_exists` the caller said is fine."""
