"""GitHub's load-time rules in the local workflow runner (`workflow_load`, where each rule cites GitHub's
docs): what GitHub refuses before any job runs (the run concludes `startup_failure` and no job runs), what
`secrets: inherit` passes across owners, and which events start no run at all.

Small synthetic workflows show each rule passing and failing; called workflows are committed to local git
repositories, as GitHub reads them from the repository a `uses:` names. The README's caller and rounds.yml
as they were before the fix job moved out (tests/fixtures/workflows/*-before-split.yml) show the defect that
slipped through: GitHub never starts that caller.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from fake_github.actions_routes import ActionsFakeGitHub, running_actions_fake
from fake_github.fixtures import REPOSITORY, TOKEN
from workflow_files import parse
from workflow_harness import EVENTS, ROOT, commit_files, event_actor, readme_workflows
from workflow_load import (
    SCOPES,
    over_the_limit,
    parse_permissions,
    passes_inherited_secrets,
    start_decision,
    token_default,
)
from workflow_runner import RunResult, WorkflowRunner

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "workflows"
TOOLS = "octo/tools"  # where the synthetic called workflows live
GITHUB = {"repository": "octo/app", "token": "ghs_workflow_token"}


def workflow(text: str) -> dict[str, Any]:
    return parse(textwrap.dedent(text))


def called(text: str) -> str:
    return textwrap.dedent(text)


class Calls:
    """A caller workflow of octo/app and the workflows it calls, committed to `octo/tools` (`@main`)."""

    def __init__(self, tmp_path: Path, files: dict[str, str], repository: str = TOOLS) -> None:
        paths = {f".github/workflows/{name}": text for name, text in files.items()}
        self.sources = commit_files(tmp_path / repository.replace("/", "+"), paths, repository)
        self.workspace = tmp_path / "work" / "app"
        self.workspace.mkdir(parents=True, exist_ok=True)

    def runner(self, caller: str, **options: Any) -> WorkflowRunner:
        return WorkflowRunner(
            workflow(caller),
            self.workspace,
            actions={},
            repositories={self.sources.repository: self.sources.path},
            **options,
        )

    def run(self, caller: str, event: str = "workflow_dispatch", **options: Any) -> RunResult:
        secrets = options.pop("secrets", None)
        return self.runner(caller, **options).run(event, {}, github=GITHUB, secrets=secrets)


def refused(result: RunResult) -> list[str]:
    """The errors of a run that did not load; fails unless the run ended at startup with no job."""
    assert result.started and result.conclusion == "startup_failure", result
    assert result.jobs == {}, "no job runs when the workflow does not load"
    return result.startup_errors


def ran(result: RunResult) -> RunResult:
    assert result.startup_errors == [] and result.lint_errors == [], result
    assert result.conclusion == "success", {name: job.status for name, job in result.jobs.items()}
    return result


# --- 1. permissions of called workflows ------------------------------------------------------------------
WRITER = called("""
    on: workflow_call
    permissions: {}
    jobs:
      report:
        runs-on: ubuntu-24.04
        steps: [{run: echo report}]
      fix:
        if: false
        runs-on: ubuntu-24.04
        permissions: {contents: write, pull-requests: write, issues: write}
        steps: [{run: echo fix}]
""")


def caller_with(
    permissions: str,
    top: str = "",
    uses: str = f"{TOOLS}/.github/workflows/writer.yml@main",
    secrets: str = "",
) -> str:
    """A caller workflow: `permissions` of the calling job, `top` the workflow's top-level keys."""
    return f"""
        on: workflow_dispatch
        {top}
        jobs:
          call:
            uses: {uses}
            {permissions}
            {secrets}
    """


def test_a_called_job_asking_for_more_than_the_caller_refuses_the_whole_run_whatever_its_if(tmp_path):
    calls = Calls(tmp_path, {"writer.yml": WRITER})
    errors = refused(calls.run(caller_with("permissions: {contents: read, issues: write}")))
    assert errors == [
        "Error calling workflow 'octo/tools/.github/workflows/writer.yml@main'. The nested job 'fix' is "
        "requesting 'contents: write, pull-requests: write', but is only allowed "
        "'contents: read, pull-requests: none'."
    ]


def test_a_caller_that_grants_what_the_called_jobs_ask_runs_them(tmp_path):
    calls = Calls(tmp_path, {"writer.yml": WRITER})
    result = ran(
        calls.run(caller_with("permissions: {contents: write, pull-requests: write, issues: write}"))
    )
    assert result.jobs["call/report"].status == "success" and result.jobs["call/fix"].skipped
    # more than asked is fine too
    ran(calls.run(caller_with("permissions: write-all")))


def test_a_called_job_that_names_no_permissions_inherits_the_callers(tmp_path):
    quiet = called("""
        on: workflow_call
        jobs:
          report:
            runs-on: ubuntu-24.04
            steps: [{run: echo report}]
    """)
    calls = Calls(tmp_path, {"quiet.yml": quiet})
    uses = "octo/tools/.github/workflows/quiet.yml@main"
    ran(calls.run(caller_with("permissions: {}", uses=uses)))
    ran(calls.run(caller_with("", uses=uses)))


def test_without_job_permissions_the_callers_workflow_permissions_are_the_limit(tmp_path):
    calls = Calls(tmp_path, {"writer.yml": WRITER})
    errors = refused(calls.run(caller_with("", top="permissions: {contents: read}")))
    assert errors[0].endswith(
        "is requesting 'contents: write, issues: write, pull-requests: write', but is only allowed "
        "'contents: read, issues: none, pull-requests: none'."
    )
    top = "permissions: {contents: write, issues: write, pull-requests: write}"
    ran(calls.run(caller_with("", top=top)))
    # the job's own permissions, when it has them, not the workflow's
    refused(calls.run(caller_with("permissions: {contents: read}", top="permissions: write-all")))


@pytest.mark.parametrize(
    ("asks", "restricted", "permissive"),
    [
        ("{contents: read, packages: read}", None, None),
        ("{issues: write}", "'issues: write', but is only allowed 'issues: none'", None),
        ("{contents: write}", "'contents: write', but is only allowed 'contents: read'", None),
        ("{id-token: write}", "'id-token: write', but is only allowed 'id-token: none'", None),
        ("{models: read}", "'models: read', but is only allowed 'models: none'", None),
        ("write-all", "'actions: write, artifact-metadata: write, attestations: write", None),
    ],
)
def test_without_any_permissions_on_the_way_the_repository_default_is_the_limit(
    tmp_path, asks, restricted, permissive
):
    asking = called(f"""
        on: workflow_call
        jobs:
          job:
            runs-on: ubuntu-24.04
            permissions: {asks}
            steps: [{{run: echo job}}]
    """)
    calls = Calls(tmp_path, {"asking.yml": asking})
    caller = caller_with("", uses="octo/tools/.github/workflows/asking.yml@main")
    for default, expected in (("restricted", restricted), ("permissive", permissive)):
        result = calls.run(caller, default_permissions=default)
        if expected is None:
            ran(result)
        else:
            [error] = refused(result)
            assert expected in error, (default, error)
    # restricted is the runner's default, as it is GitHub's for new repositories
    assert calls.run(caller).conclusion == ("success" if restricted is None else "startup_failure")


def test_id_token_write_by_default_only_for_a_called_workflow_of_the_same_owner(tmp_path):
    oidc = called("""
        on: workflow_call
        jobs:
          deploy:
            runs-on: ubuntu-24.04
            permissions: {id-token: write, contents: read}
            steps: [{run: echo deploy}]
    """)
    calls = Calls(tmp_path, {"oidc.yml": oidc})
    caller = caller_with("", uses="octo/tools/.github/workflows/oidc.yml@main")
    ran(calls.run(caller, default_permissions="permissive"))
    [error] = refused(calls.run(caller, default_permissions="permissive", owner="acme"))
    assert error.endswith("'id-token: write', but is only allowed 'id-token: none'.")
    ran(calls.run(caller, default_permissions="permissive", owner="acme", enterprise_owners={"octo"}))


def test_the_called_workflows_own_permissions_are_checked_and_passed_to_its_jobs(tmp_path):
    greedy = called("""
        on: workflow_call
        permissions: {contents: write}
        jobs:
          job:
            runs-on: ubuntu-24.04
            steps: [{run: echo job}]
    """)
    calls = Calls(tmp_path, {"greedy.yml": greedy})
    uses = "octo/tools/.github/workflows/greedy.yml@main"
    assert refused(calls.run(caller_with("permissions: {contents: read}", uses=uses))) == [
        f"Error calling workflow '{uses}'. The workflow is requesting 'contents: write', "
        "but is only allowed 'contents: read'."
    ]
    ran(calls.run(caller_with("permissions: {contents: write}", uses=uses)))


NESTED_B = called("""
    on: workflow_call
    jobs:
      inner:
        uses: octo/tools/.github/workflows/c.yml@main
        secrets: inherit
""")
NESTED_C = called("""
    on: workflow_call
    jobs:
      deep:
        runs-on: ubuntu-24.04
        permissions: {contents: write}
        env: {TOKEN: "${{ secrets.DEEP_TOKEN }}"}
        steps: [{run: echo deep}]
""")


def test_nested_calls_can_only_keep_or_lower_the_first_callers_permissions(tmp_path):
    calls = Calls(tmp_path, {"b.yml": NESTED_B, "c.yml": NESTED_C})
    uses = "octo/tools/.github/workflows/b.yml@main"
    assert refused(calls.run(caller_with("permissions: {contents: read}", uses=uses))) == [
        "Error calling workflow 'octo/tools/.github/workflows/c.yml@main'. The nested job 'deep' is "
        "requesting 'contents: write', but is only allowed 'contents: read'."
    ]
    result = ran(calls.run(caller_with("permissions: {contents: write}", uses=uses)))
    assert result.jobs["call/inner/deep"].status == "success"


def test_a_nested_calling_job_cannot_raise_the_limit_either(tmp_path):
    raising = called("""
        on: workflow_call
        jobs:
          inner:
            uses: octo/tools/.github/workflows/c.yml@main
            permissions: {contents: write}
    """)
    calls = Calls(tmp_path, {"b.yml": raising, "c.yml": NESTED_C})
    errors = refused(
        calls.run(
            caller_with("permissions: {contents: read}", uses="octo/tools/.github/workflows/b.yml@main")
        )
    )
    assert errors == [
        "Error calling workflow 'octo/tools/.github/workflows/b.yml@main'. The nested job 'inner' is "
        "requesting 'contents: write', but is only allowed 'contents: read'."
    ]


@pytest.mark.parametrize(
    ("permissions", "error"),
    [
        ("{contents: admin}", "Unexpected value 'admin'"),
        ("{models: write}", "Unexpected value 'write'"),
        ("{id-token: read}", "Unexpected value 'read'"),
        ("{secrets: read}", "Unexpected value 'secrets'"),
        ("write-some", "Unexpected value 'write-some'"),
    ],
)
def test_a_permission_github_does_not_know_is_a_load_error(tmp_path, permissions, error):
    result = WorkflowRunner(
        workflow(f"""
            on: workflow_dispatch
            jobs:
              job:
                runs-on: ubuntu-24.04
                permissions: {permissions}
                steps: [{{run: echo job}}]
        """),
        tmp_path,
        actions={},
    ).run("workflow_dispatch", {}, github=GITHUB)
    assert refused(result) == [error]


def test_permission_values_and_defaults_follow_githubs_table():
    assert token_default("restricted", trusted=True) == {
        **dict.fromkeys(SCOPES, "none"),
        "contents": "read",
        "packages": "read",
    }
    permissive = token_default("permissive", trusted=False)
    assert permissive["issues"] == permissive["attestations"] == "write"
    assert (permissive["id-token"], permissive["models"], permissive["vulnerability-alerts"]) == (
        "none",
        "read",
        "read",
    )
    assert token_default("permissive", trusted=True)["id-token"] == "write"
    read_all, _ = parse_permissions("read-all")
    assert read_all is not None and set(read_all.values()) == {"read"}
    assert parse_permissions({}) == (dict.fromkeys(SCOPES, "none"), [])
    assert parse_permissions(None) == (None, [])
    asked, _ = parse_permissions({"pull-requests": "write", "contents": "write"})
    assert asked is not None
    # GitHub's order of scopes, not the file's
    assert over_the_limit(asked, token_default("restricted", trusted=True)) == [
        ("contents", "write", "read"),
        ("pull-requests", "write", "none"),
    ]


# --- 2. secrets ----------------------------------------------------------------------------------------
READER = called("""
    on:
      workflow_call:
        secrets:
          API_KEY: {required: false}
          NEEDED: {required: false}
    jobs:
      read:
        runs-on: ubuntu-24.04
        env:
          API_KEY: ${{ secrets.API_KEY }}
          TOKEN: ${{ secrets.GITHUB_TOKEN }}
        steps: [{run: echo read}]
""")
CALL_READER = """
    on: workflow_dispatch
    jobs:
      call:
        uses: octo/tools/.github/workflows/reader.yml@main
        SECRETS
"""


def test_inherit_passes_the_secrets_within_one_owner_and_none_across_owners(tmp_path):
    calls = Calls(tmp_path, {"reader.yml": READER})
    caller = CALL_READER.replace("SECRETS", "secrets: inherit")
    same = ran(calls.run(caller, secrets={"API_KEY": "k"}))
    assert same.jobs["call/read"].env == {"API_KEY": "k", "TOKEN": "ghs_workflow_token"}
    other = ran(calls.run(caller, secrets={"API_KEY": "k"}, owner="acme"))
    assert other.jobs["call/read"].env == {"API_KEY": "", "TOKEN": "ghs_workflow_token"}, (
        "not an error: empty"
    )
    enterprise = ran(calls.run(caller, secrets={"API_KEY": "k"}, owner="acme", enterprise_owners=["octo"]))
    assert enterprise.jobs["call/read"].env["API_KEY"] == "k"
    # passed by name, a secret crosses owners
    named = CALL_READER.replace("SECRETS", "secrets: {API_KEY: '${{ secrets.API_KEY }}'}")
    assert (
        ran(calls.run(named, secrets={"API_KEY": "k"}, owner="acme")).jobs["call/read"].env["API_KEY"] == "k"
    )
    assert passes_inherited_secrets("OCTO", "octo/tools/.github/workflows/reader.yml@main")
    assert not passes_inherited_secrets("acme", "octo/tools/.github/workflows/reader.yml@main")


def test_inherit_through_a_nested_call_passes_only_what_each_level_passes(tmp_path):
    calls = Calls(tmp_path, {"b.yml": NESTED_B, "c.yml": NESTED_C})
    uses = f"{TOOLS}/.github/workflows/b.yml@main"
    caller = caller_with("permissions: {contents: write}", uses=uses, secrets="secrets: inherit")
    assert ran(calls.run(caller, secrets={"DEEP_TOKEN": "d"})).jobs["call/inner/deep"].env == {"TOKEN": "d"}
    assert ran(calls.run(caller, secrets={"DEEP_TOKEN": "d"}, owner="acme")).jobs["call/inner/deep"].env == {
        "TOKEN": ""
    }


def test_a_secret_passed_by_name_must_be_declared_and_a_required_one_passed(tmp_path):
    strict_reader = READER.replace("NEEDED: {required: false}", "NEEDED: {required: true}")
    calls = Calls(tmp_path, {"reader.yml": strict_reader})
    passing = CALL_READER.replace("SECRETS", "secrets: {API_KEY: x, EXTRA: y}")
    assert refused(calls.run(passing)) == [
        "Secret NEEDED is required, but not provided while calling.",
        "Invalid secret, EXTRA is not defined in the referenced workflow.",
    ]
    ran(calls.run(CALL_READER.replace("SECRETS", "secrets: {api_key: x, NEEDED: y}")))
    # GitHub does not check inherited secrets when it loads the workflow: the run starts
    ran(calls.run(CALL_READER.replace("SECRETS", "secrets: inherit")))
    # and a workflow that declares no secrets takes none by name
    bare = called("""
        on: workflow_call
        jobs:
          read:
            runs-on: ubuntu-24.04
            steps: [{run: echo read}]
    """)
    assert refused(Calls(tmp_path / "bare", {"reader.yml": bare}).run(passing)) == [
        "Invalid secret, API_KEY is not defined in the referenced workflow.",
        "Invalid secret, EXTRA is not defined in the referenced workflow.",
    ]


# --- 3. inputs -----------------------------------------------------------------------------------------
TYPED = called("""
    on:
      workflow_call:
        inputs:
          name: {type: string, required: true}
          dry-run: {type: boolean, default: false}
          minutes: {type: number, default: 30}
    jobs:
      echo:
        runs-on: ubuntu-24.04
        env: {NAME: "${{ inputs.name }}", DRY: "${{ inputs.dry-run }}", MINUTES: "${{ inputs.minutes }}"}
        steps: [{run: echo typed}]
""")
CALL_TYPED = """
    on: workflow_dispatch
    jobs:
      call:
        uses: octo/tools/.github/workflows/typed.yml@main
        with: WITH
"""


@pytest.mark.parametrize(
    ("with_", "errors"),
    [
        ("{name: a, colour: blue}", ["Invalid input, colour is not defined in the referenced workflow."]),
        ("{dry-run: true}", ["Input name is required, but not provided while calling."]),
        ("{name: a, dry-run: 'yes'}", ["Unexpected value 'yes'"]),
        ("{name: a, dry-run: 'true'}", ["Unexpected value 'true'"]),
        ("{name: a, minutes: '30'}", ["Unexpected value '30'"]),
    ],
)
def test_an_input_the_called_workflow_does_not_declare_or_misses_is_a_load_error(tmp_path, with_, errors):
    calls = Calls(tmp_path, {"typed.yml": TYPED})
    assert refused(calls.run(CALL_TYPED.replace("WITH", with_))) == errors


def test_declared_inputs_are_passed_typed_whatever_their_case(tmp_path):
    calls = Calls(tmp_path, {"typed.yml": TYPED})
    result = ran(calls.run(CALL_TYPED.replace("WITH", "{NAME: a, dry-run: true, minutes: '${{ 7 }}'}")))
    assert result.jobs["call/echo"].env == {"NAME": "a", "DRY": "true", "MINUTES": "7"}


def test_a_called_workflow_reading_what_it_does_not_declare_is_refused_as_actionlint_does(tmp_path):
    careless = called("""
        on:
          workflow_call:
            inputs:
              name: {type: string, default: x}
            secrets:
              API_KEY: {required: false}
        jobs:
          echo:
            if: inputs.verbose || github.event.inputs.other == ''
            runs-on: ubuntu-24.04
            env:
              NAME: ${{ inputs.name }}
              MODE: ${{ inputs['mode'] }}
              KEY: ${{ secrets.OTHER_KEY }}
              TOKEN: ${{ secrets.github_token }}
              TEXT: ${{ format('inputs.{0}', 'unread') }}
            steps: [{run: echo careless}]
    """)
    calls = Calls(tmp_path, {"careless.yml": careless})
    caller = """
        on: workflow_dispatch
        jobs:
          call:
            uses: octo/tools/.github/workflows/careless.yml@main
            secrets: inherit
    """
    uses = "octo/tools/.github/workflows/careless.yml@main"
    result = calls.run(caller)
    assert result.conclusion == "startup_failure" and result.jobs == {}
    assert result.startup_errors == [], "GitHub itself loads it: these are actionlint's"
    secrets = (
        "{actions_runner_debug: string; actions_step_debug: string; api_key: string; github_token: string}"
    )
    assert result.lint_errors == [
        f'{uses}: property "verbose" is not defined in object type {{name: string}} [expression]',
        f'{uses}: property "mode" is not defined in object type {{name: string}} [expression]',
        f'{uses}: property "other_key" is not defined in object type {secrets} [expression]',
    ]
    # not strict: it runs as on GitHub: an undeclared input is empty, an inherited secret is there
    lenient = calls.run(caller, strict=False, secrets={"OTHER_KEY": "o"})
    assert lenient.conclusion == "success" and len(lenient.lint_errors) == 3
    assert lenient.jobs["call/echo"].env["MODE"] == "" and lenient.jobs["call/echo"].env["KEY"] == "o"


def test_a_called_workflow_that_declares_no_secrets_may_read_inherited_ones(tmp_path):
    inheriting = called("""
        on: workflow_call
        jobs:
          echo:
            runs-on: ubuntu-24.04
            env: {KEY: "${{ secrets.ANY_KEY }}"}
            steps: [{run: echo inheriting}]
    """)
    calls = Calls(tmp_path, {"inheriting.yml": inheriting})
    caller = """
        on: workflow_dispatch
        jobs:
          call:
            uses: octo/tools/.github/workflows/inheriting.yml@main
            secrets: inherit
    """
    assert ran(calls.run(caller, secrets={"ANY_KEY": "a"})).jobs["call/echo"].env == {"KEY": "a"}


def test_a_workflow_without_a_workflow_call_trigger_cannot_be_called(tmp_path):
    pushed = called("""
        on: push
        jobs:
          job:
            runs-on: ubuntu-24.04
            steps: [{run: echo pushed}]
    """)
    calls = Calls(tmp_path, {"pushed.yml": pushed})
    caller = caller_with("", uses="octo/tools/.github/workflows/pushed.yml@main")
    assert refused(calls.run(caller)) == ["workflow_call key is not defined in the referenced workflow."]


def test_github_stops_at_the_first_call_that_does_not_load(tmp_path):
    calls = Calls(tmp_path, {"writer.yml": WRITER, "typed.yml": TYPED})
    caller = """
        on: workflow_dispatch
        jobs:
          first:
            uses: octo/tools/.github/workflows/typed.yml@main
            with: {colour: blue}
          second:
            uses: octo/tools/.github/workflows/writer.yml@main
            permissions: {}
    """
    assert refused(calls.run(caller)) == [
        "Input name is required, but not provided while calling.",
        "Invalid input, colour is not defined in the referenced workflow.",
    ]


# --- 4. which events start a run -----------------------------------------------------------------------
def test_events_made_with_the_github_token_start_no_run_but_dispatches_do():
    on = workflow("""
        on:
          issue_comment: {types: [created]}
          issues: {types: [opened]}
          workflow_dispatch:
          repository_dispatch:
          schedule: [{cron: "17 * * * *"}]
        jobs: {}
    """)
    created = {"action": "created"}
    assert "GITHUB_TOKEN" in start_decision(on, "issue_comment", created, "github-token")
    assert "GITHUB_TOKEN" in start_decision(on, "issues", {"action": "opened"}, "github-token")
    assert start_decision(on, "workflow_dispatch", {}, "github-token") == ""
    assert start_decision(on, "repository_dispatch", {"action": "go"}, "github-token") == ""
    assert start_decision(on, "issue_comment", created, "app") == ""
    assert start_decision(on, "issue_comment", created, "user") == ""
    assert start_decision(on, "issue_comment", {"action": "edited"}, "user") != ""
    assert start_decision(on, "push", {}, "user") == "the workflow has no `on: push` trigger"
    with pytest.raises(ValueError, match="actor"):
        start_decision(on, "push", {}, "bot")


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


def every_step(workflow: dict[str, Any]) -> set[str]:
    """The ids the runner gives every step (substituted: the jobs run through their `if:`s, no step runs)."""
    return {
        step.get("id") or f"step{index}"
        for job in workflow["jobs"].values()
        for index, step in enumerate(job.get("steps") or [])
    }


@pytest.mark.github_spec
def test_what_rounds_writes_with_the_workflow_token_starts_no_run_and_a_persons_comment_does(fake, tmp_path):
    """rounds' own replies and issues are made with the workflow's token: on GitHub they start no run of any
    workflow (no loop), while a person's comment does."""

    def post(path: str, body: dict[str, Any], token: str = TOKEN) -> dict[str, Any]:
        answer = requests.post(
            f"{fake.base_url}/repos/{REPOSITORY}/{path}",
            json=body,
            headers={"Authorization": f"token {token}"},
            timeout=5,
        )
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    repository = json.loads((EVENTS / "repository.json").read_text())
    issue = post("issues", {"title": "boom", "body": "sig_a", "labels": ["rounds"]})
    reply = post(f"issues/{issue['number']}/comments", {"body": "@alice: ignored until tomorrow"})
    person = fake.comment(issue["number"], "/rounds status", user="alice")
    fake.add_token("ghs_app_token", login="rounds-app[bot]", issues="write")
    app = post(f"issues/{issue['number']}/comments", {"body": "from the app"}, token="ghs_app_token")

    def comment_event(comment: dict[str, Any]) -> dict[str, Any]:
        issue_now = fake.state.issue_json(fake.repo, fake.repo.issues[issue["number"]])
        sender = fake.state.user(comment["user"]["login"])
        return {
            "action": "created",
            "issue": issue_now,
            "comment": comment,
            "repository": repository,
            "sender": sender,
        }

    rounds = parse((FIXTURES / "rounds-before-split.yml").read_text())
    runner = WorkflowRunner(rounds, tmp_path / "workspace", actions={}, substitute=every_step(rounds))
    (tmp_path / "workspace").mkdir()
    before = len(fake.exchanges)

    bots = runner.run(
        "issue_comment", comment_event(reply), github=GITHUB, actor=event_actor(reply["user"]["login"])
    )
    assert (
        reply["user"]["login"] == "github-actions[bot]"
        and event_actor("github-actions[bot]") == "github-token"
    )
    assert not bots.started and bots.conclusion is None and bots.jobs == {} and "GITHUB_TOKEN" in bots.reason

    persons_comment = fake.state.comment_json(fake.repo, person)
    persons = runner.run(
        "issue_comment", comment_event(persons_comment), github=GITHUB, actor=event_actor("alice")
    )
    assert persons.started and persons.conclusion == "success"
    assert not persons.jobs["acknowledge"].skipped and not persons.jobs["round"].skipped

    apps = runner.run(
        "issue_comment", comment_event(app), github=GITHUB, actor=event_actor("rounds-app[bot]")
    )
    assert apps.started and apps.conclusion == "skipped", "an App's comment starts a run (its jobs skip Bots)"
    assert len(fake.exchanges) == before, "no run reached GitHub"

    # the issue rounds opened with the workflow's token starts no run of a workflow on `issues: opened`
    triage = workflow("""
        on: {issues: {types: [opened]}}
        jobs:
          triage:
            runs-on: ubuntu-24.04
            steps: [{run: echo triage}]
    """)
    opened = {"action": "opened", "issue": issue, "repository": repository, "sender": issue["user"]}
    triaging = WorkflowRunner(triage, tmp_path / "workspace", actions={})
    assert not triaging.run(
        "issues", opened, github=GITHUB, actor=event_actor(issue["user"]["login"])
    ).started
    assert triaging.run("issues", opened, github=GITHUB, actor="app").jobs["triage"].status == "success"


# --- the README's caller before the fix job moved out ------------------------------------------------------
@pytest.fixture
def before_split(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """The old caller, with OWNER/rounds and COMMIT_SHA filled in, calling the old rounds.yml committed to a
    local `octo/rounds` (as workflow_harness.commit_sources commits today's)."""
    old = (FIXTURES / "rounds-before-split.yml").read_text(encoding="utf-8")
    sources = commit_files(tmp_path / "octo-rounds", {".github/workflows/rounds.yml": old})
    text = (FIXTURES / "readme-caller-before-split.yml").read_text(encoding="utf-8")
    caller = parse(text.replace("OWNER/rounds", sources.repository).replace("COMMIT_SHA", sources.sha))
    (tmp_path / "work" / "app").mkdir(parents=True)
    return caller, sources.path


def old_runner(tmp_path: Path, caller: dict[str, Any], source: Path, **options: Any) -> WorkflowRunner:
    called_jobs = parse((FIXTURES / "rounds-before-split.yml").read_text(encoding="utf-8"))
    return WorkflowRunner(
        caller,
        tmp_path / "work" / "app",
        actions={},
        repositories={"octo/rounds": source},
        substitute=every_step(called_jobs),  # whatever starts, no step runs
        **options,
    )


def test_the_readme_caller_before_the_split_never_starts(tmp_path, before_split):
    caller, source = before_split
    uses = caller["jobs"]["rounds"]["uses"]
    expected = [
        f"Error calling workflow '{uses}'. The nested job 'fix' is requesting "
        "'contents: write, pull-requests: write', but is only allowed 'contents: read, pull-requests: none'."
    ]
    comment = {"action": "created", "comment": {"body": "/rounds status", "user": {"type": "User"}}}
    for default in ("restricted", "permissive"):
        runner = old_runner(tmp_path, caller, source, default_permissions=default)
        for event, payload in (("schedule", {}), ("workflow_dispatch", {}), ("issue_comment", comment)):
            assert refused(runner.run(event, payload, github=GITHUB)) == expected, (default, event)


def test_across_owners_the_old_callers_inherit_leaves_the_signoz_key_empty(tmp_path, before_split):
    caller, source = before_split
    # granted what the fix job asks, the old caller starts: then what `secrets: inherit` passes shows
    caller["jobs"]["rounds"]["permissions"].update({"contents": "write", "pull-requests": "write"})
    secrets = {"SIGNOZ_API_KEY": "signoz-key", "ZULIP_API_KEY": "zulip-key"}
    same = old_runner(tmp_path, caller, source).run("schedule", {}, github=GITHUB, secrets=secrets)
    assert ran(same).jobs["rounds/round"].env["SIGNOZ_API_KEY"] == "signoz-key"
    other = old_runner(tmp_path, caller, source, owner="acme").run(
        "schedule", {}, github=GITHUB, secrets=secrets
    )
    round_job = ran(other).jobs["rounds/round"]
    assert round_job.env["SIGNOZ_API_KEY"] == round_job.env["ZULIP_API_KEY"] == "", "empty, not an error"
    assert round_job.env["ANTHROPIC_API_KEY"] == ""


# --- the README's caller today, fix jobs included ----------------------------------------------------------
@pytest.fixture
def after_split(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """Today's README caller with its fix jobs appended, calling today's rounds.yml and fix actions."""
    files = {
        ".github/workflows/rounds.yml": (ROOT / ".github" / "workflows" / "rounds.yml").read_text("utf-8"),
        **{
            f"fix/{stage}/action.yml": (ROOT / "fix" / stage / "action.yml").read_text("utf-8")
            for stage in ("edit", "test", "publish")
        },
    }
    sources = commit_files(tmp_path / "octo-rounds", files)
    caller_text, fix_job = readme_workflows()[:2]
    text = (caller_text + fix_job).replace("OWNER/rounds", sources.repository)
    caller = parse(text.replace("COMMIT_SHA", sources.sha))
    (tmp_path / "work" / "app").mkdir(parents=True)
    return caller, sources.path


def test_the_readme_caller_today_starts_for_every_event_under_either_default(tmp_path, after_split):
    caller, source = after_split
    called_jobs = parse((ROOT / ".github" / "workflows" / "rounds.yml").read_text(encoding="utf-8"))
    comment = {"action": "created", "comment": {"body": "/rounds status", "user": {"type": "Bot"}}}
    for default in ("restricted", "permissive"):
        runner = WorkflowRunner(
            caller,
            tmp_path / "work" / "app",
            actions={},
            repositories={"octo/rounds": source},
            substitute=every_step(called_jobs) | every_step(caller),
            default_permissions=default,
            owner="acme",  # a team outside the organisation that hosts rounds
        )
        for event, payload in (("schedule", {}), ("workflow_dispatch", {}), ("issue_comment", comment)):
            result = runner.run(event, payload, github=GITHUB, secrets={"SIGNOZ_API_KEY": "signoz-key"})
            assert result.startup_errors == [] and result.lint_errors == [], (default, event, result)
            assert result.conclusion in ("success", "skipped"), (default, event, result.conclusion)
            if event == "schedule":
                round_job = result.jobs["rounds/round"]
                # passed by name, it crosses owners (to the step that uses it: the job's env holds no key)
                assert round_job.steps["round"].env["SIGNOZ_API_KEY"] == "signoz-key"
                for job in ("fix-edit", "fix-publish"):
                    assert not result.jobs[job].skipped, f"{job} runs after a successful round"


def test_the_readme_callers_fix_jobs_join_the_queue_only_for_an_authorised_comment(tmp_path):
    """The README caller's fix jobs run on `/rounds fix` comments too, in the `rounds-state` group: they take
    the called workflow's `authorised` output (its acknowledge job's), so a stranger's comment joins no
    queue, in the called workflow or in the caller, and a collaborator's does. Schedules run as before. (The
    acknowledge step stands in here: `alice` may give commands, anyone else not.)"""
    decide = (
        "python3 -c \"import json, os; e = json.load(open(os.environ['GITHUB_EVENT_PATH'])); "
        "print('authorised=' + str(e['comment']['user']['login'] == 'alice').lower())\" >> \"$GITHUB_OUTPUT\""
    )
    called_text = (ROOT / ".github" / "workflows" / "rounds.yml").read_text("utf-8")
    assert called_text.count("run: rounds command --acknowledge") == 1
    files = {
        ".github/workflows/rounds.yml": called_text.replace(
            "run: rounds command --acknowledge", f"run: {json.dumps(decide)}"
        ),
        **{
            f"fix/{stage}/action.yml": (ROOT / "fix" / stage / "action.yml").read_text("utf-8")
            for stage in ("edit", "test", "publish")
        },
    }
    sources = commit_files(tmp_path / "octo-rounds", files)
    caller_text, fix_job = readme_workflows()[:2]
    text = (caller_text + fix_job).replace("OWNER/rounds", sources.repository)
    caller = parse(text.replace("COMMIT_SHA", sources.sha))
    workspace = tmp_path / "work" / "app"
    workspace.mkdir(parents=True)
    runner = WorkflowRunner(
        caller,
        workspace,
        actions={},
        repositories={"octo/rounds": sources.path},
        substitute=(every_step(parse(called_text)) | every_step(caller)) - {"acknowledge"},
    )

    def comment(login: str) -> dict[str, Any]:
        return {
            "action": "created",
            "comment": {"body": "/rounds fix", "user": {"login": login, "type": "User"}},
        }

    stranger = runner.run("issue_comment", comment("mallory"), github=GITHUB)
    assert stranger.jobs["rounds/acknowledge"].outputs == {"authorised": "false"}, stranger.jobs
    assert stranger.joined("rounds-state") == []
    assert stranger.jobs["rounds/round"].skipped and stranger.jobs["fix-edit"].skipped

    collaborator = runner.run("issue_comment", comment("alice"), github=GITHUB)
    assert collaborator.jobs["rounds/acknowledge"].outputs == {"authorised": "true"}
    assert collaborator.joined("rounds-state") == ["rounds/round", "fix-edit", "fix-publish"]

    scheduled = runner.run("schedule", {}, github=GITHUB)
    assert scheduled.jobs["rounds/acknowledge"].skipped
    assert scheduled.joined("rounds-state") == ["rounds/round", "fix-edit", "fix-publish"]
