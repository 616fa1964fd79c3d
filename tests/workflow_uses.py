"""What a `uses:` names, for the local workflow runner: a reusable workflow or a composite action, read from a
local git repository at a ref as GitHub reads them from the named repository, and the inputs they get.

    called = called_workflow(repositories, "octo/rounds/.github/workflows/rounds.yml@<sha>")
    called.workflow, called.inputs and called.secrets (declared under on.workflow_call), called.callable,
    called.identity (job.workflow_* of its jobs)
    folder = action_folder(repositories, "octo/rounds@<sha>", workspace)  # unpacked under _actions/, or None
    action = composite_action(folder, uses)
    call_inputs(declared, with_, contexts, uses), action_inputs(declared, with_, contexts, uses)

A called workflow's inputs are typed (boolean, number, string), an action's are strings. Which inputs and
secrets a call may pass, and which it must, GitHub checks when it loads the workflow, before any job runs:
`workflow_load` does, and `call_inputs` only fills in the values. An input an action does not declare is an
error here, and a required one missing too.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from workflow_expressions import interpolate
from workflow_files import parse


@dataclass(frozen=True)
class CalledWorkflow:
    workflow: dict[str, Any]
    inputs: dict[str, Any]  # as declared under on.workflow_call.inputs
    identity: dict[str, str]  # job.workflow_repository, workflow_sha, workflow_ref, workflow_file_path
    secrets: dict[str, Any] | None = None  # as declared under on.workflow_call.secrets; None: no such key
    callable: bool = True  # it has a workflow_call trigger

    @property
    def triggers(self) -> dict[str, Any]:
        return triggers(self.workflow)


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    """A workflow's `on:` as a mapping of event name to its settings (None where it has none)."""
    on = workflow.get("on") or {}
    if isinstance(on, dict):
        return on
    return dict.fromkeys([on] if isinstance(on, str) else on)


def owner_of(uses: str) -> str:
    """The owner of the repository a `uses:` names (`octo/rounds/...@ref` -> `octo`); "" for `./...`."""
    return "" if uses.startswith("./") else uses.split("/", 1)[0]


def called_workflow(repositories: dict[str, Path], uses: str) -> CalledWorkflow:
    """`owner/name/.github/workflows/file.yml@ref`, read at the commit `ref` names."""
    repository, _, rest = uses.partition("/.github/")
    path, _, ref = f".github/{rest}".partition("@")
    source = _repository(repositories, repository, uses)
    sha = _git(source, "rev-parse", f"{ref}^{{commit}}").strip()
    workflow = parse(_git(source, "show", f"{sha}:{path}"))
    on = triggers(workflow)
    call = on.get("workflow_call") or {}
    identity = {
        "workflow_repository": repository,
        "workflow_sha": sha,
        "workflow_ref": f"{repository}/{path}@{ref}",
        "workflow_file_path": path,
    }
    return CalledWorkflow(
        workflow,
        call.get("inputs") or {},
        identity,
        secrets=(call.get("secrets") or {}) if "secrets" in call else None,
        callable="workflow_call" in on,
    )


def action_folder(repositories: dict[str, Path], uses: str, workspace: Path) -> Path | None:
    """Where a composite action's files are: in the workspace (`./folder`), or unpacked from a local
    repository under `_actions/owner/name/ref` as the runner does; None for another repository's action."""
    if uses.startswith("./"):
        return workspace / uses
    name, _, ref = uses.partition("@")
    parts = name.split("/")
    repository, inside = "/".join(parts[:2]), "/".join(parts[2:])
    if repository not in repositories:
        return None
    target = workspace.parent / "_actions" / repository / ref
    if not target.exists():
        target.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(repositories[repository]), "archive", "--format=tar", ref],
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    return target / inside if inside else target


def composite_action(folder: Path, uses: str) -> dict[str, Any]:
    """The action's metadata; it must be a composite action whose scripts say `shell: bash`."""
    metadata = dict(yaml.safe_load((folder / "action.yml").read_text(encoding="utf-8")))
    if metadata["runs"].get("using") != "composite":
        raise AssertionError(f"{uses} is not a composite action")
    for step in metadata["runs"]["steps"]:
        if "run" in step and step.get("shell") != "bash":
            raise AssertionError(f"{uses}: a composite action's run step needs `shell: bash`: {step}")
    return metadata


def call_inputs(
    declared: dict[str, Any], given: dict[str, Any], contexts: dict[str, Any], uses: str
) -> dict[str, Any]:
    """A called workflow's inputs: the caller's `with:` values and the declared defaults, typed.

    The call was checked when the workflow was loaded (`workflow_load`): no undeclared input, none required
    missing. Input names are matched without case, as GitHub does.
    """
    empty: dict[str, Any] = {"string": "", "boolean": False, "number": 0}
    by_name = {name.lower(): value for name, value in given.items()}
    values: dict[str, Any] = {}
    for name, spec in declared.items():
        kind = (spec or {}).get("type", "string")
        if name.lower() in by_name:
            value = interpolate(by_name[name.lower()], contexts)
            values[name] = _typed(value, kind, f"{uses} input {name}")
        else:
            values[name] = (spec or {}).get("default", empty[kind])
    return values


def action_inputs(
    declared: dict[str, Any], given: dict[str, str], contexts: dict[str, Any], uses: str
) -> dict[str, str]:
    """A composite action's inputs: the step's `with:` values and the declared defaults, interpolated."""
    _no_stranger(declared, given, uses)
    values: dict[str, str] = {}
    for name, spec in declared.items():
        if name in given:
            values[name] = given[name]
        elif (spec or {}).get("required") and "default" not in (spec or {}):
            raise AssertionError(f"{uses} needs the input {name}")
        else:
            values[name] = interpolate((spec or {}).get("default", ""), contexts)
    return values


def _no_stranger(declared: dict[str, Any], given: dict[str, Any], uses: str) -> None:
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise AssertionError(f"{uses} has no input {', '.join(unknown)}")


def _typed(value: str, kind: str, where: str) -> Any:
    if kind == "boolean":
        if value not in ("true", "false"):
            raise AssertionError(f"{where}: {value!r} is not a boolean")
        return value == "true"
    if kind == "number":
        number = float(value)
        return int(number) if number.is_integer() else number
    return value


def _repository(repositories: dict[str, Path], repository: str, uses: str) -> Path:
    if repository not in repositories:
        raise AssertionError(f"no local repository for {uses} (give repositories={{{repository!r}: path}})")
    return repositories[repository]


def _git(repository: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repository), *args], capture_output=True, text=True, check=True
    ).stdout
