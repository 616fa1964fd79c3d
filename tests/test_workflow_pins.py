"""Package installs never see a secret, and install nothing resolved anew.

Secrets and the workflow token are in the environment of the steps that use them only: no workflow- or
job-level `env:` holds one, and no step that installs packages (pip, npm, whose install scripts run with the
step's environment) has one in its own. Checked for the reusable workflow, the composite actions (whose keys
arrive as inputs) and the README's caller blocks.

pip installs rounds' dependencies from `pins/requirements.txt` (`--require-hashes`), which must agree with
`pyproject.toml`; npm installs the Claude Code CLI with `npm ci` from the lockfile rounds ships in its package
(`rounds_bot/pins/claude-code/package-lock.json`, found with `rounds pins claude-code` whichever way rounds
was installed, the `rounds-package` input's way too), downloaded anew by every job: no job restores anything
from actions/cache, whose entries the fix-test job can plant and whose tar archives can write anywhere on the
runner (docs/fixes.md, "The boundary").
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from workflow_files import load, parse
from workflow_harness import readme_workflows
from workflow_runner import WorkflowRunner

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "rounds.yml"
ACTIONS = [ROOT / "action.yml", *sorted((ROOT / "fix").glob("*/action.yml"))]
#: what hands a step a secret: the secrets context, the job's token, or an action input that carries a key
SECRET = re.compile(r"\bsecrets\.|\bgithub\.token\b|\binputs\.(?:[\w-]*-key|github-token)\b")
#: whether a secret is set is no secret: `${{ secrets.X != '' }}` is true or false
_IS_SET = re.compile(r"\bsecrets\.\w+ != ''")
INSTALLS = re.compile(r"\bpip install\b|\bnpm (?:install|ci|i)\b")
CLAUDE_CODE_VERSION = "2.1.328"
CLAUDE_CODE_PINS = ROOT / "rounds_bot" / "pins" / "claude-code"


def _env_values(env: Any) -> list[str]:
    values = [str(value) for value in (env or {}).values()] if isinstance(env, dict) else [str(env)]
    return [_IS_SET.sub("", value) for value in values]


def _workflow_steps(name: str, workflow: dict[str, Any]) -> Iterator[tuple[str, list[str], dict[str, Any]]]:
    """(where, the env values the step runs with from the workflow and its job, the step)."""
    outer = _env_values(workflow.get("env"))
    for job_id, job in (workflow.get("jobs") or {}).items():
        inherited = outer + _env_values(job.get("env"))
        for index, step in enumerate(job.get("steps") or []):
            yield f"{name} {job_id} step {step.get('id') or step.get('name') or index}", inherited, step


def all_steps() -> Iterator[tuple[str, list[str], dict[str, Any]]]:
    yield from _workflow_steps("rounds.yml", load(WORKFLOW))
    for path in ACTIONS:
        action = load(path)
        for index, step in enumerate(action.get("runs", {}).get("steps") or []):
            yield f"{path.relative_to(ROOT)} step {step.get('id') or index}", [], step
    for number, block in enumerate(readme_workflows()):
        text = block if block.lstrip().startswith(("on:", "name:")) else "jobs:\n" + block
        yield from _workflow_steps(f"README block {number + 1}", parse(text))


def test_no_workflow_or_job_level_env_holds_a_secret():
    found = []
    for name, workflow in [("rounds.yml", load(WORKFLOW))] + [
        (f"README block {n + 1}", parse(b if b.lstrip().startswith(("on:", "name:")) else "jobs:\n" + b))
        for n, b in enumerate(readme_workflows())
    ]:
        found += [f"{name} env: {v}" for v in _env_values(workflow.get("env")) if SECRET.search(v)]
        for job_id, job in (workflow.get("jobs") or {}).items():
            found += [f"{name} {job_id} env: {v}" for v in _env_values(job.get("env")) if SECRET.search(v)]
    assert found == []


def test_no_step_that_installs_packages_can_see_a_secret():
    installing = 0
    exposed = []
    for where, inherited, step in all_steps():
        if not INSTALLS.search(str(step.get("run") or "")):
            continue
        installing += 1
        values = inherited + _env_values(step.get("env"))
        exposed += [f"{where}: {value}" for value in values if SECRET.search(value)]
    assert installing >= 8  # rounds.yml's jobs (pip, npm), the four actions' pip and two npm, the README's
    assert exposed == []


def test_the_steps_that_need_a_key_get_it_in_their_own_env():
    steps = {step.get("id"): step for _, _, step in _workflow_steps("rounds.yml", load(WORKFLOW))}
    assert set(steps["round"]["env"]) >= {"GITHUB_TOKEN", "SIGNOZ_API_KEY", "ANTHROPIC_API_KEY"}
    assert set(steps["notify"]["env"]) == {"ZULIP_API_KEY"}
    assert "GITHUB_TOKEN" in steps["restore"]["env"] and "GITHUB_TOKEN" in steps["commands"]["env"]
    assert steps["install-claude"]["if"] == "env.DIAGNOSIS_KEY_SET == 'true'"


# --- pinned installs ------------------------------------------------------------------------------------


def _pins() -> dict[str, tuple[str, int]]:
    """pins/requirements.txt: name -> (version, number of hashes)."""
    text = (ROOT / "pins" / "requirements.txt").read_text(encoding="utf-8")
    pins = {}
    for entry in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", entry)
        if head:
            pins[head[1].lower().replace("_", "-")] = (head[2], entry.count("--hash=sha256:"))
    return pins


def test_the_pinned_requirements_agree_with_pyproject_and_every_one_has_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = [*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["diagnosis"]]
    pins = _pins()
    for requirement in wanted:
        name, version = requirement.split("==")
        assert pins.get(name.lower().replace("_", "-"), ("missing", 0))[0] == version, requirement
    assert "setuptools" in pins  # the build backend, installed before rounds without build isolation
    assert all(hashes >= 1 for _, hashes in pins.values()), [n for n, (_, h) in pins.items() if not h]


def test_the_claude_code_lockfile_pins_the_version_and_every_package_by_integrity():
    package = json.loads((CLAUDE_CODE_PINS / "package.json").read_text())
    lock = json.loads((CLAUDE_CODE_PINS / "package-lock.json").read_text())
    assert package["dependencies"] == {"@anthropic-ai/claude-code": CLAUDE_CODE_VERSION}
    entry = lock["packages"]["node_modules/@anthropic-ai/claude-code"]
    assert entry["version"] == CLAUDE_CODE_VERSION
    packages = {name: entry for name, entry in lock["packages"].items() if name}
    assert len(packages) >= 2 and all(e["integrity"].startswith("sha512-") for e in packages.values())


#: what restores a cache entry: actions/cache (and its restore action), or a setup action's `cache:` input
_CACHE_ACTION = re.compile(r"^actions/cache(?:/restore)?@")


def test_no_step_restores_a_cache_entry():
    """A planted entry is a tar archive extracted with absolute names: it can overwrite rounds' files."""
    restoring = [
        where
        for where, _, step in all_steps()
        if _CACHE_ACTION.match(str(step.get("uses") or "")) or "cache" in (step.get("with") or {})
    ]
    assert restoring == []


def test_the_cli_installs_into_a_fresh_folder_and_npm_cache_of_the_job():
    commands = _cli_installs()
    assert len(commands) == 3, commands  # the workflow's round and the two actions that hold the model key
    for where, command in commands:
        assert 'rm -rf "$HOME/.rounds/claude-code"' in command, where
        for line in command.splitlines():
            if re.search(r"\bnpm (?:install|ci)\b", line):
                assert '--cache "$RUNNER_TEMP/rounds-npm-cache"' in line, where


@pytest.mark.parametrize("path", [WORKFLOW, *ACTIONS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_install_of_rounds_or_the_cli_is_pinned(path):
    for line in path.read_text().splitlines():
        command = line.strip()
        if re.search(r"\bpip install\b", command):
            pinned = "--require-hashes" in command or "--no-deps --no-build-isolation" in command
            chosen = '"$ROUNDS_PACKAGE"' in command  # the caller's own choice (rounds-package)
            assert pinned or chosen, command
        # npm install resolves what no lockfile names (a registry's entry, a transitive dependency's range):
        # the CLI is only ever installed with npm ci, on every path
        assert not re.search(r"\bnpm (?:install|i|add)\b", command), command


def _cli_installs() -> list[tuple[str, str]]:
    """(where, the script) of every step that installs the CLI; the step's env and `if:` in the script's text,
    so that what the script branches on is all there."""
    return [
        (where, f"{step.get('if', '')}\n{step.get('env', '')}\n{step['run']}")
        for where, _, step in all_steps()
        if re.search(r"\bnpm (?:install|ci)\b", str(step.get("run") or "")) and "claude" in str(step["run"])
    ]


def test_every_install_of_the_cli_copies_the_lockfile_the_installed_rounds_ships():
    """Whether rounds came from the pinned commit or from rounds-package, one script: the folder the installed
    rounds names, and npm ci; never a branch on rounds-package that installs without a lockfile."""
    for where, command in _cli_installs():
        lines = [line.strip() for line in command.splitlines()]
        (asked,) = [line for line in lines if 'pins claude-code)"' in line]
        assert re.search(
            r'PINS="\$\((?:rounds|"\$ROUNDS_HOME/venv/bin/rounds") pins claude-code\)"', asked
        ), where
        copy = 'cp "$PINS/package.json" "$PINS/package-lock.json" "$HOME/.rounds/claude-code/"'
        assert copy in lines, where
        (npm,) = [line for line in lines if re.search(r"\bnpm\b", line)]
        assert npm.startswith('npm ci --prefix "$HOME/.rounds/claude-code" '), where
        assert lines.index(copy) < lines.index(npm), where
        assert "ROUNDS_PACKAGE" not in command and "inputs.rounds-package" not in command, where


def test_a_rounds_without_the_lockfile_stops_the_workflow_with_an_error_that_says_what_to_do():
    (command,) = [command for where, command in _cli_installs() if where.startswith("rounds.yml")]
    guard = 'if ! PINS="$(rounds pins claude-code)" || [ ! -f "$PINS/package-lock.json" ]; then'
    assert guard in command
    body = command[command.index(guard) : command.index("fi\n", command.index(guard))]
    assert "::error::" in body and "rounds-package" in body and body.rstrip().endswith("exit 1")


def test_run_for_real_no_install_step_has_a_secret_in_its_environment(tmp_path):
    """The workflow run by the local runner (every step substituted): the environment each step ran with."""
    workflow = load(WORKFLOW)
    steps = {
        step.get("id") or f"step{n}"
        for job in workflow["jobs"].values()
        for n, step in enumerate(job["steps"])
    }
    workspace = tmp_path / "work" / "app"
    workspace.mkdir(parents=True)
    secrets = {
        "SIGNOZ_API_KEY": "signoz-secret",
        "ANTHROPIC_API_KEY": "model-secret",
        "ZULIP_API_KEY": "zulip-secret",
    }
    runner = WorkflowRunner(workflow, workspace, actions={}, substitute=steps)
    result = runner.run(
        "schedule", {}, github={"repository": "octo/app", "token": "ghs_token"}, secrets=secrets
    )
    job = result.jobs["round"]
    assert job.status == "success"
    values = [*secrets.values(), "ghs_token"]
    for step_id in ("install", "install-claude"):
        assert not job.steps[step_id].skipped
        assert not [v for v in job.steps[step_id].env.values() if v in values], step_id
    assert not [v for v in job.env.values() if v in values]
    assert job.steps["round"].env["ANTHROPIC_API_KEY"] == "model-secret"
    assert job.steps["round"].env["GITHUB_TOKEN"] == "ghs_token"
    assert "ANTHROPIC_API_KEY" not in job.steps["notify"].env
