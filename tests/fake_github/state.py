"""What the fake GitHub remembers, and how it renders it as GitHub's JSON.

Shapes follow GitHub's REST description (the server validates every response against it); only the fields the
description requires, plus the ones a client reads, are filled in.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

BOT_LOGIN = "github-actions[bot]"


def ts(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def git_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Issue:
    number: int
    title: str
    body: str
    user: str
    labels: list[str]
    created_at: datetime
    updated_at: datetime
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    comments: int = 0
    pull: bool = False
    # a locked conversation (REST "Lock an issue": `lock_reason` off-topic | too heated | resolved | spam)
    locked: bool = False
    lock_reason: str | None = None


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Label:
    id: int
    name: str
    color: str
    description: str | None


@dataclass
class Reaction:
    id: int
    comment_id: int
    user: str
    content: str
    created_at: datetime


@dataclass
class Pull:
    number: int
    title: str
    body: str
    head: str
    base: str
    draft: bool
    user: str
    created_at: datetime
    state: str = "open"
    updated_at: datetime | None = None
    closed_at: datetime | None = None
    merged_at: datetime | None = None
    merge_commit_sha: str | None = None


@dataclass
class Artifact:
    id: int
    name: str
    data: bytes
    created_at: datetime
    expires_at: datetime
    head_branch: str = "main"
    run_id: int = 1


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    has_issues: bool = True
    default_branch: str = "main"
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # keyed by lower-cased name
    reactions: dict[int, list[Reaction]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # "refs/heads/main" -> sha
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (branch, path) -> content
    pulls: dict[int, Pull] = field(default_factory=dict)
    artifacts: dict[int, Artifact] = field(default_factory=dict)
    expired_artifacts: set[int] = field(default_factory=set)
    collaborators: dict[str, str] = field(default_factory=dict)  # login -> role: admin, maintain, write, ...
    # Issues no longer here (REST "Get an issue"): deleted ones answer 410 Gone; transferred ones answer
    # 301 Moved Permanently with the new location (number -> that issue's API URL, in a repository the
    # fake does not serve, so following it answers 404 as for "a repository where the authenticated user
    # lacks read access"). An issue converted to a discussion is gone from the REST API too: `deleted`.
    deleted: set[int] = field(default_factory=set)
    transferred: dict[int, str] = field(default_factory=dict)
    # Settings -> Actions -> General -> Workflow permissions, as GET .../actions/permissions/workflow shows
    # them (`actions-get-default-workflow-permissions` in GitHub's REST description). The defaults are those
    # of a new organisation or repository: a read-only GITHUB_TOKEN (GitHub changelog 2023-02-02, "Updating
    # the default GITHUB_TOKEN permissions to read-only") and "Allow GitHub Actions to create and approve pull
    # requests" off (changelog 2022-05-03; "In all new repositories, you now have to explicitly enable
    # this": peter-evans/create-pull-request#3979).
    default_workflow_permissions: str = "read"  # read | write
    can_approve_pull_request_reviews: bool = False
    pushed_at: datetime | None = None  # the last push; None: when the repository was created
    # Whether the repository is private, and its owner's plan (free | pro | team | enterprise_cloud): draft
    # pull requests "are available in public repositories with GitHub Free and GitHub Free for
    # organizations, GitHub Pro, and legacy per-repository billing plans, and in public and private
    # repositories with GitHub Team and GitHub Enterprise Cloud" (REST docs, "Create a pull request", the
    # `draft` parameter); elsewhere pulls/create answers 422 (`drafts_allowed`).
    private: bool = False
    plan: str = "free"

    @property
    def drafts_allowed(self) -> bool:
        return not self.private or self.plan in ("team", "enterprise_cloud")

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def next_number(self) -> int:
        # GitHub never hands a number out twice: a deleted or transferred issue's number stays taken
        return max([0, *self.issues, *self.pulls, *self.deleted, *self.transferred]) + 1


class State:
    """Every repository the fake knows, and the id sequences GitHub would hand out."""

    def __init__(self, base_url: str, clock: Callable[[], datetime]) -> None:
        self.base_url = base_url.rstrip("/")
        self.clock = clock
        self.repos: dict[str, Repo] = {}
        self._ids = itertools.count(1001)

    def next_id(self) -> int:
        return next(self._ids)

    def now(self) -> datetime:
        return self.clock().replace(microsecond=0)

    def add_repo(self, full_name: str, **fields: Any) -> Repo:
        owner, name = full_name.split("/")
        repo = Repo(owner=owner, name=name, id=self.next_id(), **fields)
        main_sha = git_sha(b"initial commit")
        repo.refs[f"refs/heads/{repo.default_branch}"] = main_sha
        self.repos[full_name.lower()] = repo
        return repo

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    # --- issues -----------------------------------------------------------------------------
    def create_issue(self, repo: Repo, title: str, body: str, labels: list[str], user: str) -> Issue:
        now = self.now()
        for name in labels:  # GitHub creates unknown labels on the fly (grey, no description)
            self.ensure_label(repo, name)
        issue = Issue(repo.next_number(), title, body, user, self.label_names(repo, labels), now, now)
        repo.issues[issue.number] = issue
        return issue

    def label_names(self, repo: Repo, names: list[str]) -> list[str]:
        seen: dict[str, str] = {}
        for name in names:
            label = repo.labels.get(name.lower())
            seen.setdefault(name.lower(), label.name if label else name)
        return list(seen.values())

    def ensure_label(self, repo: Repo, name: str) -> Label:
        label = repo.labels.get(name.lower())
        if label is None:
            label = Label(self.next_id(), name, "ededed", None)
            repo.labels[name.lower()] = label
        return label

    def touch(self, issue: Issue) -> None:
        issue.updated_at = max(self.now(), issue.updated_at)

    def set_state(self, issue: Issue, state: str, reason: str | None) -> None:
        if state == issue.state:
            return
        issue.state = state
        if state == "closed":
            issue.closed_at = self.now()
            issue.state_reason = reason or "completed"
        else:
            issue.closed_at = None
            issue.state_reason = "reopened"

    # --- rendering --------------------------------------------------------------------------
    def user(self, login: str) -> dict[str, Any]:
        url = f"{self.base_url}/users/{login}"
        html = f"https://github.com/{login}"
        return {
            "login": login,
            "id": int(hashlib.sha1(login.encode()).hexdigest()[:6], 16),
            "node_id": f"U_{login}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{len(login)}",
            "gravatar_id": "",
            "url": url,
            "html_url": html,
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions",
            "organizations_url": f"{url}/orgs",
            "repos_url": f"{url}/repos",
            "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False,
        }

    def repo_url(self, repo: Repo) -> str:
        return f"{self.base_url}/repos/{repo.full_name}"

    def label_json(self, repo: Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": f"LA_{label.id}",
            "url": f"{self.repo_url(repo)}/labels/{label.name}",
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": False,
        }

    def issue_json(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        url = f"{self.repo_url(repo)}/issues/{issue.number}"
        labels = [self.label_json(repo, self.ensure_label(repo, name)) for name in issue.labels]
        data: dict[str, Any] = {
            "id": 5_000_000 + issue.number,
            "node_id": f"I_{repo.id}_{issue.number}",
            "url": url,
            "repository_url": self.repo_url(repo),
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"https://github.com/{repo.full_name}/issues/{issue.number}",
            "number": issue.number,
            "state": issue.state,
            "state_reason": issue.state_reason,
            "title": issue.title,
            "body": issue.body,
            "user": self.user(issue.user),
            "labels": labels,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": issue.locked,
            "active_lock_reason": issue.lock_reason,
            "comments": issue.comments,
            "closed_at": ts(issue.closed_at),
            "created_at": ts(issue.created_at),
            "updated_at": ts(issue.updated_at),
            "author_association": "NONE",
            "closed_by": None,
        }
        if issue.pull:
            pull_url = f"{self.repo_url(repo)}/pulls/{issue.number}"
            html = f"https://github.com/{repo.full_name}/pull/{issue.number}"
            data["pull_request"] = {
                "url": pull_url,
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": None,
            }
        return data

    def search_item_json(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        data = self.issue_json(repo, issue)
        data["score"] = 1.0
        return data

    def comment_json(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": f"{self.repo_url(repo)}/issues/comments/{comment.id}",
            "html_url": f"https://github.com/{repo.full_name}/issues/{comment.issue_number}#issuecomment-{comment.id}",
            "issue_url": f"{self.repo_url(repo)}/issues/{comment.issue_number}",
            "body": comment.body,
            "user": self.user(comment.user),
            "created_at": ts(comment.created_at),
            "updated_at": ts(comment.updated_at),
            "author_association": self.author_association(repo, comment.user),
        }

    @staticmethod
    def author_association(repo: Repo, login: str) -> str:
        """The commenter's relation to the repository, as GitHub gives it in a comment (REST "Issue comments":
        `OWNER`, `MEMBER`, `COLLABORATOR`, ... `NONE`): the owner, a collaborator, else nobody (this fake has
        no organizations, so no `MEMBER`, and no commit history, so no `CONTRIBUTOR`)."""
        if login.lower() == repo.owner.lower():
            return "OWNER"
        if login in repo.collaborators:
            return "COLLABORATOR"
        return "NONE"

    def reaction_json(self, reaction: Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": f"REA_{reaction.id}",
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": ts(reaction.created_at),
        }

    def repository_json(self, repo: Repo, *, full: bool = True) -> dict[str, Any]:
        url = self.repo_url(repo)
        html = f"https://github.com/{repo.full_name}"
        templated = {
            "archive_url": "/{archive_format}{/ref}",
            "assignees_url": "/assignees{/user}",
            "blobs_url": "/git/blobs{/sha}",
            "branches_url": "/branches{/branch}",
            "collaborators_url": "/collaborators{/collaborator}",
            "comments_url": "/comments{/number}",
            "commits_url": "/commits{/sha}",
            "compare_url": "/compare/{base}...{head}",
            "contents_url": "/contents/{+path}",
            "contributors_url": "/contributors",
            "deployments_url": "/deployments",
            "downloads_url": "/downloads",
            "events_url": "/events",
            "forks_url": "/forks",
            "git_commits_url": "/git/commits{/sha}",
            "git_refs_url": "/git/refs{/sha}",
            "git_tags_url": "/git/tags{/sha}",
            "hooks_url": "/hooks",
            "issue_comment_url": "/issues/comments{/number}",
            "issue_events_url": "/issues/events{/number}",
            "issues_url": "/issues{/number}",
            "keys_url": "/keys{/key_id}",
            "labels_url": "/labels{/name}",
            "languages_url": "/languages",
            "merges_url": "/merges",
            "milestones_url": "/milestones{/number}",
            "notifications_url": "/notifications{?since,all,participating}",
            "pulls_url": "/pulls{/number}",
            "releases_url": "/releases{/id}",
            "stargazers_url": "/stargazers",
            "statuses_url": "/statuses/{sha}",
            "subscribers_url": "/subscribers",
            "subscription_url": "/subscription",
            "tags_url": "/tags",
            "teams_url": "/teams",
            "trees_url": "/git/trees{/sha}",
        }
        data: dict[str, Any] = {key: url + suffix for key, suffix in templated.items()}
        created = ts(datetime(2024, 1, 1, tzinfo=UTC))
        open_issues = sum(1 for i in repo.issues.values() if i.state == "open")
        data.update(
            {
                "id": repo.id,
                "node_id": f"R_{repo.id}",
                "name": repo.name,
                "full_name": repo.full_name,
                "owner": self.user(repo.owner),
                "private": repo.private,
                "html_url": html,
                "description": None,
                "fork": False,
                "url": url,
                "clone_url": f"{html}.git",
                "git_url": f"git://github.com/{repo.full_name}.git",
                "ssh_url": f"git@github.com:{repo.full_name}.git",
                "svn_url": html,
                "mirror_url": None,
                "homepage": None,
                "language": "Python",
                "default_branch": repo.default_branch,
                "forks": 0,
                "forks_count": 0,
                "stargazers_count": 0,
                "watchers": 0,
                "watchers_count": 0,
                "size": 1,
                "open_issues": open_issues,
                "open_issues_count": open_issues,
                "has_issues": repo.has_issues,
                "has_projects": False,
                "has_wiki": False,
                "has_pages": False,
                "has_downloads": False,
                "has_discussions": False,
                "archived": False,
                "disabled": False,
                "license": None,
                "pushed_at": ts(repo.pushed_at) if repo.pushed_at else created,
                "created_at": created,
                "updated_at": created,
            }
        )
        if full:
            data["network_count"] = 0
            data["subscribers_count"] = 0
        return data

    def ref_json(self, repo: Repo, ref: str) -> dict[str, Any]:
        sha = repo.refs[ref]
        return {
            "ref": ref,
            "node_id": f"REF_{hashlib.sha1(ref.encode()).hexdigest()[:8]}",
            "url": f"{self.repo_url(repo)}/git/{ref}",
            "object": {"type": "commit", "sha": sha, "url": f"{self.repo_url(repo)}/git/commits/{sha}"},
        }

    def content_json(self, repo: Repo, branch: str, path: str) -> dict[str, Any]:
        data = repo.files[(branch, path)]
        sha = git_sha(data)
        url = f"{self.repo_url(repo)}/contents/{path}?ref={branch}"
        html = f"https://github.com/{repo.full_name}/blob/{branch}/{path}"
        git = f"{self.repo_url(repo)}/git/blobs/{sha}"
        return {
            "type": "file",
            "encoding": "base64",
            "size": len(data),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "content": base64.b64encode(data).decode(),
            "sha": sha,
            "url": url,
            "git_url": git,
            "html_url": html,
            "download_url": f"https://raw.githubusercontent.com/{repo.full_name}/{branch}/{path}",
            "_links": {"git": git, "html": html, "self": url},
        }

    def file_commit_json(self, repo: Repo, branch: str, path: str) -> dict[str, Any]:
        commit_sha = repo.refs[f"refs/heads/{branch}"]
        content = self.content_json(repo, branch, path)
        content.pop("content")
        content.pop("encoding")
        return {
            "content": content,
            "commit": {
                "sha": commit_sha,
                "node_id": f"C_{commit_sha[:8]}",
                "url": f"{self.repo_url(repo)}/git/commits/{commit_sha}",
                "html_url": f"https://github.com/{repo.full_name}/commit/{commit_sha}",
                "message": "update",
            },
        }

    def pull_json(self, repo: Repo, pull: Pull) -> dict[str, Any]:
        url = f"{self.repo_url(repo)}/pulls/{pull.number}"
        html = f"https://github.com/{repo.full_name}/pull/{pull.number}"
        issue_url = f"{self.repo_url(repo)}/issues/{pull.number}"
        repository = self.repository_json(repo, full=False)

        def side(ref: str) -> dict[str, Any]:
            return {
                "label": f"{repo.owner}:{ref}",
                "ref": ref,
                "sha": repo.refs.get(f"refs/heads/{ref}", "0" * 40),
                "repo": repository,
                "user": self.user(repo.owner),
            }

        def link(href: str) -> dict[str, str]:
            return {"href": href}

        return {
            "id": 7_000_000 + pull.number,
            "node_id": f"PR_{pull.number}",
            "url": url,
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_url,
            "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.repo_url(repo)}/pulls/comments{{/number}}",
            "comments_url": f"{issue_url}/comments",
            "statuses_url": f"{self.repo_url(repo)}/statuses/{side(pull.head)['sha']}",
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "title": pull.title,
            "user": self.user(pull.user),
            "body": pull.body,
            "labels": [],
            "milestone": None,
            "created_at": ts(pull.created_at),
            "updated_at": ts(pull.updated_at or pull.created_at),
            "closed_at": ts(pull.closed_at),
            "merged_at": ts(pull.merged_at),
            "merge_commit_sha": pull.merge_commit_sha,
            "assignee": None,
            "draft": pull.draft,
            "head": side(pull.head),
            "base": side(pull.base),
            "_links": {
                "self": link(url),
                "html": link(html),
                "issue": link(issue_url),
                "comments": link(f"{issue_url}/comments"),
                "review_comments": link(f"{url}/comments"),
                "review_comment": link(f"{self.repo_url(repo)}/pulls/comments{{/number}}"),
                "commits": link(f"{url}/commits"),
                "statuses": link(f"{self.repo_url(repo)}/statuses/{side(pull.head)['sha']}"),
            },
            "author_association": "NONE",
            "auto_merge": None,
            "merged": pull.merged_at is not None,
            "mergeable": None,
            "mergeable_state": "unknown",
            "merged_by": None,
            "comments": 0,
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": 1,
            "additions": 1,
            "deletions": 0,
            "changed_files": 1,
        }

    def artifact_json(self, repo: Repo, artifact: Artifact) -> dict[str, Any]:
        url = f"{self.repo_url(repo)}/actions/artifacts/{artifact.id}"
        return {
            "id": artifact.id,
            "node_id": f"MDg6QXJ0aWZhY3Qx{artifact.id}",
            "name": artifact.name,
            "size_in_bytes": len(artifact.data),
            "url": url,
            "archive_download_url": f"{url}/zip",
            "expired": artifact.id in repo.expired_artifacts,
            "created_at": ts(artifact.created_at),
            "expires_at": ts(artifact.expires_at),
            "updated_at": ts(artifact.created_at),
            "digest": None,
            "workflow_run": {
                "id": artifact.run_id,
                "repository_id": repo.id,
                "head_repository_id": repo.id,
                "head_branch": artifact.head_branch,
                "head_sha": repo.refs.get(f"refs/heads/{repo.default_branch}", "0" * 40),
            },
        }

    def add_artifact(
        self, repo: Repo, name: str, data: bytes, *, head_branch: str = "main", run_id: int = 1
    ) -> Artifact:
        now = self.now()
        artifact = Artifact(self.next_id(), name, data, now, now + timedelta(days=90), head_branch, run_id)
        repo.artifacts[artifact.id] = artifact
        return artifact
