"""The GitHub Actions workflow: its shape (security must-haves, lint), and its steps run as the runner would.

The behaviour test takes `.github/workflows/rounds.yml` as it is, evaluates its `if:`s and `${{ }}`s, and
runs its `run:` scripts in bash with the runner's environment and event payloads shaped like GitHub's, against
the fake GitHub, the SigNoz emulator and a fake Zulip. `uses:` steps get local stand-ins (`workflow_harness`):
checkout and setup-python do nothing (this checkout and this Python, where rounds is installed),
upload-artifact stores the files as an artifact of the fake GitHub. How a caller's workflow installs rounds
from a pinned commit is tested in test_workflow_adoption.py.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from fake_zulip import FakeZulip
from workflow_expressions import evaluate
from workflow_files import load, parse
from workflow_harness import (
    Repository,
    actionlint,
    check_schema,
    failures,
    ran,
    readme_workflows,
)

from rounds_bot import controls
from rounds_bot.commands.grammar import command_lines

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "rounds.yml"
SHA_PIN = re.compile(
    r"^\s*(?:- )?uses: (?P<action>[\w.-]+/[\w.-]+)@(?P<ref>\S+)(?P<comment>\s+# v\d+\S*)?\s*$"
)


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return load(WORKFLOW)


# --- shape ---------------------------------------------------------------------------------------
def test_no_permissions_by_default_and_each_job_names_the_least_it_needs(workflow):
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert jobs["acknowledge"]["permissions"] == {"contents": "read", "issues": "write"}
    assert jobs["round"]["permissions"] == {"actions": "read", "contents": "read", "issues": "write"}
    for job in jobs.values():
        assert 0 < job["timeout-minutes"] <= 60


def test_actions_are_pinned_to_full_commit_shas():
    lines = [line for line in WORKFLOW.read_text().splitlines() if "uses:" in line]
    assert lines
    for line in lines:
        match = SHA_PIN.match(line)
        assert match and re.fullmatch(r"[0-9a-f]{40}", match["ref"]) and match["comment"], line


def test_no_expression_is_expanded_inside_a_script(workflow):
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step


def test_every_database_job_runs_alone_and_queued_runs_are_not_cancelled(workflow):
    round_job = workflow["jobs"]["round"]
    # queue: max: a burst of /rounds comments cannot cancel the scheduled rounds waiting behind them
    assert round_job["concurrency"] == {"group": "rounds-state", "cancel-in-progress": False, "queue": "max"}
    assert "concurrency" not in workflow and "concurrency" not in workflow["jobs"]["acknowledge"]


def test_triggers(workflow):
    on = workflow["on"]
    minutes = on["schedule"][0]["cron"].split()[0].split(",")
    assert "0" not in minutes and "00" not in minutes
    assert set(on["workflow_dispatch"]["inputs"]) >= {"dry-run", "lookback-minutes", "rediagnose"}
    assert on["issue_comment"] == {"types": ["created"]}
    assert "settings" in on["workflow_call"]["inputs"]


def readme_caller() -> str:
    return readme_workflows()[0]


def test_the_readme_caller_calls_this_workflow_with_the_least_and_each_secret_by_name(workflow):
    parsed = parse(readme_caller())
    assert parsed["permissions"] == {}
    job = next(iter(parsed["jobs"].values()))
    assert job["uses"].split("@")[0].endswith("/.github/workflows/rounds.yml")
    assert job["permissions"] == {"actions": "read", "contents": "read", "issues": "write"}
    # `secrets: inherit` passes nothing to a workflow of another organisation: each secret by name
    declared = set(workflow["on"]["workflow_call"]["secrets"])
    assert set(job["secrets"]) == declared
    assert all(value == f"${{{{ secrets.{name} }}}}" for name, value in job["secrets"].items())


def test_the_readme_caller_declares_every_run_workflow_input_the_workflow_reads(workflow):
    """The called workflow reads the Run-workflow boxes from the caller's event: the caller must have them."""
    read = set(re.findall(r"github\.event\.inputs\.([a-z-]+)", WORKFLOW.read_text(encoding="utf-8")))
    read |= {"rediagnose"}  # read by `rounds command` from the event file
    caller_inputs = parse(readme_caller())["on"]["workflow_dispatch"]["inputs"]
    assert read <= set(caller_inputs), sorted(read - set(caller_inputs))
    own = workflow["on"]["workflow_dispatch"]["inputs"]
    for name, spec in caller_inputs.items():
        assert spec["type"] == own[name]["type"], name


def test_the_workflows_and_the_readme_caller_pass_the_schema_and_actionlint(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for path in (ROOT / ".github" / "workflows").glob("*.yml"):
        shutil.copy(path, folder / path.name)
    caller, fix_job = readme_workflows()[:2]
    (folder / "caller.yml").write_text(caller + fix_job, encoding="utf-8")
    files = sorted(folder.glob("*.yml"))
    schema = check_schema("vendor.github-workflows", files)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    linted = actionlint(tmp_path)
    assert linted.returncode == 0 and f"Checking {len(files)} workflow file(s)" in linted.stdout, (
        linted.stdout
    )


def test_the_expression_evaluator_follows_githubs_rules():
    contexts = {"github": {"event": {"inputs": {"dry-run": "true"}}, "event_name": "push"}, "inputs": {}}
    assert evaluate("github.event.inputs.dry-run == 'true' && 'dry-run' || 'github'", contexts) == "dry-run"
    assert evaluate("inputs.rounds-package || '.'", contexts) == "."
    assert evaluate("contains('Hello /rounds', '/ROUNDS')", contexts) is True
    assert evaluate("github.event.comment.user.type != 'Bot'", contexts) is True
    assert evaluate("!(github.event_name == 'push')", contexts) is False
    assert evaluate("inputs.rounds-package == ''", contexts) is True  # a missing input: null == ''
    job = {"job": {"status": "success", "workflow_sha": "4f1c"}}
    assert evaluate("fromJSON(toJSON(job)).workflow_sha", job) == "4f1c"


# --- behaviour -----------------------------------------------------------------------------------
def test_schedule_comment_and_dispatch_runs_carry_the_database_between_them(fake, signoz, tmp_path):
    fake.repo.collaborators["alice"] = "write"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=load(WORKFLOW))

        # 1. the first scheduled run: nothing saved yet, so the database starts from the (no) issues
        first = repo.run("schedule", repo.payload("schedule"))
        assert first.jobs["acknowledge"].skipped
        assert first.jobs["round"].status == "success", failures(first)
        assert ran(first, "round")[-5:] == ["restore", "commands", "round", "notify", "check", "save"][-5:]
        steps = first.jobs["round"].steps
        assert steps["restore"].outputs == {"source": "rebuilt"}
        assert steps["commands"].outputs == {"round": "true"}
        assert "::notice::no saved database and no rounds issues yet" in steps["restore"].stderr
        filed = fake.issues()
        assert len(filed) >= 2
        assert "### Saved state" in first.summary and "## rounds: round" in first.summary
        assert repo.artifacts() == 1
        assert len(zulip.messages) == len(filed) + 1  # a notice per new issue, and the summary

        # 2. a /rounds comment: acknowledged at once, handled with the restored database, saved again
        event = repo.comment_event(1, "/rounds ignore for 7d\n/rounds status")
        second = repo.run("issue_comment", event)
        assert second.jobs["acknowledge"].status == "success", failures(second)
        assert second.jobs["round"].status == "success", failures(second)
        assert second.jobs["round"].steps["restore"].outputs == {"source": "artifact"}
        assert second.jobs["round"].steps["commands"].outputs == {"round": "false"}
        assert second.jobs["round"].steps["round"].skipped
        assert fake.reactions_on(event["comment"]["id"]) == ["eyes"]
        [reply] = fake.replies(1)
        assert reply.startswith("@alice:") and "ignored until" in reply and command_lines(reply) == []
        assert repo.artifacts() == 2
        saved = repo.saved_database(tmp_path)
        try:
            signature = next(s.id for s in saved.signatures() if s.issue_ref == "#1")
            assert signature in controls.load_controls(saved).mutes
        finally:
            saved.close()

        # 3. a bot's comment starts nothing
        before = len(fake.exchanges)
        bot = repo.run("issue_comment", repo.comment_event(1, "/rounds pause", user="github-actions[bot]"))
        assert bot.jobs["acknowledge"].skipped and bot.jobs["round"].skipped
        assert len(fake.exchanges) == before

        # 4. the Run workflow button, as a dry run: drafts, and nothing saved
        dry = repo.run(
            "workflow_dispatch",
            repo.payload("workflow_dispatch", inputs={"dry-run": "true", "lookback-minutes": "30"}),
        )
        assert dry.jobs["round"].status == "success", failures(dry)
        assert dry.jobs["round"].steps["commands"].skipped and dry.jobs["round"].steps["check"].skipped
        assert "tracker `dry-run`" in dry.summary
        assert repo.artifacts() == 2

    assert len(fake.issues()) == len(filed), "no run filed a twin"


def test_a_failing_step_is_an_error_annotation_and_nothing_is_saved(fake, signoz, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeZulip() as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=load(WORKFLOW))
        result = repo.run("schedule", repo.payload("schedule"), token="not-a-valid-token")
    steps = result.jobs["round"].steps
    assert result.jobs["round"].status == "failure"
    assert steps["restore"].outcome == "failure"
    assert "::error::GitHub rejected the token" in steps["restore"].stderr
    assert steps["check"].skipped and repo.artifacts() == 0
