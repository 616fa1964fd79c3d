"""Adoption as a new user does it: the README's caller workflow, or the README's job that uses the action,
copied with the repository and a commit filled in, installs rounds from that commit and runs it, with no
release on a package index.

rounds' sources as they are in this checkout are committed to a local git repository, `octo/rounds`. The local
runner reads the called workflow and unpacks the action from it at that commit, as GitHub does; their steps
install rounds with pip, offline, into a Python of their own, from what they were given (the checkout of the
pinned commit, the action's folder, or the `rounds-package` input), and then run it against the fake GitHub,
the SigNoz emulator and a fake Zulip. The action's shape (what its scripts read, the schema, actionlint) is
checked here too.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_zulip import FakeZulip
from workflow_files import load, parse
from workflow_harness import (
    ROOT,
    Repository,
    Sources,
    actionlint,
    check_schema,
    failures,
    readme_workflows,
)

ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / ".github" / "workflows" / "rounds.yml"
# what the runner gives every step of an action, beside the variables the step lists
RUNNER_VARIABLES = {"GITHUB_ACTION_PATH", "GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "RUNNER_TEMP", "HOME"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "app"
    folder.mkdir(parents=True)
    return folder


def readme_action_job() -> str:
    [job] = [block for block in readme_workflows() if re.search(r"uses: OWNER/rounds@COMMIT_SHA\n", block)]
    return job


def pinned(caller: str, sources: Sources) -> str:
    """The README's text with OWNER/rounds and COMMIT_SHA filled in, as a new user does."""
    return caller.replace("OWNER/rounds", sources.repository).replace("COMMIT_SHA", sources.sha)


def installed_from(python: Path) -> dict[str, Any]:
    """Where pip installed rounds from, in that Python (PEP 610's direct_url.json)."""
    [record] = python.glob("lib/python*/site-packages/rounds_bot-*.dist-info/direct_url.json")
    return dict(json.loads(record.read_text()))


def ran(steps: dict[str, Any]) -> list[str]:
    return [step_id for step_id, step in steps.items() if not step.skipped]


# --- the reusable workflow ------------------------------------------------------------------------
def test_the_readme_caller_installs_rounds_from_the_pinned_commit_and_runs_it(
    fake, signoz, sources, workspace
):
    caller = parse(pinned(readme_workflows()[0], sources))
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=caller, sources=sources)
        first = repo.run("schedule", repo.payload("schedule"))
    assert first.jobs["rounds/acknowledge"].skipped
    job = first.jobs["rounds/round"]
    assert job.status == "success", failures(first)
    assert job.steps["pinned"].outputs == {"repository": sources.repository, "sha": sources.sha}
    checkout = first.temp / "rounds-source"
    assert _head(checkout) == sources.sha
    assert installed_from(repo.pythons[-1])["url"] == checkout.as_uri()
    assert not (workspace / ".rounds-source").exists(), "moved out of the caller's checkout"
    assert len(fake.issues()) >= 2 and repo.artifacts() == 1
    assert len(zulip.messages) == len(fake.issues()) + 1


def test_a_caller_that_lists_no_comment_types_runs_nothing_for_an_edited_or_deleted_comment(
    fake, signoz, sources, workspace
):
    # `on: issue_comment` without `types:` starts a run for created, edited and deleted comments alike
    # (GitHub's "Events that trigger workflows", issue_comment); rounds answers only new comments, so
    # no runner is spent installing it for the others
    caller = parse(pinned(readme_workflows()[0], sources))
    caller["on"]["issue_comment"] = None
    fake.repo.collaborators["alice"] = "write"
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=caller, sources=sources)
        number = fake.state.create_issue(fake.repo, "a problem", "", [], "alice").number
        for action in ("edited", "deleted"):
            event = repo.comment_event(number, "/rounds pause") | {"action": action}
            result = repo.run("issue_comment", event)
            assert result.started, result.reason
            assert all(job.skipped for job in result.jobs.values()), (action, failures(result))
            assert fake.reactions_on(event["comment"]["id"]) == []


def test_every_job_of_the_workflow_installs_rounds_the_same_way():
    jobs = load(WORKFLOW)["jobs"]

    def install(job: str) -> list[dict[str, Any]]:
        steps = jobs[job]["steps"]
        start = next(i for i, step in enumerate(steps) if step.get("id") == "pinned")
        return [_without_comments(step) for step in steps[start - 1 : start + 3]]  # python, commit, pip

    installing = [job for job in jobs if any(step.get("id") == "install" for step in jobs[job]["steps"])]
    assert {"acknowledge", "round"} <= set(installing)
    for job in installing:
        assert install(job) == install("round"), job
    assert [step.get("id") for step in install("round")] == [None, "pinned", "checkout-rounds", "install"]


def test_the_rounds_package_input_installs_that_instead(fake, signoz, sources, workspace, tmp_path):
    caller = parse(pinned(readme_workflows()[0], sources))
    wanted = f"rounds-bot @ git+{sources.path.as_uri()}@{sources.sha}"
    caller["jobs"]["rounds"]["with"]["rounds-package"] = wanted
    caller["on"]["workflow_dispatch"] = {"inputs": {"dry-run": {"type": "boolean", "default": False}}}
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=caller, sources=sources)
        dry = repo.run("workflow_dispatch", repo.payload("workflow_dispatch", inputs={"dry-run": "true"}))
    job = dry.jobs["rounds/round"]
    assert job.status == "success", failures(dry)
    assert job.steps["pinned"].skipped and job.steps["checkout-rounds"].skipped
    origin = installed_from(repo.pythons[-1])
    assert origin["url"] == sources.path.as_uri() and origin["vcs_info"]["commit_id"] == sources.sha
    assert "tracker `dry-run`" in dry.summary and fake.issues() == []


def test_a_runner_that_does_not_name_the_called_commit_stops_and_says_what_to_set(fake, signoz, workspace):
    with FakeZulip() as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=load(WORKFLOW))
        github = {"repository": "octo/app", "token": "t", "api_url": fake.base_url, "sha": ""}
        result = repo.runner.run("schedule", repo.payload("schedule"), github=github)
    job = result.jobs["round"]
    assert job.status == "failure" and job.steps["pinned"].outcome == "failure"
    assert "::error::" in job.steps["pinned"].stdout and "rounds-package input" in job.steps["pinned"].stdout
    assert job.steps["install"].skipped and job.steps["restore"].skipped


# --- the action -----------------------------------------------------------------------------------
def test_the_readme_job_with_the_action_installs_rounds_from_the_action_and_runs_it(
    fake, signoz, sources, workspace
):
    fake.repo.collaborators["alice"] = "write"
    job_workflow = parse(pinned(readme_action_job(), sources))
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=job_workflow, sources=sources)

        first = repo.run("schedule", repo.payload("schedule"))
        assert first.jobs["rounds"].status == "success", failures(first)
        action = first.jobs["rounds"].steps["rounds"]
        assert ran(action.steps) == ["install", "restore", "commands", "round", "notify", "check"]
        assert action.steps["restore"].outputs == {"source": "rebuilt"}
        folder = workspace.parent / "_actions" / sources.repository / sources.sha
        venv = first.temp / "rounds" / "venv"
        assert installed_from(venv)["url"] == folder.as_uri(), "from the action's own files"
        assert action.outputs["database"].endswith(".db") and repo.artifacts() == 1
        assert len(fake.issues()) >= 2
        assert len(zulip.messages) == len(fake.issues()) + 1

        event = repo.comment_event(1, "/rounds ignore for 7d")
        second = repo.run("issue_comment", event)
        assert second.jobs["rounds"].status == "success", failures(second)
        # what the README's fix jobs read: alice may give commands
        assert second.jobs["rounds"].outputs == {"authorised": "true"}
        action = second.jobs["rounds"].steps["rounds"]
        assert ran(action.steps) == ["install", "acknowledge", "restore", "commands", "check"]
        assert action.steps["restore"].outputs == {"source": "artifact"}
        assert action.steps["commands"].outputs == {"round": "false"}
        assert fake.reactions_on(event["comment"]["id"]) == ["eyes"]
        [reply] = fake.replies(1)
        assert "ignored until" in reply and repo.artifacts() == 2

        bot = repo.run("issue_comment", repo.comment_event(1, "/rounds pause", user="github-actions[bot]"))
        assert bot.jobs["rounds"].skipped


def test_a_dry_run_of_the_action_leaves_nothing_to_save(fake, signoz, sources, workspace):
    job_workflow = parse(pinned(readme_action_job(), sources))
    job_workflow["jobs"]["rounds"]["steps"][1]["with"]["dry-run"] = "true"
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=job_workflow, sources=sources)
        dry = repo.run("schedule", repo.payload("schedule"))
    action = dry.jobs["rounds"].steps["rounds"]
    assert dry.jobs["rounds"].status == "success", failures(dry)
    assert ran(action.steps) == ["install", "restore", "round"]
    assert action.outputs["database"] == "" and repo.artifacts() == 0 and fake.issues() == []
    assert list(Path(action.outputs["drafts"]).glob("*.md")), "the drafts are where the output says"


# --- the action's shape ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    return dict(yaml.safe_load(ACTION.read_text(encoding="utf-8")))


def test_every_variable_a_script_of_the_action_reads_is_listed_by_its_step(action):
    for step in action["runs"]["steps"]:
        if "run" not in step:
            continue
        script = step["run"]
        read = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", script))
        assigned = set(re.findall(r"(?:^|\s|export\s)([A-Z][A-Z0-9_]*)=", script))
        missing = read - set(step.get("env") or {}) - RUNNER_VARIABLES - assigned
        assert not missing, f"{step['name']} reads {sorted(missing)} without listing them"


def test_the_action_keeps_keys_and_untrusted_text_out_of_its_scripts_and_of_the_job(action):
    assert "github.event." not in ACTION.read_text(encoding="utf-8"), "comments are read from the event file"
    secrets = {"GITHUB_TOKEN", "SIGNOZ_API_KEY", "ANTHROPIC_API_KEY", "ZULIP_API_KEY"}
    for step in action["runs"]["steps"]:
        assert "uses" in step or step.get("shell") == "bash"
        script = step.get("run", "")
        assert "${{" not in script, step["name"]
        assert "GITHUB_ENV" not in script and "GITHUB_PATH" not in script, "nothing reaches later steps"
        listed = secrets & set(step.get("env") or {})
        assert step["id"] in ("doctor", "round") or "ANTHROPIC_API_KEY" not in listed, step["id"]
        assert step["id"] in ("doctor", "round") or "SIGNOZ_API_KEY" not in listed, step["id"]
        assert step["id"] in ("doctor", "notify") or "ZULIP_API_KEY" not in listed, step["id"]


def test_every_input_of_the_action_is_used_and_every_input_used_is_declared(action):
    text = ACTION.read_text(encoding="utf-8")
    used = set(re.findall(r"inputs\.([a-z][a-z0-9-]*)", text))
    assert used == set(action["inputs"])


def test_the_readme_job_grants_the_least_and_pins_every_action_but_rounds(action):
    job_workflow = parse(readme_action_job())
    assert job_workflow["permissions"] == {}
    [job] = job_workflow["jobs"].values()
    assert job["permissions"] == {"actions": "read", "contents": "read", "issues": "write"}
    assert job["concurrency"] == {"group": "rounds-state", "cancel-in-progress": False, "queue": "max"}
    for step in job["steps"]:
        name, _, ref = step["uses"].partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref) or (name, ref) == ("OWNER/rounds", "COMMIT_SHA"), step
        if name == "OWNER/rounds":
            assert set(step["with"]) <= set(action["inputs"])


def test_the_action_and_the_readme_job_pass_the_schemas_and_actionlint(action, tmp_path):
    schema = check_schema("vendor.github-actions", [ACTION])
    assert schema.returncode == 0, schema.stdout + schema.stderr
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "caller.yml").write_text(readme_action_job(), encoding="utf-8")
    # actionlint reads workflows, not actions: the action's steps, as the job of a workflow with its inputs
    as_workflow = {
        "on": {"workflow_call": {"inputs": {name: {"type": "string"} for name in action["inputs"]}}},
        "permissions": {},
        "jobs": {"rounds": {"runs-on": "ubuntu-24.04", "steps": action["runs"]["steps"]}},
    }
    (folder / "action-steps.yml").write_text(yaml.safe_dump(as_workflow, sort_keys=False), encoding="utf-8")
    schema = check_schema("vendor.github-workflows", sorted(folder.glob("*.yml")))
    assert schema.returncode == 0, schema.stdout + schema.stderr
    linted = actionlint(tmp_path)
    assert linted.returncode == 0 and "Checking 2 workflow file(s)" in linted.stdout, linted.stdout


def _without_comments(step: dict[str, Any]) -> dict[str, Any]:
    if "run" not in step:
        return step
    lines = [line for line in step["run"].splitlines() if not line.strip().startswith("#")]
    return {**step, "run": "\n".join(lines)}


def _head(checkout: Path) -> str:
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip()
