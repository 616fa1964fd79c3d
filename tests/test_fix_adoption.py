"""The README's fix job, run by the local runner, on a repository whose tests need their own dependencies.

The caller is the README's workflow (block 1) with the fix job appended (block 2), `OWNER/rounds` and
`COMMIT_SHA` filled in as a new user does. rounds' sources as they are in this checkout are committed to a
local git repository, `octo/rounds`, so `uses: octo/rounds/fix@<sha>` unpacks the fix action from that commit,
and its first step installs rounds with pip, offline, into a virtual environment of its own.

The repository is a small Python package (`acme-shop`, with the pricing bug of `fix_samples`) whose tests
import `acme_testkit`, a dev dependency listed in its `[project.optional-dependencies] dev` and built here as
a wheel into a local folder. The runner gives pip that folder (`PIP_FIND_LINKS`, as a runner with a package
mirror would; pip is offline), so the fix job's setup steps run exactly as the README writes them:
actions/setup-python (its stand-in: a new virtual environment first on PATH; the version is not honoured) and
`python -m pip install -e '.[dev]'`. Nothing else makes `acme_testkit` importable: rounds runs
ROUNDS_FIX_TEST_COMMAND (`python -m unittest ...`, whichever `python` the job's PATH has) with an allow-listed
environment, without the harness's PYTHONPATH, and the runner image's own `python` (here the base interpreter,
as `python` on ubuntu-24.04) does not have it.

What runs, and what stands in:
- the caller's `rounds` job calls the reusable workflow, whose round is tested in test_workflow_adoption.py.
  Here, to run only what the fix job adds, it is replaced by a job that does to the state what that round
  would have done: it saves, as this run's `rounds-db` artifact, the database of a round that filed the
  pricing issue and recorded alice's `/rounds fix` (built with fix_samples' helpers). The fix job is the
  README's: its `needs`, `if:` (the event is alice's `/rounds fix` comment), `permissions` (the token the fake
  GitHub gives the run has exactly those) and steps; the failing case leaves out the steps the README marks
  as the project's own setup;
- actions/cache (the Claude Code CLI's cache): a hit that restores the real CLI (`claude_bin`) where the
  action's npm step would have installed it, so nothing is downloaded and the action hands it to rounds;
- actions/upload-artifact: the harness's, which here honours `overwrite` as upload-artifact v4 does (names are
  unique in a run: `overwrite: true` deletes the run's artifact of that name first, otherwise a conflict);
- the model: the real CLI against the fake Messages API (`good_fix()`), the key from the secret through the
  `anthropic-api-key` input; GitHub: the fake (`PullsFakeGitHub`, validated against GitHub's REST
  description, Actions allowed to open pull requests), whose branches are those of a bare git repository, the
  `origin` of the job's checkout, where rounds pushes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fake_github.pulls_routes import PullsFakeGitHub, running_pulls_fake
from fake_messages_api import FakeMessagesApi
from fix_samples import BUGGY, FIXED_LINE, App, ask_for_fix, diagnose, file_pricing_issue, git, good_fix
from workflow_files import parse
from workflow_harness import Repository, Sources, commit_sources, failures, readme_workflows
from workflow_runner import RunResult, StepResult

from rounds_bot.events import Fact
from rounds_bot.fixing.messages import pull_title
from rounds_bot.fixing.requests import pending_requests
from rounds_bot.fixing.testsetup import SETUP_HINT
from rounds_bot.github.artifacts import snapshot
from rounds_bot.store import Store

pytestmark = [pytest.mark.fix_loop, pytest.mark.real_cli, pytest.mark.github_spec]

# the job's own `python`, as the README suggests the team sets it in ROUNDS_SETTINGS
TEST_COMMAND = "python -m unittest discover -s tests -t ."
FIX_TOKEN = "ghs_fix_job_token"
UPLOAD = "actions/upload-artifact@330a01c490aca151604b8cf639adc76d48f6c5d4"
FIX_ACTION_STEPS = ["install", "cache-claude", "restore", "fix", "check", "save"]  # install-claude: cached
APP_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-shop"
version = "1.0.0"
requires-python = ">=3.11"

[project.optional-dependencies]
dev = ["acme-testkit>=1.0"]

[tool.setuptools]
packages = ["app"]
"""
# the lines good_fix() edits are fix_samples' APP_TESTS; the test case comes from the dev dependency
APP_TESTS = """import unittest

from acme_testkit import TestCase

from app.pricing import average_price


class AveragePrice(TestCase):
    def test_mean(self):
        self.assertEqual(average_price([1, 2, 3]), 2)


if __name__ == "__main__":
    unittest.main()
"""
TESTKIT_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-testkit"
version = "1.0.0"
requires-python = ">=3.11"

[tool.setuptools]
packages = ["acme_testkit"]
"""
TESTKIT = '''"""Acme's test helpers."""

import unittest


class TestCase(unittest.TestCase):
    """unittest's TestCase, with Acme's conventions."""
'''


# --- for the whole module: rounds at a commit, the dev dependency's wheel ---------------------------------
@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    return commit_sources(tmp_path_factory.mktemp("octo-rounds"))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the wheel of `acme-testkit`: the only place pip can find it."""
    source = tmp_path_factory.mktemp("acme-testkit")
    (source / "acme_testkit").mkdir()
    (source / "acme_testkit" / "__init__.py").write_text(TESTKIT)
    (source / "pyproject.toml").write_text(TESTKIT_PYPROJECT)
    folder = tmp_path_factory.mktemp("wheels")
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-index", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, "--wheel-dir", str(folder), str(source)], check=True, capture_output=True)
    assert len(list(folder.glob("acme_testkit-1.0.0-*.whl"))) == 1
    return folder


# --- for each test: the repository, its remote, the fake GitHub ---------------------------------------
@pytest.fixture
def shop(tmp_path: Path) -> App:
    """`acme-shop` on a bare remote, and the job's checkout of it: the runner's workspace."""
    root = tmp_path / "shop"
    dev, remote, workspace = root / "dev", root / "remote.git", tmp_path / "work" / "app"
    files = {
        "pyproject.toml": APP_PYPROJECT,
        "app/__init__.py": "",
        "app/pricing.py": BUGGY,
        "tests/__init__.py": "",
        "tests/test_pricing.py": APP_TESTS,
        ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\n",
    }
    for name, text in files.items():
        (dev / name).parent.mkdir(parents=True, exist_ok=True)
        (dev / name).write_text(text)
    git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    git(root, "init", "--quiet", "--initial-branch=main", str(dev))
    git(dev, "add", ".")
    git(dev, "commit", "--quiet", "-m", "A shop with prices")
    git(dev, "push", "--quiet", str(remote), "main")
    workspace.parent.mkdir(parents=True)
    git(root, "clone", "--quiet", str(remote), str(workspace))  # what checkout with fetch-depth: 0 leaves
    return App(remote=remote, checkout=workspace)


@pytest.fixture
def fake(shop: App) -> Iterator[PullsFakeGitHub]:
    yield from running_pulls_fake(git_remote=shop.remote, actions_may_open_pulls=True)


class FixRepository(Repository):
    """The harness's repository, with what the fix job needs besides: the runner image's `python`, the
    Claude Code CLI's cache, pip's local wheels, and upload-artifact's `overwrite`."""

    def __init__(
        self,
        fake: PullsFakeGitHub,
        shop: App,
        workflow: dict[str, Any],
        *,
        sources: Sources,
        wheels: Path,
        claude: str,
    ) -> None:
        # the fix job talks to neither SigNoz nor Zulip: the harness's settings for them go unused
        nowhere = SimpleNamespace(url="http://127.0.0.1:9", email="", api_key="")
        super().__init__(fake, shop.checkout, nowhere, nowhere, workflow=workflow, sources=sources)
        self.claude = claude
        self.runner.actions["actions/cache"] = self.cache
        self.runner.base_env["PIP_FIND_LINKS"] = str(wheels)
        tools = self.workspace.parent / "tools"  # first on PATH, where the harness put `python3`
        (tools / "python").symlink_to(tools / "python3")

    def cache(self, with_: dict[str, str], env: dict[str, str]) -> None:
        """actions/cache: a hit for the CLI's folder, with the CLI where the action's npm step puts it."""
        assert with_["key"].startswith("rounds-claude-code-"), with_
        folder = Path(with_["path"].replace("~", self.runner.base_env["HOME"], 1))
        binary = folder / "node_modules" / ".bin" / "claude"
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.symlink_to(self.claude)
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as outputs:
            outputs.write("cache-hit=true\n")

    def upload(self, with_: dict[str, str], env: dict[str, str]) -> None:
        """upload-artifact v4: one artifact of a name per run; `overwrite: true` deletes the run's first."""
        artifacts = self.fake.repo.artifacts
        run = self.runner.run_number
        same = [key for key, a in artifacts.items() if a.name == with_["name"] and a.run_id == run]
        if same:
            assert str(with_.get("overwrite")).lower() == "true", f"conflict: run {run} has {with_['name']}"
            for key in same:
                del artifacts[key]
        super().upload(with_, env)


def readme_caller(sources: Sources, saved: Path, *, setup: bool) -> dict[str, Any]:
    """README blocks 1 and 2, pinned; the round job replaced by one that saves `saved` as this run's
    `rounds-db` artifact; without `setup`, none of the project's own setup steps in the fix job."""
    caller, fragment = readme_workflows()[:2]
    text = (caller + fragment).replace("OWNER/rounds", sources.repository).replace("COMMIT_SHA", sources.sha)
    workflow = parse(text)
    workflow["jobs"]["rounds"] = {
        "runs-on": "ubuntu-24.04",
        "permissions": workflow["jobs"]["rounds"]["permissions"],
        "steps": [
            {
                "uses": UPLOAD,
                "with": {
                    "name": "rounds-db",
                    "path": str(saved),
                    "retention-days": 30,
                    "if-no-files-found": "error",
                },
            }
        ],
    }
    fix = workflow["jobs"]["fix"]
    assert fix["needs"] == "rounds" and "needs.rounds.result == 'success'" in fix["if"]
    checkout, *own_setup, rounds_fix = fix["steps"]
    assert checkout["uses"].startswith("actions/checkout@")
    assert rounds_fix["uses"] == f"{sources.repository}/fix@{sources.sha}"
    assert any("pip install -e '.[dev]'" in step.get("run", "") for step in own_setup)
    if not setup:
        fix["steps"] = [checkout, rounds_fix]
    return workflow


@dataclass
class FixJobRun:
    repo: FixRepository
    result: RunResult
    api: FakeMessagesApi
    signature_id: str
    issue: int

    @property
    def action(self) -> StepResult:
        """The `uses: octo/rounds/fix@sha` step, the job's last."""
        return list(self.result.jobs["fix"].steps.values())[-1]

    def saved_artifact(self) -> Any:
        [artifact] = [a for a in self.repo.fake.repo.artifacts.values() if a.name == "rounds-db"]
        return artifact

    def restored_id(self) -> int:
        found = re.search(r"artifact `rounds-db` \(id (\d+), run (\d+)", self.action.steps["restore"].stdout)
        assert found is not None and int(found[2]) == self.repo.runner.run_number, "this run's round saved it"
        return int(found[1])


def run_readme_fix_job(
    fake: PullsFakeGitHub,
    shop: App,
    tmp_path: Path,
    *,
    sources: Sources,
    wheels: Path,
    claude: str,
    setup: bool,
) -> FixJobRun:
    """A round filed the pricing issue and recorded alice's `/rounds fix`; the README's caller then runs
    for her comment, its round job saving that database and its fix job (with or without the setup)."""
    folder = tmp_path / "round"
    folder.mkdir()
    workflow = readme_caller(sources, folder / "saved", setup=setup)
    permissions = workflow["jobs"]["fix"]["permissions"]
    fake.add_token(FIX_TOKEN, **{name.replace("-", "_"): level for name, level in permissions.items()})
    repo = FixRepository(fake, shop, workflow, sources=sources, wheels=wheels, claude=claude)

    signature_id, issue = file_pricing_issue(fake, folder)
    event = repo.comment_event(issue, "/rounds fix")
    store = Store.open(folder / "rounds.db")
    try:
        diagnose(store, signature_id)
        ask_for_fix(store, signature_id, issue, origin=str(event["comment"]["id"]))
    finally:
        store.close()
    snapshot(folder / "rounds.db", folder / "saved")  # what `rounds state check --out` leaves for upload

    with FakeMessagesApi(good_fix(), lifetime=600) as api:
        repo.settings = "\n".join(  # vars.ROUNDS_SETTINGS
            [
                f"ROUNDS_FIX_TEST_COMMAND={TEST_COMMAND}",
                f"ANTHROPIC_BASE_URL={api.url}",
                "ROUNDS_CLAUDE_MAX_RETRIES=0",
            ]
        )
        result = repo.run("issue_comment", event, FIX_TOKEN, secrets={"ANTHROPIC_API_KEY": "test-key"})
    return FixJobRun(repo, result, api, signature_id, issue)


def ran(steps: dict[str, StepResult]) -> list[str]:
    return [step_id for step_id, step in steps.items() if not step.skipped]


def test_the_readme_fix_job_with_the_projects_setup_opens_a_tested_draft_pull_request(
    fake, shop, tmp_path, sources, wheels, claude_bin
):
    run = run_readme_fix_job(
        fake, shop, tmp_path, sources=sources, wheels=wheels, claude=claude_bin, setup=True
    )
    result, issue, sid = run.result, run.issue, run.signature_id
    assert result.conclusion == "success", failures(result)
    assert result.jobs["fix"].status == "success" and not result.jobs["fix"].skipped
    assert ran(run.action.steps) == FIX_ACTION_STEPS
    assert run.action.steps["restore"].outputs == {"source": "artifact"}
    [python] = run.repo.pythons  # setup-python's, where the README's pip step installed the dev extra
    assert list(python.glob("lib/python*/site-packages/acme_testkit/__init__.py"))

    # the baseline passed with the job's `python` (it has acme_testkit): the model ran, then the tests again
    assert run.api.requests
    [pull] = fake.open_pulls()
    branch = pull.head
    assert re.fullmatch(rf"rounds/fix-{sid}-\d{{8}}", branch)
    assert pull.draft and pull.base == "main" and pull.title == pull_title(issue, sid)
    assert f"Fixes #{issue}" in pull.body and "Ran 2 tests" in pull.body and "OK" in pull.body
    assert set(shop.branches()) == {"main", branch}
    assert git(shop.remote, "rev-list", "--count", f"main..{branch}") == "1"
    assert FIXED_LINE in shop.file_at(branch, "app/pricing.py")
    tests = shop.file_at(branch, "tests/test_pricing.py")
    assert "from acme_testkit import TestCase" in tests and "def test_empty(self):" in tests

    [said] = fake.replies(issue)
    assert said.startswith(
        f"rounds opened a draft pull request #{pull.number} with a proposed fix (branch `{branch}`; "
        "changed: `app/pricing.py`, `tests/test_pricing.py`). "
        f"The repository's tests: `{TEST_COMMAND}` passed in "
    ), said
    assert f"draft pull request #{pull.number} proposed" in result.jobs["fix"].summary

    # the fix job's database replaced the one the round of this run saved
    saved = run.saved_artifact()
    assert saved.run_id == run.repo.runner.run_number and saved.id != run.restored_id()
    store = run.repo.saved_database(tmp_path)
    try:
        [proposed] = [dict(f.payload) for f in store.facts([Fact.FIX_PROPOSED])]
        assert (proposed["pr"], proposed["branch"]) == (pull.number, branch)
        assert pending_requests(store) == []
    finally:
        store.close()


def test_the_readme_fix_job_without_the_projects_setup_says_so_on_the_issue_and_spends_nothing(
    fake, shop, tmp_path, sources, wheels, claude_bin
):
    run = run_readme_fix_job(
        fake, shop, tmp_path, sources=sources, wheels=wheels, claude=claude_bin, setup=False
    )
    result, issue = run.result, run.issue
    # a request that could not be carried out is reported on its issue, not an error of the job
    assert result.conclusion == "success", failures(result)
    assert ran(run.action.steps) == FIX_ACTION_STEPS
    assert run.api.requests == [], "the baseline stopped it before the model ran: nothing was spent"

    [said] = fake.replies(issue)
    lines = said.splitlines()
    problem = (
        f"the test command `{TEST_COMMAND}` cannot run here: the tests cannot import `acme_testkit` "
        "(`No module named 'acme_testkit'`), so no test ran"
    )
    what_to_change = f"{SETUP_HINT[0].upper()}{SETUP_HINT[1:]}"  # rounds_bot/fixing/testsetup.py
    assert lines[0] == f"rounds could not try a fix: {problem}. {what_to_change}.", said
    assert "`pip install -e '.[dev]'` step before the rounds fix step" in lines[0]
    assert f"`{TEST_COMMAND}` failed (exit status 1) in " in said
    assert "ModuleNotFoundError: No module named 'acme_testkit'" in said  # in the folded output
    again = "Ask again with `/rounds fix` once the fix job installs them."
    assert lines[-1] == f"No model ran and nothing was pushed. {again}"
    assert f"no pull request: {problem}" in result.jobs["fix"].summary

    assert fake.repo.pulls == {} and list(shop.branches()) == ["main"]
    saved = run.saved_artifact()
    assert saved.run_id == run.repo.runner.run_number and saved.id != run.restored_id()
    store = run.repo.saved_database(tmp_path)
    try:
        [failed] = [dict(f.payload) for f in store.facts([Fact.FIX_FAILED])]
        assert failed["blocked"] == "setup" and problem in failed["reason"]
        assert pending_requests(store) == []  # a person's request is answered: they ask again
    finally:
        store.close()
