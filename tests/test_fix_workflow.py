"""The fix action and the README's fix job: off unless a team adds the job, after the team's own setup, alone
with the database, the only job that may write code.

The behaviour (the fix job run by the local runner against the fake GitHub, on a repository whose tests need
their own dependencies) is in test_fix_adoption.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from workflow_files import load, parse
from workflow_harness import actionlint, check_schema, readme_workflows

pytestmark = pytest.mark.fix_loop
ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "rounds.yml"
FIX_ACTION = ROOT / "fix" / "action.yml"
# what the runner gives every step of an action, beside the variables the step lists
RUNNER_VARIABLES = {"GITHUB_ACTION_PATH", "GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "RUNNER_TEMP", "HOME"}


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return dict(yaml.safe_load(FIX_ACTION.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def readme_fix_job() -> dict[str, Any]:
    caller, fragment = readme_workflows()[:2]
    job: dict[str, Any] = parse(caller + fragment)["jobs"]["fix"]
    return job


def test_no_job_of_the_reusable_workflow_may_write_code_or_pull_requests():
    for name, job in load(WORKFLOW)["jobs"].items():
        assert job["permissions"].get("contents", "read") == "read", name
        assert "pull-requests" not in job["permissions"], name


def test_the_readme_fix_job_is_the_only_one_that_writes_and_runs_after_the_round_alone(readme_fix_job):
    assert readme_fix_job["permissions"] == {
        "actions": "read",
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
    }
    assert readme_fix_job["needs"] == "rounds"
    assert readme_fix_job["concurrency"] == {
        "group": "rounds-state",
        "cancel-in-progress": False,
        "queue": "max",
    }
    condition = " ".join(readme_fix_job["if"].split())
    assert "needs.rounds.result == 'success'" in condition
    assert "contains(github.event.comment.body, '/rounds fix')" in condition
    assert "github.event.inputs.dry-run != 'true'" in condition


def test_the_readme_fix_job_sets_the_project_up_before_rounds_fixes_it(readme_fix_job):
    steps = readme_fix_job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert steps[-1]["uses"] == "OWNER/rounds/fix@COMMIT_SHA"
    setup = steps[1:-1]
    assert any("pip install" in step.get("run", "") for step in setup), "the project's own dependencies"
    for step in steps:
        name, _, ref = step["uses"].partition("@") if "uses" in step else ("", "", "")
        assert not name or re.fullmatch(r"[0-9a-f]{40}", ref) or name == "OWNER/rounds/fix", step


def test_every_variable_a_script_of_the_fix_action_reads_is_listed_by_its_step(action):
    for step in action["runs"]["steps"]:
        if "run" not in step:
            continue
        read = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", step["run"]))
        assigned = set(re.findall(r"(?:^|\s|export\s)([A-Z][A-Z0-9_]*)=", step["run"]))
        missing = read - set(step.get("env") or {}) - RUNNER_VARIABLES - assigned
        assert not missing, f"{step['name']} reads {sorted(missing)} without listing them"


def test_the_fix_action_keeps_keys_and_untrusted_text_out_of_its_scripts_and_the_job(action):
    text = FIX_ACTION.read_text(encoding="utf-8")
    assert "github.event." not in text
    assert set(re.findall(r"inputs\.([a-z][a-z0-9-]*)", text)) == set(action["inputs"])
    for step in action["runs"]["steps"]:
        script = step.get("run", "")
        assert "${{" not in script, step["name"]
        assert "GITHUB_ENV" not in script and "GITHUB_PATH" not in script, "nothing reaches later steps"
        listed = set(step.get("env") or {})
        assert step["id"] == "fix" or "ANTHROPIC_API_KEY" not in listed, step["id"]
        assert step["id"] in ("restore", "fix") or "GITHUB_TOKEN" not in listed, step["id"]


def test_the_fix_action_saves_the_database_it_changed_over_the_rounds_one(action):
    steps = {step["id"]: step for step in action["runs"]["steps"]}
    save = steps["save"]
    assert save["uses"].startswith("actions/upload-artifact@") and save["with"]["overwrite"] is True
    assert save["if"] == "always() && steps.check.outputs.ok == 'true'"
    assert steps["check"]["if"] == "always() && steps.restore.outcome == 'success'"


def test_the_fix_action_and_the_readme_fix_job_pass_the_schemas_and_actionlint(action, tmp_path):
    schema = check_schema("vendor.github-actions", [FIX_ACTION])
    assert schema.returncode == 0, schema.stdout + schema.stderr
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    caller, fragment = readme_workflows()[:2]
    (folder / "caller.yml").write_text(caller + fragment, encoding="utf-8")
    as_workflow = {
        "on": {"workflow_call": {"inputs": {name: {"type": "string"} for name in action["inputs"]}}},
        "permissions": {},
        "jobs": {"fix": {"runs-on": "ubuntu-24.04", "steps": action["runs"]["steps"]}},
    }
    (folder / "fix-steps.yml").write_text(yaml.safe_dump(as_workflow, sort_keys=False), encoding="utf-8")
    schema = check_schema("vendor.github-workflows", sorted(folder.glob("*.yml")))
    assert schema.returncode == 0, schema.stdout + schema.stderr
    linted = actionlint(tmp_path)
    assert linted.returncode == 0 and "Checking 2 workflow file(s)" in linted.stdout, linted.stdout
