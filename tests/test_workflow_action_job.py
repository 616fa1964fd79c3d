"""The README's second way, the action as a step of the user's own job: a `/rounds` comment joins the
`rounds-state` queue only from someone the event says is the repository's owner, a member of its organization
or a collaborator. The job cannot ask GitHub for the commenter's permission before it joins the queue (the
reusable workflow's acknowledge job does, outside it), and the queue keeps 100 runs waiting, each newer one
cancelling the oldest: a stranger's comments would otherwise cancel the scheduled rounds in it.

GitHub puts the comment's `author_association` in the `issue_comment` payload (REST "Issue comments":
OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIMER, FIRST_TIME_CONTRIBUTOR, MANNEQUIN, NONE), and a job its
`if:` skips never joins its concurrency group ("Control the concurrency of workflows and jobs")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from workflow_files import parse
from workflow_harness import readme_workflows
from workflow_runner import WorkflowRunner

GITHUB = {"repository": "octo/app", "token": "ghs_workflow_token"}


def _action_job_workflow() -> dict[str, Any]:
    (block,) = [text for text in readme_workflows() if "uses: OWNER/rounds@COMMIT_SHA" in text]
    return parse(block.replace("OWNER/rounds", "octo/rounds").replace("COMMIT_SHA", "0" * 40))


def _runner(tmp_path: Path) -> WorkflowRunner:
    workflow = _action_job_workflow()
    steps = {
        step.get("id") or f"step{index}" for index, step in enumerate(workflow["jobs"]["rounds"]["steps"])
    }
    workspace = tmp_path / "app"
    workspace.mkdir()
    return WorkflowRunner(workflow, workspace, actions={}, substitute=steps)


def _comment(
    association: str, *, body: str = "/rounds pause", kind: str = "User", login: str = "someone"
) -> dict[str, Any]:
    return {
        "action": "created",
        "comment": {
            "body": body,
            "user": {"login": login, "type": kind},
            "author_association": association,
        },
    }


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_a_comment_from_the_repositorys_people_joins_the_queue(tmp_path: Path, association: str) -> None:
    run = _runner(tmp_path).run("issue_comment", _comment(association), github=GITHUB)
    assert run.joined("rounds-state") == ["rounds"]


@pytest.mark.parametrize(
    "association", ["NONE", "CONTRIBUTOR", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN"]
)
def test_a_strangers_comment_joins_no_queue(tmp_path: Path, association: str) -> None:
    run = _runner(tmp_path).run("issue_comment", _comment(association), github=GITHUB)
    assert run.joined("rounds-state") == []
    assert run.jobs["rounds"].skipped


def test_a_bots_comment_and_a_comment_without_a_command_join_no_queue(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    bot = runner.run("issue_comment", _comment("OWNER", kind="Bot"), github=GITHUB)
    chat = runner.run("issue_comment", _comment("OWNER", body="thanks, looks fixed"), github=GITHUB)
    assert bot.joined("rounds-state") == [] and chat.joined("rounds-state") == []


def test_schedules_and_the_run_button_join_the_queue(tmp_path: Path) -> None:
    runner = _runner(tmp_path)
    assert runner.run("schedule", {}, github=GITHUB).joined("rounds-state") == ["rounds"]
    assert runner.run("workflow_dispatch", {"inputs": {}}, github=GITHUB).joined("rounds-state") == ["rounds"]


def _acknowledging(with_: dict[str, str], env: dict[str, str]) -> None:
    """The action, as far as the fix jobs see it: `authorised` says whether the commenter may give commands
    (its acknowledge step asks GitHub; here `alice` may, anyone else not)."""
    event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text("utf-8"))
    may = (event.get("comment") or {}).get("user", {}).get("login") == "alice"
    with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as output:
        output.write(f"authorised={str(may).lower()}{os.linesep}")


def test_the_fix_jobs_run_on_a_fix_comment_only_when_the_action_says_its_author_may_give_commands(
    tmp_path: Path,
) -> None:
    """The README's fix jobs work with the action's job too: it passes on the action's `authorised` output,
    which they read as `needs.rounds.outputs.authorised`."""
    (job_block,) = [text for text in readme_workflows() if "uses: OWNER/rounds@COMMIT_SHA" in text]
    text = (job_block + readme_workflows()[1]).replace("OWNER/rounds", "octo/rounds")
    workflow = parse(text.replace("COMMIT_SHA", "0" * 40))
    others = {
        step.get("id") or f"step{index}"
        for job in workflow["jobs"].values()
        for index, step in enumerate(job.get("steps") or [])
    } - {"rounds"}
    workspace = tmp_path / "app"
    workspace.mkdir()
    runner = WorkflowRunner(workflow, workspace, actions={"octo/rounds": _acknowledging}, substitute=others)

    alice = runner.run(
        "issue_comment", _comment("COLLABORATOR", body="/rounds fix", login="alice"), github=GITHUB
    )
    assert alice.jobs["rounds"].outputs == {"authorised": "true"}
    assert alice.joined("rounds-state") == ["rounds", "fix-edit", "fix-publish"]

    reader = runner.run(
        "issue_comment", _comment("COLLABORATOR", body="/rounds fix", login="bob"), github=GITHUB
    )
    assert reader.jobs["rounds"].outputs == {"authorised": "false"}
    assert reader.jobs["fix-edit"].skipped and reader.joined("rounds-state") == ["rounds"]
