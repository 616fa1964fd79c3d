"""The fake GitHub itself: state, behaviours, and its checks against GitHub's REST description.

Driven through PyGithub, so what is checked is what a real client sends and reads.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta

import pytest
import requests
from fake_github import FakeGitHub
from fake_github.actions_routes import ActionsFakeGitHub, running_actions_fake
from fake_github.fixtures import REPOSITORY, TOKEN, require_description, running_fake
from github import Auth, Github, GithubException

pytestmark = pytest.mark.github_spec


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    yield from running_fake()


def client(fake: FakeGitHub, token: str = TOKEN) -> Github:
    return Github(
        auth=Auth.Token(token),
        base_url=fake.base_url,
        retry=0,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )


def test_a_request_that_breaks_the_description_is_recorded_and_refused():
    require_description()
    with FakeGitHub() as fake:
        fake.add_token(TOKEN, issues="write")
        answer = requests.patch(
            f"{fake.base_url}/repos/{REPOSITORY}/issues/1",
            json={"state": "resolved"},
            headers={"Authorization": f"token {TOKEN}"},
            timeout=5,
        )
        assert answer.status_code == 422
        assert len(fake.violations) == 1 and "'resolved' is not one of" in fake.violations[0]


def test_search_lags_behind_while_the_label_listing_does_not(fake_github: FakeGitHub):
    fake_github.search_lag = timedelta(minutes=5)
    repo = client(fake_github).get_repo(REPOSITORY)
    repo.create_issue(title="boom", body="sig_a", labels=["rounds"])
    found = client(fake_github).search_issues("sig_a", repo=REPOSITORY, label="rounds")
    assert found.totalCount == 0
    assert [i.title for i in repo.get_issues(labels=["rounds"], state="all")] == ["boom"]
    later = fake_github.clock() + timedelta(minutes=6)
    fake_github.clock = lambda: later
    assert client(fake_github).search_issues("sig_a", repo=REPOSITORY).totalCount == 1


def test_listings_page_like_github(fake_github: FakeGitHub):
    repo = client(fake_github).get_repo(REPOSITORY)
    for i in range(7):
        fake_github.state.create_issue(fake_github.repo, f"issue {i}", "", ["rounds"], "someone")
    assert len(list(repo.get_issues(state="all"))) == 7
    answer = requests.get(
        f"{fake_github.base_url}/repos/{REPOSITORY}/issues",
        params={"per_page": 3, "page": 2},
        headers={"Authorization": f"token {TOKEN}"},
        timeout=5,
    )
    assert len(answer.json()) == 3
    assert 'rel="next"' in answer.headers["Link"] and 'rel="prev"' in answer.headers["Link"]


def test_comments_take_reactions_once_per_user(fake_github: FakeGitHub):
    issue = client(fake_github).get_repo(REPOSITORY).create_issue(title="t", body="b")
    comment = issue.create_comment("/rounds status")
    comment.create_reaction("eyes")
    comment.create_reaction("eyes")
    assert [r.content for r in comment.get_reactions()] == ["eyes"]


def test_collaborator_permissions(fake_github: FakeGitHub):
    fake_github.repo.collaborators.update({"alice": "admin", "bob": "read"})
    repo = client(fake_github).get_repo(REPOSITORY)
    assert repo.get_collaborator_permission("alice") == "admin"
    assert repo.get_collaborator_permission("bob") == "read"
    with pytest.raises(GithubException) as caught:
        repo.get_collaborator_permission("mallory")
    assert caught.value.status == 404


def test_refs_contents_and_a_draft_pull_request(fake_github: FakeGitHub):
    fake_github.add_token("writer", kind="user", contents="write", pull_requests="write", issues="write")
    repo = client(fake_github, "writer").get_repo(REPOSITORY)
    main = repo.get_git_ref("heads/main")
    repo.create_git_ref("refs/heads/rounds/fix-1", main.object.sha)
    created = repo.create_file("src/app.py", "fix", b"print('fixed')\n", branch="rounds/fix-1")
    with pytest.raises(GithubException) as stale:
        repo.update_file("src/app.py", "again", b"x", sha="0" * 40, branch="rounds/fix-1")
    assert stale.value.status == 409
    repo.update_file("src/app.py", "again", b"y", sha=created["content"].sha, branch="rounds/fix-1")
    content = repo.get_contents("src/app.py", ref="rounds/fix-1")
    assert base64.b64decode(content.content) == b"y"
    pull = repo.create_pull(base="main", head="rounds/fix-1", title="Fix", body="b", draft=True)
    assert pull.draft and [p.number for p in repo.get_pulls(state="open")] == [pull.number]


def test_artifacts_redirect_to_a_short_lived_url_and_expire(fake_github: FakeGitHub):
    artifact = fake_github.state.add_artifact(fake_github.repo, "rounds-db", b"PK\x03\x04zip")
    repo = client(fake_github).get_repo(REPOSITORY)
    [listed] = [a for a in repo.get_artifacts(name="rounds-db")]
    answer = requests.get(
        listed.archive_download_url,
        headers={"Authorization": f"token {TOKEN}"},
        timeout=5,
        allow_redirects=False,
    )
    assert answer.status_code == 302
    blob = requests.get(answer.headers["Location"], timeout=5)  # no token to the other origin
    assert blob.content == b"PK\x03\x04zip"
    fake_github.repo.expired_artifacts.add(artifact.id)
    gone = requests.get(listed.archive_download_url, headers={"Authorization": f"token {TOKEN}"}, timeout=5)
    assert gone.status_code == 410


def test_a_token_without_the_permission_gets_the_accepted_permissions_header(fake_github: FakeGitHub):
    fake_github.add_token("reader", issues="read")
    with pytest.raises(GithubException) as caught:
        client(fake_github, "reader").get_repo(REPOSITORY).create_issue(title="x")
    assert caught.value.status == 403
    assert caught.value.headers["x-accepted-github-permissions"] == "issues=write"


def draft_pull(fake: FakeGitHub, token: str, branch: str) -> int:
    repo = client(fake, token).get_repo(REPOSITORY)
    repo.create_git_ref(f"refs/heads/{branch}", repo.get_git_ref("heads/main").object.sha)
    return repo.create_pull(base="main", head=branch, title="Fix", body="b", draft=True).number


def test_a_workflow_token_may_open_a_pull_request_only_where_the_repository_allows_it(
    fake_github: FakeGitHub,
):
    granted = {"contents": "write", "pull_requests": "write"}
    fake_github.add_token("workflow", **granted)
    fake_github.add_token("app", kind="app", **granted)
    assert fake_github.repo.can_approve_pull_request_reviews is False  # a new repository's default
    with pytest.raises(GithubException) as refused:
        draft_pull(fake_github, "workflow", "rounds/fix-1")
    assert refused.value.status == 403
    assert (
        refused.value.data["message"] == "GitHub Actions is not permitted to create or approve pull requests."
    )
    assert fake_github.repo.pulls == {}
    assert draft_pull(fake_github, "app", "rounds/fix-2") in fake_github.repo.pulls  # an App is not affected
    fake_github.repo.can_approve_pull_request_reviews = True
    assert draft_pull(fake_github, "workflow", "rounds/fix-3") in fake_github.repo.pulls


@pytest.mark.parametrize(
    ("private", "plan", "drafts"),
    [
        (False, "free", True),
        (False, "pro", True),
        (True, "free", False),
        (True, "pro", False),
        (True, "team", True),
        (True, "enterprise_cloud", True),
    ],
)
def test_draft_pull_requests_only_where_githubs_plans_offer_them(
    fake_github: FakeGitHub, private: bool, plan: str, drafts: bool
):
    """REST docs, "Create a pull request", `draft`: "Draft pull requests are available in public repositories
    with GitHub Free and GitHub Free for organizations, GitHub Pro, and legacy per-repository billing plans,
    and in public and private repositories with GitHub Team and GitHub Enterprise Cloud." Elsewhere: 422."""
    fake_github.add_token("writer", kind="user", contents="write", pull_requests="write")
    fake_github.repo.private, fake_github.repo.plan = private, plan
    repo = client(fake_github, "writer").get_repo(REPOSITORY)
    assert repo.private is private
    if drafts:
        assert fake_github.repo.pulls[draft_pull(fake_github, "writer", "rounds/fix-1")].draft
        return
    with pytest.raises(GithubException) as refused:
        draft_pull(fake_github, "writer", "rounds/fix-1")
    assert refused.value.status == 422
    assert refused.value.data["message"] == "Draft pull requests are not supported in this repository."
    assert fake_github.repo.pulls == {}
    pull = repo.create_pull(base="main", head="rounds/fix-1", title="Fix", body="b", draft=False)
    assert not pull.draft and list(fake_github.repo.pulls) == [pull.number]


@pytest.fixture
def actions_fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


def test_the_workflow_permissions_need_administration_which_a_workflow_token_never_has(
    actions_fake: ActionsFakeGitHub,
):
    url = f"{actions_fake.base_url}/repos/{REPOSITORY}/actions/permissions/workflow"

    def read(token: str) -> requests.Response:
        return requests.get(url, headers={"Authorization": f"token {token}"}, timeout=5)

    actions_fake.add_token("admin-app", kind="app", administration="read")
    actions_fake.add_token("workflow-asking-for-it", administration="read")
    assert read("admin-app").json() == {
        "default_workflow_permissions": "read",
        "can_approve_pull_request_reviews": False,
    }
    for token in (TOKEN, "workflow-asking-for-it"):
        answer = read(token)
        assert (
            answer.status_code == 403
            and answer.headers["X-Accepted-GitHub-Permissions"] == "administration=read"
        )
    actions_fake.repo.default_workflow_permissions = "write"
    actions_fake.repo.can_approve_pull_request_reviews = True
    assert read("admin-app").json() == {
        "default_workflow_permissions": "write",
        "can_approve_pull_request_reviews": True,
    }
