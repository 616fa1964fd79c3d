"""The YAML blocks of docs/*.md are checked as the README's are: a block is put where it goes in the README's
workflow (`workflow_harness.in_readme_caller`: a workflow as it is, jobs after step 4's, steps in place of the
README's step that uses the same rounds action), and the result must pass the workflow schema and actionlint
and load under GitHub's load-time rules (`workflow_load`). A block that replaces a README step must pass it
every input the README's step passes (besides its own), each one the action declares: a doc snippet cannot
drift from the README again (docs/fixes.md's App-token block once left out `saved-database`, so `fix/publish`
stopped at once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from workflow_files import parse
from workflow_harness import (
    ROOT,
    actionlint,
    check_schema,
    commit_files,
    docs_workflow_blocks,
    in_readme_caller,
    readme_workflows,
)
from workflow_runner import WorkflowRunner

BLOCKS = docs_workflow_blocks()
GITHUB = {"repository": "octo/app", "token": "ghs_workflow_token"}


def uses_steps(workflow: dict[str, Any], uses: str) -> list[dict[str, Any]]:
    return [
        step
        for job in workflow["jobs"].values()
        for step in job.get("steps") or []
        if str(step.get("uses", "")).split("@", 1)[0] == uses
    ]


def problems(block: str) -> list[str]:
    """What is wrong with a docs block that replaces a step of the README's workflow (nothing: [])."""
    whole, uses = in_readme_caller(block)
    if uses is None:
        return []
    caller, fragment = readme_workflows()[:2]
    [readme_step] = uses_steps(parse(caller + fragment), uses)
    [doc_step] = uses_steps(parse(whole), uses)
    declared = yaml.safe_load((ROOT / uses.removeprefix("OWNER/rounds/") / "action.yml").read_text("utf-8"))
    given, wanted = set(doc_step.get("with") or {}), set(readme_step.get("with") or {})
    found = [f"{uses}: leaves out {name}, which README step 4 passes" for name in sorted(wanted - given)]
    found += [f"{uses}: {name} is no input of the action" for name in sorted(given - set(declared["inputs"]))]
    return found


def test_the_docs_hold_workflow_blocks():
    assert [name for name, _ in BLOCKS] == ["fixes.md block 1"]
    assert in_readme_caller(BLOCKS[0][1])[1] == "OWNER/rounds/fix/publish"


@pytest.mark.parametrize(("name", "block"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_a_docs_block_passes_every_input_the_readmes_step_passes(name, block):
    assert problems(block) == [], name


def test_a_docs_block_that_drops_an_input_is_caught():
    """The App-token block as it was: no `saved-database` (and no `state-key`)."""
    [block] = [block for name, block in BLOCKS if name == "fixes.md block 1"]
    before = "".join(line for line in block.splitlines(keepends=True) if "saved-database" not in line)
    before = "".join(line for line in before.splitlines(keepends=True) if "state-key" not in line)
    assert problems(before) == [
        "OWNER/rounds/fix/publish: leaves out saved-database, which README step 4 passes",
        "OWNER/rounds/fix/publish: leaves out state-key, which README step 4 passes",
    ]
    assert problems(block.replace("verdict:", "verdicts:")) == [
        "OWNER/rounds/fix/publish: leaves out verdict, which README step 4 passes",
        "OWNER/rounds/fix/publish: verdicts is no input of the action",
    ]


def test_the_docs_blocks_in_place_pass_the_schema_and_actionlint(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for number, (_, block) in enumerate(BLOCKS):
        (folder / f"docs-{number + 1}.yml").write_text(in_readme_caller(block)[0], encoding="utf-8")
    files = sorted(folder.glob("*.yml"))
    schema = check_schema("vendor.github-workflows", files)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    linted = actionlint(tmp_path)
    assert linted.returncode == 0 and f"Checking {len(files)} workflow file(s)" in linted.stdout, (
        linted.stdout
    )


@pytest.mark.parametrize(("name", "block"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_the_docs_blocks_in_place_load_under_githubs_rules(tmp_path, name, block):
    files = {
        ".github/workflows/rounds.yml": (ROOT / ".github" / "workflows" / "rounds.yml").read_text("utf-8"),
        **{
            f"fix/{stage}/action.yml": (ROOT / "fix" / stage / "action.yml").read_text("utf-8")
            for stage in ("edit", "test", "publish")
        },
    }
    sources = commit_files(tmp_path / "octo-rounds", files)
    text = in_readme_caller(block)[0].replace("OWNER/rounds", sources.repository)
    caller = parse(text.replace("COMMIT_SHA", sources.sha))
    workspace = tmp_path / "work" / "app"
    workspace.mkdir(parents=True)
    steps = {
        step.get("id") or f"step{index}"
        for workflow in (caller, parse(files[".github/workflows/rounds.yml"]))
        for job in workflow["jobs"].values()
        for index, step in enumerate(job.get("steps") or [])
    }
    runner = WorkflowRunner(
        caller, workspace, actions={}, repositories={sources.repository: Path(sources.path)}, substitute=steps
    )
    result = runner.run("schedule", {}, github=GITHUB)
    assert result.startup_errors == [] and result.lint_errors == [], (name, result)
    assert result.conclusion == "success", name
    assert all(not result.jobs[job].skipped for job in ("fix-edit", "fix-publish")), name
