"""The README's second way, the action as a step of the user's own job: a `/rounds` comment joins the
`rounds-state` queue only from someone the event says is the repository's owner, a member of its organization
or a collaborator. The job cannot ask GitHub for the commenter's permission before it joins the queue (the
reusable workflow's acknowledge job does, outside it), and the queue keeps 100 runs waiting, each newer one
cancelling the oldest: a stranger's comments would otherwise cancel the scheduled rounds in it.

GitHub puts the comment's `author_association` in the `issue_comment` payload (REST "Issue comments":
OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIMER, FIRST_TIME_CONTRIBUTOR, MANNEQUIN, NONE), and a job its
`if:` skips never joins its concurrency group ("Control the concurrency of workflows and jobs")."""

from __future__ import annotations

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


def _comment(association: str, *, body: str = "/rounds pause", kind: str = "User") -> dict[str, Any]:
    return {
        "action": "created",
        "comment": {
            "body": body,
            "user": {"login": "someone", "type": kind},
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
