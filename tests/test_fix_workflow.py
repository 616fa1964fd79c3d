"""The workflow's fix job: off unless asked for, alone with the database, the only job that may write code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.fix_loop
WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "rounds.yml"


@pytest.fixture(scope="module")
def jobs() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]


def test_only_the_fix_job_may_write_code_and_pull_requests(jobs):
    assert jobs["fix"]["permissions"] == {
        "actions": "read",
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
    }
    for name, job in jobs.items():
        if name != "fix":
            assert job["permissions"].get("contents", "read") == "read", name
            assert "pull-requests" not in job["permissions"], name


def test_the_fix_job_runs_after_the_round_alone_with_the_database_and_only_when_enabled(jobs):
    fix = jobs["fix"]
    assert fix["needs"] == "round"
    assert fix["concurrency"] == {"group": "rounds-state", "cancel-in-progress": False}
    condition = " ".join(fix["if"].split())
    assert "needs.round.result == 'success'" in condition and "vars.ROUNDS_FIXES == 'true'" in condition
    assert "contains(github.event.comment.body, '/rounds fix')" in condition
    assert "github.event.inputs.dry-run != 'true'" in condition
    assert list(jobs)[-1] == "fix"


def test_the_fix_job_uses_an_app_token_when_there_is_one_and_saves_the_database(jobs):
    steps = {step.get("id"): step for step in jobs["fix"]["steps"]}
    token = steps["app-token"]
    assert (
        token["uses"].startswith("actions/create-github-app-token@")
        and token["if"] == "vars.ROUNDS_APP_ID != ''"
    )
    assert steps["fix"]["env"]["GITHUB_TOKEN"] == "${{ steps.app-token.outputs.token || github.token }}"
    assert steps["fix"]["run"] == 'rounds fix --env-file "$SETTINGS_FILE"'
    assert steps["restore"]["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert steps["save"]["with"]["overwrite"] is True
    checkout = next(s for s in jobs["fix"]["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
