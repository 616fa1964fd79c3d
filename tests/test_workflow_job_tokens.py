"""Each job's GITHUB_TOKEN holds its job's permissions and nothing more (`workflow_tokens`, which cites
GitHub's docs): GitHub mints a token per job from the job's `permissions:` (else its workflow's, else the
calling job's, else the repository's default), so a step that needs more than its job grants gets GitHub's
403. Before, every job of a run shared one token with the bot's permissions, and a job that granted too little
passed here.
"""

from __future__ import annotations

import textwrap
from typing import Any

from fake_zulip import FakeZulip
from workflow_files import parse
from workflow_harness import Repository
from workflow_load import SCOPES, parse_permissions, token_default
from workflow_tokens import fake_permissions, job_permissions

NONE = dict.fromkeys(SCOPES, "none")

# a step that comments on issue 1 with the job's token, and says what GitHub answered
COMMENT = textwrap.dedent("""\
    python - <<'EOF'
    import json, os, urllib.error, urllib.request
    request = urllib.request.Request(
        f"{os.environ['API']}/repos/octo/app/issues/1/comments",
        data=json.dumps({"body": "hello"}).encode(),
        headers={"Authorization": f"Bearer {os.environ['TOKEN']}", "Content-Type": "application/json"},
    )
    try:
        status = urllib.request.urlopen(request).status
    except urllib.error.HTTPError as error:
        status = error.code
    with open(os.environ["GITHUB_OUTPUT"], "a") as out:
        out.write(f"status={status}\\n")
    EOF
""")


def commenting_job(permissions: str) -> dict[str, Any]:
    return {
        "runs-on": "ubuntu-24.04",
        "permissions": parse(permissions),
        "steps": [
            {
                "id": "comment",
                "env": {"TOKEN": "${{ github.token }}", "API": "${{ github.api_url }}"},
                "run": COMMENT,
            }
        ],
    }


def test_a_step_can_do_only_what_its_jobs_permissions_grant(fake, signoz, tmp_path):
    fake.state.create_issue(fake.repo, "a problem", "", [], "alice")
    workflow = {
        "on": {"workflow_dispatch": None},
        "permissions": {},
        "jobs": {
            "reader": commenting_job("{issues: read}"),
            "writer": commenting_job("{issues: write}"),
            "nothing": commenting_job("{}"),
        },
    }
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeZulip() as zulip:
        repo = Repository(fake, workspace, zulip, signoz, workflow=workflow)
        result = repo.run("workflow_dispatch", repo.payload("workflow_dispatch"))
    statuses = {name: job.steps["comment"].outputs["status"] for name, job in result.jobs.items()}
    assert statuses == {"reader": "403", "writer": "201", "nothing": "403"}
    assert len({job.token for job in result.jobs.values()}) == 3, "a token per job"
    assert [c.body for c in fake.repo.comments.values()] == ["hello"]
    assert result.jobs["writer"].permissions == {**NONE, "issues": "write"}


def test_a_job_that_names_no_permissions_has_its_workflows_else_the_callers_else_the_default():
    own = {"permissions": {"issues": "write"}}
    bare: dict[str, Any] = {}
    top = parse_permissions({"contents": "read"})[0]
    caller = parse_permissions({"actions": "read"})[0]
    assert job_permissions(own, top, caller, policy="restricted", trusted=True) == {**NONE, "issues": "write"}
    assert job_permissions(bare, top, caller, policy="restricted", trusted=True) == top
    assert job_permissions(bare, None, caller, policy="restricted", trusted=True) == caller
    assert job_permissions(bare, None, None, policy="restricted", trusted=True) == token_default(
        "restricted", trusted=True
    )
    # `{}` grants nothing, which is not "names none"
    assert job_permissions({"permissions": {}}, top, caller, policy="permissive", trusted=True) == NONE


def test_the_fakes_token_always_reads_metadata_and_spells_scopes_as_the_fake_does():
    permissions = parse_permissions({"pull-requests": "write", "contents": "read"})[0]
    assert permissions is not None
    assert fake_permissions(permissions) == {"pull_requests": "write", "contents": "read", "metadata": "read"}
    assert fake_permissions(NONE) == {"metadata": "read"}
