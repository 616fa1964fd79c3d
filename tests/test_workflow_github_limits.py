"""GitHub's limits on a workflow and the workflows it calls, in the local workflow runner (`workflow_limits`,
where each rule cites GitHub's docs): how deep calls nest, how inputs are declared, how often a schedule
runs, which concurrency groups deadlock between a caller and the workflow it calls, and which `env:` reaches
a called workflow. Each rule is shown refusing a broken workflow and letting a good one (and rounds') run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_workflow_load_rules import GITHUB, Calls, called, every_step, ran, refused
from workflow_files import parse
from workflow_harness import ROOT, commit_files, readme_workflows
from workflow_limits import schedule_interval_minutes
from workflow_runner import WorkflowRunner

STEP = "steps: [{run: echo ok}]"
TOOLS = "octo/tools/.github/workflows"


def chain(levels: int) -> dict[str, str]:
    """Called workflows l1.yml .. l<levels>.yml of octo/tools, each calling the next; the last runs a job."""
    files = {}
    for level in range(1, levels + 1):
        last = level == levels
        job = f"{{runs-on: ubuntu-24.04, {STEP}}}" if last else f"{{uses: {TOOLS}/l{level + 1}.yml@main}}"
        files[f"l{level}.yml"] = f"on: workflow_call\njobs:\n  next: {job}\n"
    return files


CALL_L1 = """
    on: workflow_dispatch
    jobs:
      call:
        uses: octo/tools/.github/workflows/l1.yml@main
"""


# --- nesting -----------------------------------------------------------------------------------------------
def test_ten_levels_of_workflows_load_and_an_eleventh_does_not(tmp_path):
    assert ran(Calls(tmp_path / "ten", chain(9)).run(CALL_L1)).jobs[
        "call/next/next/next/next/next/next/next/next/next"
    ]
    errors = refused(Calls(tmp_path / "eleven", chain(10)).run(CALL_L1))
    assert errors == [
        "Error calling workflow 'octo/tools/.github/workflows/l10.yml@main'. "
        "Reusable workflows can be nested at most 10 levels deep (the caller and 9 called workflows)."
    ]


def test_an_enterprise_server_allows_four_levels(tmp_path):
    assert ran(Calls(tmp_path / "four", chain(3)).run(CALL_L1, max_levels=4))
    errors = refused(Calls(tmp_path / "five", chain(4)).run(CALL_L1, max_levels=4))
    assert errors == [
        "Error calling workflow 'octo/tools/.github/workflows/l4.yml@main'. "
        "Reusable workflows can be nested at most 4 levels deep (the caller and 3 called workflows)."
    ]


# --- how inputs are declared -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("{default: x}", "Required property is missing: type"),
        ("{type: choice, options: [a, b]}", "Unexpected value 'choice'"),
        ("{type: environment}", "Unexpected value 'environment'"),
    ],
)
def test_a_workflow_call_input_must_be_typed_boolean_number_or_string(tmp_path, spec, error):
    typed = called(f"""
        on:
          workflow_call:
            inputs:
              colour: {spec}
        jobs:
          job: {{runs-on: ubuntu-24.04, {STEP}}}
    """)
    caller = """
        on: workflow_dispatch
        jobs:
          call: {uses: octo/tools/.github/workflows/typed.yml@main}
    """
    assert refused(Calls(tmp_path, {"typed.yml": typed}).run(caller)) == [
        f"error parsing called workflow '{TOOLS}/typed.yml@main': input 'colour': {error}"
    ]


def dispatch_caller(inputs: list[str]) -> str:
    """A workflow of octo/app started by workflow_dispatch with these `name: spec` inputs."""
    lines = "\n".join(f"      {line}" for line in inputs)
    return (
        f"on:\n  workflow_dispatch:\n    inputs:\n{lines}\njobs:\n  job: {{runs-on: ubuntu-24.04, {STEP}}}\n"
    )


def no_calls(tmp_path: Path) -> Calls:
    """A runner for workflows that call nothing (octo/tools holds one unused workflow)."""
    return Calls(tmp_path, {"unused.yml": "on: workflow_call\njobs: {}\n"})


def test_a_workflow_dispatch_takes_at_most_25_inputs(tmp_path):
    calls = no_calls(tmp_path)
    inputs = [f"i{n}: {{type: string}}" for n in range(26)]
    assert ran(calls.run(dispatch_caller(inputs[:25])))
    assert refused(calls.run(dispatch_caller(inputs))) == [
        "Invalid workflow file: you may only define up to 25 `inputs` for a `workflow_dispatch` event"
    ]


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("{type: list}", "input 'i': Unexpected value 'list'"),
        ("{type: choice}", "input 'i': Required property is missing: options"),
    ],
)
def test_a_workflow_dispatch_input_has_one_of_githubs_five_types(tmp_path, spec, error):
    calls = no_calls(tmp_path)
    for good in ("{type: choice, options: [a]}", "{type: environment}", "{type: number}", "{}"):
        assert ran(calls.run(dispatch_caller([f"i: {good}"])))
    assert refused(calls.run(dispatch_caller([f"i: {spec}"]))) == [f"Invalid workflow file: {error}"]


def test_rounds_and_the_readme_caller_declare_their_inputs_as_github_requires():
    from workflow_limits import input_declaration_errors

    for text in (readme_workflows()[0], (ROOT / ".github" / "workflows" / "rounds.yml").read_text("utf-8")):
        assert input_declaration_errors(parse(text)) == []


# --- schedules -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cron", "minutes"),
    [
        ("17,47 * * * *", 30),
        ("*/5 * * * *", 5),
        ("* * * * *", 1),
        ("0-10/2 3 * * *", 2),
        ("59,1 * * * *", 2),  # across the hour
        ("30 4 * * 1", 1440),  # one a day is what this model measures at most
        ("0 22,2 * * *", 240),  # across midnight
    ],
)
def test_a_schedules_shortest_interval(cron, minutes):
    assert schedule_interval_minutes(cron) == minutes


def test_a_schedule_more_often_than_every_five_minutes_is_refused_as_actionlint_refuses_it(tmp_path):
    calls = no_calls(tmp_path)
    often = f"""
        on:
          schedule: [{{cron: "*/2 * * * *"}}]
        jobs:
          job: {{runs-on: ubuntu-24.04, {STEP}}}
    """
    result = calls.run(often, event="schedule")
    assert result.conclusion == "startup_failure" and result.jobs == {}
    assert result.lint_errors == [
        "scheduled job runs too frequently. it runs once per 120 seconds. the shortest interval is once "
        'every 5 minutes [events] (cron "*/2 * * * *")'
    ]
    assert ran(calls.run(often.replace("*/2", "*/5"), event="schedule"))


def test_rounds_and_the_readme_caller_run_at_most_every_five_minutes():
    for text in (readme_workflows()[0], (ROOT / ".github" / "workflows" / "rounds.yml").read_text("utf-8")):
        for entry in parse(text)["on"]["schedule"]:
            assert schedule_interval_minutes(entry["cron"]) >= 5


# --- concurrency between a caller and the workflow it calls ------------------------------------------------
JOINS_STATE = called(f"""
    on: workflow_call
    jobs:
      round:
        runs-on: ubuntu-24.04
        concurrency: {{group: rounds-state, cancel-in-progress: false}}
        {STEP}
""")


@pytest.mark.parametrize(
    ("top", "job", "holder"),
    [
        ("concurrency: rounds-state", "", "top level workflow"),
        ("concurrency: {group: ROUNDS-state}", "", "top level workflow"),  # names match without case
        ("", "concurrency: {group: rounds-state}", "call"),
    ],
)
def test_a_called_job_in_a_group_its_caller_holds_is_cancelled_as_a_deadlock(tmp_path, top, job, holder):
    caller = f"""
        on: workflow_dispatch
        {top}
        jobs:
          call:
            uses: octo/tools/.github/workflows/state.yml@main
            {job}
    """
    result = Calls(tmp_path, {"state.yml": JOINS_STATE}).run(caller)
    cancelled = result.jobs["call/round"]
    assert cancelled.status == "cancelled" and result.conclusion == "cancelled"
    assert cancelled.annotations == [
        "Canceling since a deadlock for concurrency group 'rounds-state' was detected between "
        f"'{holder}' and 'round'"
    ]
    assert cancelled.steps == {} and result.joined("rounds-state") == []


def test_a_called_workflows_own_concurrency_equal_to_its_callers_cancels_the_calling_job(tmp_path):
    own = JOINS_STATE.replace("on: workflow_call\n", "on: workflow_call\nconcurrency: rounds-state\n")
    caller = """
        on: workflow_dispatch
        concurrency: rounds-state
        jobs:
          call: {uses: octo/tools/.github/workflows/state.yml@main}
    """
    result = Calls(tmp_path, {"state.yml": own}).run(caller)
    assert result.conclusion == "cancelled"
    assert result.jobs["call"].annotations == [
        "Canceling since a deadlock for concurrency group 'rounds-state' was detected between "
        "'top level workflow' and 'call'"
    ]
    assert "call/round" not in result.jobs


def test_a_job_of_the_caller_after_the_call_may_join_the_same_group(tmp_path):
    caller = f"""
        on: workflow_dispatch
        jobs:
          call: {{uses: octo/tools/.github/workflows/state.yml@main}}
          after:
            needs: call
            runs-on: ubuntu-24.04
            concurrency: {{group: rounds-state, cancel-in-progress: false}}
            {STEP}
    """
    result = ran(Calls(tmp_path, {"state.yml": JOINS_STATE}).run(caller))
    assert result.joined("rounds-state") == ["call/round", "after"]


@pytest.fixture
def readme_caller(tmp_path: Path) -> tuple[str, Path, dict[str, Any]]:
    """The README caller's text (without fix jobs), rounds.yml committed to octo/rounds, and its jobs."""
    text = (ROOT / ".github" / "workflows" / "rounds.yml").read_text("utf-8")
    sources = commit_files(tmp_path / "octo-rounds", {".github/workflows/rounds.yml": text})
    caller = readme_workflows()[0].replace("OWNER/rounds", sources.repository)
    (tmp_path / "work" / "app").mkdir(parents=True)
    return caller.replace("COMMIT_SHA", sources.sha), sources.path, parse(text)


def test_the_readme_caller_with_its_own_rounds_state_group_would_never_run_a_round(tmp_path, readme_caller):
    caller, source, called_jobs = readme_caller

    def run(text: str) -> Any:
        runner = WorkflowRunner(
            parse(text),
            tmp_path / "work" / "app",
            actions={},
            repositories={"octo/rounds": source},
            substitute=every_step(called_jobs),
        )
        return runner.run("schedule", {}, github=GITHUB)

    assert ran(run(caller)).joined("rounds-state") == ["rounds/round"]
    grouped = run(caller.replace("permissions: {}\n", "permissions: {}\nconcurrency: rounds-state\n", 1))
    assert grouped.jobs["rounds/round"].status == "cancelled" and grouped.conclusion == "cancelled"


# --- env ---------------------------------------------------------------------------------------------------
def test_the_callers_workflow_env_reaches_its_own_jobs_and_not_the_called_workflows(tmp_path):
    reads = called("""
        on: workflow_call
        env: {OWN: called-own}
        jobs:
          job:
            runs-on: ubuntu-24.04
            steps: [{id: show, run: 'echo "seen=${FROM_CALLER:-unset} ${OWN}" >> "$GITHUB_OUTPUT"'}]
    """)
    caller = """
        on: workflow_dispatch
        env: {FROM_CALLER: "${{ github.repository }}"}
        jobs:
          mine:
            runs-on: ubuntu-24.04
            steps: [{id: show, run: 'echo "seen=$FROM_CALLER" >> "$GITHUB_OUTPUT"'}]
          call: {uses: octo/tools/.github/workflows/reads.yml@main}
    """
    result = ran(Calls(tmp_path, {"reads.yml": reads}).run(caller))
    assert result.jobs["mine"].steps["show"].outputs == {"seen": "octo/app"}
    assert result.jobs["call/job"].steps["show"].outputs == {"seen": "unset called-own"}
