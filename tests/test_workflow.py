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


def test_a_rerun_restores_the_first_attempts_database_and_saves_over_it(fake, signoz, tmp_path):
    """Re-run all jobs: the same run, so the first attempt's `rounds-db` is the run's already. The re-run
    restores it (the newest), and its save replaces it (`overwrite: true`) instead of failing with the
    conflict upload-artifact v4 answers a second artifact of a name in a run. Without `overwrite` it would."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=load(WORKFLOW))
        first = repo.run("schedule", repo.payload("schedule"))
        assert first.jobs["round"].status == "success", failures(first)
        [saved] = fake.repo.artifacts.values()

        again = repo.rerun()
        assert again.jobs["round"].status == "success", failures(again)
        steps = again.jobs["round"].steps
        assert steps["restore"].outputs == {"source": "artifact"}
        assert f"(id {saved.id}, run {saved.run_id}," in again.summary
        assert not steps["save"].skipped and steps["save"].outcome == "success"
        [replaced] = fake.repo.artifacts.values()
        assert replaced.run_id == saved.run_id and replaced.id > saved.id
        assert steps["save"].outputs["artifact-id"] == str(replaced.id)

        # the same workflow without `overwrite: true`: the re-run's save fails with GitHub's conflict
        without = load(WORKFLOW)
        round_steps = without["jobs"]["round"]["steps"]
        [save] = [step for step in round_steps if step.get("id") == "save"]
        del save["with"]["overwrite"]
        repo.runner.workflow = without
        conflict = repo.rerun()
    steps = conflict.jobs["round"].steps
    assert steps["save"].outcome == "failure" and conflict.jobs["round"].status == "failure"
    conflict_message = "(409) Conflict: an artifact with this name already exists on the workflow run"
    assert conflict_message in steps["save"].stderr
    assert list(fake.repo.artifacts.values()) == [replaced], "the conflict left the run's artifact alone"


def test_every_upload_a_rerun_repeats_overwrites_its_name(workflow):
    """A re-run uploads each name again; upload-artifact v4 refuses that without `overwrite: true`."""
    uploads = [
        step
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if str(step.get("uses", "")).startswith("actions/upload-artifact@")
    ]
    for action in ("fix/edit", "fix/test", "fix/publish"):
        uploads += [
            step
            for step in load(ROOT / action / "action.yml")["runs"]["steps"]
            if str(step.get("uses", "")).startswith("actions/upload-artifact@")
        ]
    for block in readme_workflows():
        whole = block if block.startswith(("on:", "name:")) else f"jobs:\n{block}"  # step 4's jobs alone
        for job in parse(whole)["jobs"].values():
            uploads += [
                step
                for step in job.get("steps", [])
                if str(step.get("uses", "")).startswith("actions/upload-artifact@")
            ]
    assert len(uploads) >= 7
    for step in uploads:
        assert step["with"].get("overwrite") is True, step


def test_a_strangers_comment_is_answered_outside_the_queue_and_a_collaborators_joins_it(
    fake, signoz, tmp_path
):
    """On a public repository anyone can comment, and issue_comment starts a run for every comment. Who may
    give commands is decided by the acknowledge job, outside the `rounds-state` group: a stranger's `/rounds`
    comment is answered there and never joins the queue (where 100 of them would cancel the scheduled rounds
    waiting), a collaborator's joins it and is carried out. Schedule and dispatch skip acknowledge and still
    run. The next round's catch-up finds the stranger's answer on GitHub and does not answer twice."""
    fake.repo.collaborators["alice"] = "write"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeZulip(streams=("ops",)) as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=load(WORKFLOW))
        first = repo.run("schedule", repo.payload("schedule"))
        assert first.jobs["acknowledge"].skipped and first.jobs["round"].status == "success", failures(first)
        assert first.joined("rounds-state") == ["round"]

        stranger = repo.comment_event(1, "/rounds pause", user="mallory")
        refused = repo.run("issue_comment", stranger)
        ack = refused.jobs["acknowledge"]
        assert ack.status == "success", failures(refused)
        assert ack.outputs == {"authorised": "false"}
        assert refused.jobs["round"].skipped and refused.joined("rounds-state") == []
        assert fake.reactions_on(stranger["comment"]["id"]) == ["eyes"]
        [reply] = fake.replies(1)
        assert reply.startswith("@mallory: nothing was done: @mallory has no permission on this repository")
        assert f"<!-- rounds:reply {stranger['comment']['id']} -->" in reply
        assert repo.artifacts() == 1, "no run took the database for it"

        allowed = repo.comment_event(1, "/rounds status", user="alice")
        handled = repo.run("issue_comment", allowed)
        assert handled.jobs["acknowledge"].outputs == {"authorised": "true"}, failures(handled)
        assert handled.jobs["round"].status == "success", failures(handled)
        assert handled.joined("rounds-state") == ["round"]
        replies = fake.replies(1)
        assert len(replies) == 2 and replies[-1].startswith("@alice:")

        dispatched = repo.run("workflow_dispatch", repo.payload("workflow_dispatch", inputs={}))
        assert dispatched.jobs["acknowledge"].skipped and dispatched.joined("rounds-state") == ["round"]
        assert dispatched.jobs["round"].status == "success", failures(dispatched)
        assert fake.replies(1) == replies, "the catch-up found the stranger's answer and did not repeat it"


def test_the_round_job_waits_for_acknowledge_and_runs_without_it(workflow):
    """A job whose needed job was skipped is skipped too unless its `if:` uses a status function."""
    round_job = workflow["jobs"]["round"]
    assert round_job["needs"] == "acknowledge"
    assert round_job["if"].strip().startswith("!cancelled()")
    assert "needs.acknowledge.outputs.authorised == 'true'" in round_job["if"]
    assert workflow["jobs"]["acknowledge"]["outputs"] == {
        "authorised": "${{ steps.acknowledge.outputs.authorised }}"
    }
    declared = workflow["on"]["workflow_call"]["outputs"]["authorised"]
    assert declared["value"] == "${{ jobs.acknowledge.outputs.authorised }}"
