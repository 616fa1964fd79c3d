"""The paths a fix may never change besides CI, git and the test configuration: who must review a change
(CODEOWNERS), the repository's own actions, and what an install of its Python dependencies fetches. Each is
refused in a real patch with the rule and its reason, the way the problem reaches the issue."""

from __future__ import annotations

from pathlib import Path

import pytest
from fix_samples import git, make_app

from rounds_bot.fixing.checks import patch
from rounds_bot.fixing.git import Git
from rounds_bot.fixing.patchcheck import check_patch
from rounds_bot.fixing.patchpaths import protection

pytestmark = pytest.mark.fix_loop

REVIEW = "it names who must review a change"
ACTION = "a workflow runs it (`uses: ./…`), with the job's secrets"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_app(tmp_path_factory.mktemp("protected") / "app").checkout


def refused(repo: Path, path: str) -> list[str]:
    """The problems of a patch that adds `path` to the sample app; the tree is put back afterwards."""
    head = git(repo, "rev-parse", "HEAD")
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("* @attacker\n", encoding="utf-8")
    try:
        git(repo, "add", "--all")
        change = patch(Git(repo), head, git(repo, "write-tree"))
    finally:
        target.unlink()
        git(repo, "add", "--all")
    return check_patch(change, protected=[], max_diff_lines=200, max_bytes=65_536).problems


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("CODEOWNERS", f"CODEOWNERS: {REVIEW}"),
        ("docs/CODEOWNERS", f"docs/CODEOWNERS: {REVIEW}"),
        (".github/CODEOWNERS", ".github/"),
    ],
)
def test_a_change_to_codeowners_where_github_reads_it_is_refused(repo, path, rule):
    assert refused(repo, path) == [f"`{path}` is protected ({rule})"]


def test_a_codeowners_github_never_reads_is_an_ordinary_file():
    assert protection("src/CODEOWNERS", []) is None and protection("docs/guide/CODEOWNERS", []) is None


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("action.yml", f"action.yml: {ACTION}"),
        ("action.yaml", f"action.yaml: {ACTION}"),
        ("deploy/action.yml", f"action.yml: {ACTION}"),
    ],
)
def test_a_change_to_an_action_a_workflow_runs_is_refused(repo, path, rule):
    assert refused(repo, path) == [f"`{path}` is protected ({rule})"]


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("requirements.txt", "requirements*.txt: pip installs what it names, from where it says"),
        ("requirements-dev.txt", "requirements*.txt: pip installs what it names, from where it says"),
        ("requirements/test.txt", "requirements/*.txt: pip installs what it names, from where it says"),
        ("uv.lock", "uv.lock: uv installs what it names, from where it says"),
        ("service/poetry.lock", "poetry.lock: poetry installs what it names, from where it says"),
        ("Pipfile", "Pipfile: pipenv installs what it names, from where it says"),
        ("Pipfile.lock", "Pipfile.lock: pipenv installs what it names, from where it says"),
        ("package-lock.json", "package-lock.json: npm installs what it names, with their install scripts"),
    ],
)
def test_a_change_to_a_python_lock_or_requirements_file_is_refused_like_npm_s(repo, path, rule):
    assert refused(repo, path) == [f"`{path}` is protected ({rule})"]


def test_protected_names_are_compared_without_case_and_near_names_are_not():
    assert protection("Docs/CodeOwners", []) == f"docs/CODEOWNERS: {REVIEW}"
    assert protection("Action.YML", []) == f"action.yml: {ACTION}"
    for path in ("app/requirements.py", "docs/requirements.md", "app/actions.yml", "uv.lock.md"):
        assert protection(path, []) is None, path
