"""rounds.yml installs the Claude Code CLI from the lockfile of the rounds it installed, on both paths.

Run by the local runner: every step of the round job but the CLI's install stands in, `rounds` is this
checkout's (its `rounds pins claude-code`), and `npm` is a stand-in first on PATH that records what it was
asked and the lockfile it found in its `--prefix` (what npm ci then checks is
test_workflow_npm_integrity.py's). With the `rounds-package` input or without, npm runs `ci` on the lockfile
this checkout ships; a rounds-bot too old to ship one (click's "No such command" from its `rounds`) stops the
job with an `::error::` and npm never runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from workflow_files import load
from workflow_runner import JobResult, WorkflowRunner

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "rounds.yml"
SHIPPED = ROOT / "rounds_bot" / "pins" / "claude-code"

# records its arguments and the lockfile in its --prefix, and puts a `claude` where npm would
NPM_STAND_IN = """#!/usr/bin/env bash
set -euo pipefail
printf '%s\\n' "$*" >> "{log}"
prefix=""
while [ $# -gt 0 ]; do
  if [ "$1" = --prefix ]; then prefix="$2"; fi
  shift
done
cp "$prefix/package-lock.json" "{log}.lock"
mkdir -p "$prefix/node_modules/.bin"
touch "$prefix/node_modules/.bin/claude"
"""
# what the `rounds` of a rounds-bot without the command says (click's usage error, exit status 2)
OLD_ROUNDS = """#!/usr/bin/env bash
echo "Usage: rounds [OPTIONS] COMMAND [ARGS]..." >&2
echo "Error: No such command '$1'." >&2
exit 2
"""


def install_claude(
    tmp_path: Path, rounds_package: str, *, old_rounds: bool = False
) -> tuple[JobResult, Path]:
    """The round job with only the CLI's install step run; (the job, npm's log)."""
    workflow = load(WORKFLOW)
    steps = {step.get("id") or f"step{n}" for n, step in enumerate(workflow["jobs"]["round"]["steps"])}
    tools = tmp_path / "tools"
    tools.mkdir()
    log = tmp_path / "npm.log"
    (tools / "npm").write_text(NPM_STAND_IN.format(log=log), encoding="utf-8")
    (tools / "npm").chmod(0o755)
    if old_rounds:
        (tools / "rounds").write_text(OLD_ROUNDS, encoding="utf-8")
        (tools / "rounds").chmod(0o755)
    workspace = tmp_path / "work" / "app"
    workspace.mkdir(parents=True)
    runner = WorkflowRunner(
        workflow,
        workspace,
        actions={},
        substitute=steps - {"install-claude"},
        # this checkout's package, whichever rounds the tests' environment has installed
        base_env={"PATH": os.pathsep.join([str(tools), os.environ.get("PATH", "")]), "PYTHONPATH": str(ROOT)},
        # the stand-in `rounds` first: the tests' Python's own scripts come after base_env's PATH
        preinstalled=not old_rounds,
    )
    result = runner.run(
        "schedule",
        {},
        github={"repository": "octo/app", "token": "ghs_token"},
        secrets={"ANTHROPIC_API_KEY": "model-secret"},
        inputs={"rounds-package": rounds_package},
    )
    return result.jobs["round"], log


@pytest.mark.parametrize("rounds_package", ["", "rounds-bot==0.1.0"], ids=["pinned commit", "rounds-package"])
def test_the_cli_is_installed_with_npm_ci_from_the_lockfile_the_installed_rounds_ships(
    tmp_path, rounds_package
):
    job, log = install_claude(tmp_path, rounds_package)
    step = job.steps["install-claude"]
    assert step.outcome == "success", step.stdout + step.stderr
    (command,) = log.read_text().splitlines()
    assert command.startswith("ci --prefix ")
    assert Path(f"{log}.lock").read_bytes() == (SHIPPED / "package-lock.json").read_bytes()
    assert json.loads((SHIPPED / "package-lock.json").read_text())["lockfileVersion"] >= 2


def test_a_rounds_package_without_the_lockfile_stops_the_job_and_installs_nothing(tmp_path):
    job, log = install_claude(tmp_path, "rounds-bot==0.0.9", old_rounds=True)
    step = job.steps["install-claude"]
    assert step.outcome == "failure" and job.status == "failure"
    assert "::error::" in step.stdout and "rounds pins claude-code" in step.stdout
    assert "Set rounds-package to a" in step.stdout
    assert not log.exists()  # npm never ran: nothing was installed unpinned
