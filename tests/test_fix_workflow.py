"""The fix actions and the README's fix jobs: off unless a team adds them; three jobs, each with the least it
needs, so that the code the model writes never runs in a job that holds a write token or the model key.

    fix-edit      the model key, a read-only token; runs no code of the repository; touches the database
    fix-test      no secret at all, `contents: read`; the team's setup, then the tests; no database
    fix-publish   the write token; no `run:` step, no setup: runs no code of the repository; the database

The behaviour (the three jobs run by the local runner against the fake GitHub, with hostile changes among
them) is in test_fix_adoption.py.
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
STAGES = ("edit", "test", "publish")
ACTIONS = {stage: ROOT / "fix" / stage / "action.yml" for stage in STAGES}
MOVED = ROOT / "fix" / "action.yml"
# what the runner gives every step of an action, beside the variables the step lists
RUNNER_VARIABLES = {"GITHUB_ACTION_PATH", "GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "RUNNER_TEMP", "HOME"}
DATABASE = {"group": "rounds-state", "cancel-in-progress": False, "queue": "max"}


@pytest.fixture(scope="module")
def actions() -> dict[str, dict[str, Any]]:
    return {stage: dict(yaml.safe_load(path.read_text(encoding="utf-8"))) for stage, path in ACTIONS.items()}


@pytest.fixture(scope="module")
def jobs() -> dict[str, dict[str, Any]]:
    caller, fragment = readme_workflows()[:2]
    found: dict[str, dict[str, Any]] = parse(caller + fragment)["jobs"]
    return found


def fragment_job(name: str) -> str:
    """The README's text of one fix job."""
    fragment = readme_workflows()[1]
    start = fragment.index(f"  {name}:\n")
    following = re.search(r"\n  [a-z-]+:\n", fragment[start + 1 :])
    return fragment[start : start + 1 + following.start()] if following else fragment[start:]


def test_no_job_of_the_reusable_workflow_may_write_code_or_pull_requests():
    for name, job in load(WORKFLOW)["jobs"].items():
        assert job["permissions"].get("contents", "read") == "read", name
        assert "pull-requests" not in job["permissions"], name


def test_each_fix_job_has_the_least_it_needs_and_only_publishing_writes(jobs):
    assert {name for name in jobs if name.startswith("fix")} == {"fix-edit", "fix-test", "fix-publish"}
    assert jobs["fix-edit"]["permissions"] == {
        "actions": "read",  # the saved database
        "contents": "read",  # the branches
        "issues": "read",  # a database rebuilt from the issues
        "pull-requests": "read",  # whether a branch has an open pull request
    }
    assert jobs["fix-test"]["permissions"] == {"contents": "read"}
    assert jobs["fix-publish"]["permissions"] == {
        "actions": "read",
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
    }
    for name, job in jobs.items():
        if name != "fix-publish":
            assert "write" not in job.get("permissions", {}).get("contents", ""), name
            assert "write" not in job.get("permissions", {}).get("pull-requests", ""), name


def test_the_jobs_that_touch_the_database_run_alone_and_the_tests_wait_for_nobody(jobs):
    assert jobs["fix-edit"]["concurrency"] == DATABASE
    assert jobs["fix-publish"]["concurrency"] == DATABASE
    assert "concurrency" not in jobs["fix-test"]  # no database: other runs need not wait for its tests


def test_the_jobs_run_after_the_round_in_order_and_publishing_follows_fixes_when_nothing_was_asked(jobs):
    edit, test, publish = jobs["fix-edit"], jobs["fix-test"], jobs["fix-publish"]
    assert edit["needs"] == "rounds"
    condition = " ".join(edit["if"].split())
    assert "needs.rounds.result == 'success'" in condition
    assert "contains(github.event.comment.body, '/rounds fix')" in condition
    assert "github.event.inputs.dry-run != 'true'" in condition
    assert test["needs"] == "fix-edit" and test["if"] == "needs.fix-edit.outputs.proposals != '0'"
    # publishing runs whether or not there was anything to test: it follows merges and answers reports
    assert publish["needs"] == ["fix-edit", "fix-test"]
    assert publish["if"] == "${{ !cancelled() && needs.fix-edit.result == 'success' }}"


def test_the_test_job_holds_no_secret_and_its_action_has_no_input_for_one(jobs, actions):
    text = fragment_job("fix-test")
    assert "secrets." not in text and "github.token" not in text and "token" not in text.lower()
    step = jobs["fix-test"]["steps"][-1]
    assert step["uses"] == "OWNER/rounds/fix/test@COMMIT_SHA"
    assert set(step["with"]) == {"settings", "bundle", "digest"}
    assert set(actions["test"]["inputs"]) == {"settings", "bundle", "digest", "verdict-name", "python"}
    action_text = ACTIONS["test"].read_text(encoding="utf-8")
    for secret in ("secrets.", "github.token", "GITHUB_TOKEN", "ANTHROPIC_API_KEY", "api-key", "token:"):
        assert secret not in action_text, secret


def test_the_test_job_sets_the_project_up_before_rounds_tests_the_changes(jobs):
    steps = jobs["fix-test"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"] == {"fetch-depth": 0, "persist-credentials": False}
    setup = steps[1:-1]
    assert any("pip install" in step.get("run", "") for step in setup), "the project's own dependencies"


def test_the_jobs_that_hold_a_key_or_write_run_no_code_of_the_repository(jobs):
    edit, publish = jobs["fix-edit"]["steps"], jobs["fix-publish"]["steps"]
    names = [step.get("uses", "").split("@")[0] for step in edit]
    assert names == ["actions/checkout", "OWNER/rounds/fix/edit"]
    assert [step.get("uses", "").split("@")[0] for step in publish] == [
        "actions/checkout",
        "OWNER/rounds/fix/publish",
    ]
    for step in [*edit, *publish]:
        assert "run" not in step, step  # no setup, no script: nothing of the repository runs
        if step["uses"].startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
    assert "setup-python" not in fragment_job("fix-publish") and "pip" not in fragment_job("fix-publish")
    # the key reaches the edit job only, the write permissions the publish job only
    assert "ANTHROPIC_API_KEY" in fragment_job("fix-edit")
    for name in ("fix-test", "fix-publish"):
        assert "ANTHROPIC" not in fragment_job(name), name


def test_the_bundle_and_verdict_go_by_the_ids_and_digest_the_jobs_output(jobs):
    edit, test, publish = jobs["fix-edit"], jobs["fix-test"], jobs["fix-publish"]
    assert edit["outputs"] == {
        "bundle": "${{ steps.edit.outputs.bundle }}",
        "digest": "${{ steps.edit.outputs.digest }}",
        "proposals": "${{ steps.edit.outputs.proposals }}",
        "saved-database": "${{ steps.edit.outputs.saved-database }}",
    }
    assert test["outputs"] == {"verdict": "${{ steps.test.outputs.verdict }}"}
    wanted = {
        "bundle": "${{ needs.fix-edit.outputs.bundle }}",
        "digest": "${{ needs.fix-edit.outputs.digest }}",
    }
    assert {k: v for k, v in test["steps"][-1]["with"].items() if k != "settings"} == wanted
    assert publish["steps"][-1]["with"] == {
        "settings": "${{ vars.ROUNDS_SETTINGS }}",
        **wanted,
        "verdict": "${{ needs.fix-test.outputs.verdict }}",
        "saved-database": "${{ needs.fix-edit.outputs.saved-database }}",
        # the database's signing key: to the jobs that save it, never to fix-test (its `with:` above)
        "state-key": "${{ secrets.ROUNDS_STATE_KEY }}",
    }


def test_publishing_restores_of_this_runs_databases_only_the_one_the_edit_job_saved(actions):
    """The fix-test job runs code the model wrote. On a GitHub-hosted runner that code runs as the runner's
    user, who has passwordless sudo ("About GitHub-hosted runners", Administrative privileges), so it can read
    the artifact token the runner gives the job's action steps and save a `rounds-db` of its own in the run
    (names are unique in a run: upload-artifact v4's README, `overwrite`). A restore of "the newest" would
    take it; the publishing job restores of this run's databases only the artifact the fix-edit job saved,
    whose id comes as a job output the fix-test job cannot set."""
    edit = actions["edit"]
    assert edit["outputs"]["saved-database"]["value"] == "${{ steps.save.outputs.artifact-id }}"
    steps = {step["id"]: step for step in actions["publish"]["runs"]["steps"]}
    restore = steps["restore"]
    assert restore["env"]["SAVED_DATABASE"] == "${{ inputs.saved-database }}"
    assert 'state restore --run-database "$SAVED_DATABASE"' in restore["run"]
    assert 'if [ -z "$SAVED_DATABASE" ]; then' in restore["run"] and "exit 1" in restore["run"]
    assert "run-database" not in ACTIONS["edit"].read_text(encoding="utf-8"), "before the tests: any"


def test_every_action_is_pinned_to_a_full_commit(jobs, actions):
    uses = [step["uses"] for job in jobs.values() for step in job.get("steps", []) if "uses" in step]
    for action in actions.values():
        uses += [step["uses"] for step in action["runs"]["steps"] if "uses" in step]
    for name in uses:
        action, _, ref = name.partition("@")
        assert action.startswith("OWNER/rounds/fix/") or re.fullmatch(r"[0-9a-f]{40}", ref), name


def test_every_variable_a_script_of_the_fix_actions_reads_is_listed_by_its_step(actions):
    for stage, action in actions.items():
        for step in action["runs"]["steps"]:
            if "run" not in step:
                continue
            read = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", step["run"]))
            assigned = set(re.findall(r"(?:^|\s|export\s)([A-Z][A-Z0-9_]*)=", step["run"]))
            missing = read - set(step.get("env") or {}) - RUNNER_VARIABLES - assigned
            assert not missing, f"{stage}: {step['name']} reads {sorted(missing)} without listing them"


def test_the_fix_actions_keep_keys_and_untrusted_text_out_of_their_scripts_and_the_job(actions):
    may_hold_token = {"edit": {"restore", "edit"}, "test": set(), "publish": {"restore", "publish"}}
    for stage, action in actions.items():
        text = ACTIONS[stage].read_text(encoding="utf-8")
        assert "github.event." not in text, stage
        assert set(re.findall(r"inputs\.([a-z][a-z0-9-]*)", text)) == set(action["inputs"]), stage
        for step in action["runs"]["steps"]:
            script = step.get("run", "")
            assert "${{" not in script, step["name"]
            assert "GITHUB_ENV" not in script and "GITHUB_PATH" not in script, "nothing reaches later steps"
            listed = set(step.get("env") or {})
            assert (stage, step["id"]) == ("edit", "edit") or "ANTHROPIC_API_KEY" not in listed, step["id"]
            assert step["id"] in may_hold_token[stage] or "GITHUB_TOKEN" not in listed, (stage, step["id"])


def test_the_fix_actions_that_touch_the_database_save_it_over_the_runs_earlier_one(actions):
    for stage in ("edit", "publish"):
        steps = {step["id"]: step for step in actions[stage]["runs"]["steps"]}
        save = steps["save"]
        assert save["uses"].startswith("actions/upload-artifact@") and save["with"]["overwrite"] is True
        assert save["if"] == "always() && steps.check.outputs.ok == 'true'"
        assert steps["check"]["if"] == "always() && steps.restore.outcome == 'success'"
    assert "state restore" not in ACTIONS["test"].read_text(encoding="utf-8")


def test_the_earlier_single_fix_action_only_says_where_fixes_went():
    moved = dict(yaml.safe_load(MOVED.read_text(encoding="utf-8")))
    [step] = moved["runs"]["steps"]
    assert "exit 1" in step["run"] and "fix-edit, fix-test, fix-publish" in step["run"]
    assert "rounds" not in step["run"].split("echo", 1)[0]  # it runs nothing else


def test_the_fix_actions_and_the_readme_fix_jobs_pass_the_schemas_and_actionlint(actions, tmp_path):
    schema = check_schema("vendor.github-actions", [*ACTIONS.values(), MOVED])
    assert schema.returncode == 0, schema.stdout + schema.stderr
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    caller, fragment = readme_workflows()[:2]
    (folder / "caller.yml").write_text(caller + fragment, encoding="utf-8")
    for stage, action in actions.items():
        as_workflow = {
            "on": {"workflow_call": {"inputs": {name: {"type": "string"} for name in action["inputs"]}}},
            "permissions": {},
            "jobs": {stage: {"runs-on": "ubuntu-24.04", "steps": action["runs"]["steps"]}},
        }
        text = yaml.safe_dump(as_workflow, sort_keys=False)
        (folder / f"fix-{stage}-steps.yml").write_text(text, encoding="utf-8")
    schema = check_schema("vendor.github-workflows", sorted(folder.glob("*.yml")))
    assert schema.returncode == 0, schema.stdout + schema.stderr
    linted = actionlint(tmp_path)
    assert linted.returncode == 0 and "Checking 4 workflow file(s)" in linted.stdout, linted.stdout
