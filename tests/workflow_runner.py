"""Run a workflow's jobs the way the GitHub Actions runner would, against local fakes.

    runner = WorkflowRunner(load(".github/workflows/rounds.yml"), workspace, actions={...})
    run = runner.run("issue_comment", event_payload, secrets=..., vars=..., github={...})
    run.jobs["round"].steps["restore"].outputs, run.summary, run.jobs["acknowledge"].skipped

What it does like the runner:
- evaluates `if:` of jobs and steps (a step's `if:` without a status function means `success() && (...)`) and
  interpolates `${{ }}` in `env:` and `with:` (`workflow_expressions`), from the contexts github, inputs,
  secrets, vars, env, steps, runner and job (its status and the identity of the workflow file that defines
  it: job.workflow_repository, job.workflow_sha, job.workflow_ref, job.workflow_file_path);
- runs `run:` steps with `bash --noprofile --norc -eo pipefail`, in the workspace, with the runner's
  variables:
  GITHUB_ACTIONS, CI, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH (the payload as a file), GITHUB_OUTPUT, GITHUB_ENV,
  GITHUB_PATH, GITHUB_STEP_SUMMARY (files of each step), GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_SHA,
  GITHUB_REF, GITHUB_WORKSPACE, GITHUB_WORKFLOW_REF, GITHUB_SERVER_URL, GITHUB_API_URL, RUNNER_TEMP;
- reads step outputs (`name=value` and `name<<DELIMITER` blocks), and `GITHUB_ENV` and `GITHUB_PATH` additions
  for the job's later steps (a later PATH addition comes first);
- honours `continue-on-error`, and a failed step fails the job;
- a job that calls a reusable workflow (`uses: owner/name/.github/workflows/file.yml@ref`) runs the called
  workflow's jobs, read at that ref from a local git repository (`repositories={"owner/name": path}`): its
  inputs from `with:` and the declared defaults, typed (an undeclared input is an error, as on GitHub), its
  secrets (`inherit` or a mapping), the caller's github and vars contexts, and job.workflow_* naming the
  called file at the resolved commit. Their results are named `caller-job/called-job`;
- a step that uses a composite action (`./folder` in the workspace, or `owner/name@ref` from `repositories`,
  unpacked under `_actions/owner/name/ref` as the runner does) runs the action's steps with its inputs
  (declared defaults interpolated; an undeclared input is an error), `github.action_path` and
  `GITHUB_ACTION_PATH`, a steps context of its own, and sets the action's outputs; its own steps' results are
  in the step result's `steps`.

What it replaces: other `uses:` steps by local stand-ins given by the test
(`actions={"actions/upload-artifact": ...}`, looked up by the action's name without its ref), called with the
step's `with:` values and environment (the runner's variables and the step's GITHUB_OUTPUT, GITHUB_ENV and
GITHUB_PATH files included, which the stand-in may write like an action does); and steps whose id is in
`substitute` (e.g. an install step). With `preinstalled=True` (the default) the scripts of the Python running
the tests come first on PATH: the package under test is already installed there. With `preinstalled=False`
only PATH additions and `base_env`'s PATH count, so a workflow must install what it runs.

What it does not do: permissions, concurrency, timeouts, matrices, `needs:`, services, containers, pre
and post steps of actions.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from workflow_expressions import evaluate_condition, interpolate, truthy

ActionStandIn = Callable[[dict[str, str], dict[str, str]], None]
_NO_SHA = "0" * 40


def load(path: Path) -> dict[str, Any]:
    return parse(path.read_text(encoding="utf-8"))


def parse(text: str) -> dict[str, Any]:
    workflow = yaml.safe_load(text)
    # YAML 1.1 reads the key `on` as True
    if True in workflow:
        workflow["on"] = workflow.pop(True)
    return workflow


@dataclass
class StepResult:
    name: str
    skipped: bool = False
    outcome: str = "success"  # success | failure | skipped
    conclusion: str = "success"
    outputs: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    steps: dict[str, StepResult] = field(default_factory=dict)  # a composite action's own steps


@dataclass
class JobResult:
    name: str
    skipped: bool = False
    status: str = "success"
    steps: dict[str, StepResult] = field(default_factory=dict)
    summary: str = ""


@dataclass
class RunResult:
    temp: Path  # RUNNER_TEMP of the run
    jobs: dict[str, JobResult] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        return "\n".join(job.summary for job in self.jobs.values())


@dataclass
class _Run:
    """What every job of one run shares: the runner's variables and its temporary folder."""

    runner_env: dict[str, str]
    temp: Path


@dataclass
class _Job:
    """What the steps of one job share: the runner's variables, the job's environment and its additions."""

    name: str
    runner_env: dict[str, str]
    temp: Path
    env: dict[str, str]
    added_env: dict[str, str] = field(default_factory=dict)
    added_path: list[str] = field(default_factory=list)
    summary: str = ""
    steps_run: int = 0


@dataclass
class _StepFiles:
    """The files the runner gives one step: outputs, environment and PATH additions, summary."""

    output: Path
    env: Path
    path: Path
    summary: Path

    @classmethod
    def create(cls, job: _Job) -> _StepFiles:
        job.steps_run += 1
        stem = job.temp / f"{job.name.replace('/', '-')}-{job.steps_run}"
        files = cls(*(Path(f"{stem}.{kind}") for kind in ("output", "env", "path", "summary.md")))
        for path in (files.output, files.env, files.path):
            path.write_text("", encoding="utf-8")
        return files

    def variables(self) -> dict[str, str]:
        return {
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_ENV": str(self.env),
            "GITHUB_PATH": str(self.path),
            "GITHUB_STEP_SUMMARY": str(self.summary),
        }

    def collect(self, job: _Job) -> dict[str, str]:
        """Hand the step's environment, PATH and summary additions to the job; the step's outputs."""
        job.added_env.update(read_key_values(self.env.read_text(encoding="utf-8")))
        job.added_path.extend(line for line in self.path.read_text(encoding="utf-8").splitlines() if line)
        if self.summary.exists():
            job.summary += self.summary.read_text(encoding="utf-8")
        return read_key_values(self.output.read_text(encoding="utf-8"))


class WorkflowRunner:
    def __init__(
        self,
        workflow: dict[str, Any],
        workspace: Path,
        *,
        actions: dict[str, ActionStandIn],
        substitute: set[str] | None = None,
        base_env: dict[str, str] | None = None,
        repositories: dict[str, Path] | None = None,
        preinstalled: bool = True,
    ) -> None:
        self.workflow = workflow
        self.workspace = workspace
        self.actions = actions
        self.substitute = substitute or set()
        self.base_env = base_env or {}
        self.repositories = repositories or {}
        self.preinstalled = preinstalled
        self.run_number = 0

    def run(
        self,
        event_name: str,
        payload: dict[str, Any],
        *,
        github: dict[str, Any],
        secrets: dict[str, str] | None = None,
        vars: dict[str, str] | None = None,
        inputs: dict[str, Any] | None = None,
    ) -> RunResult:
        self.run_number += 1
        temp = self.workspace.parent / f"runner-temp-{self.run_number}"
        temp.mkdir(parents=True, exist_ok=True)
        event_path = temp / "event.json"
        event_path.write_text(json.dumps(payload), encoding="utf-8")
        contexts: dict[str, Any] = {
            "github": {
                **github,
                "event_name": event_name,
                "event": payload,
                "run_id": str(self.run_number),
                "workspace": str(self.workspace),
            },
            "secrets": {"GITHUB_TOKEN": github.get("token", ""), **(secrets or {})},
            "vars": vars or {},
            "inputs": inputs or {},
            "runner": {"temp": str(temp), "os": "Linux"},
        }
        runner_env = {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": github["repository"],
            "GITHUB_RUN_ID": str(self.run_number),
            "GITHUB_SHA": github.get("sha", _NO_SHA),
            "GITHUB_REF": github.get("ref", "refs/heads/main"),
            "GITHUB_REF_NAME": github.get("ref_name", "main"),
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_WORKFLOW_REF": github.get("workflow_ref", ""),
            "GITHUB_SERVER_URL": github.get("server_url", "https://github.com"),
            "GITHUB_API_URL": github.get("api_url", ""),
            "RUNNER_TEMP": str(temp),
        }
        workflow_ref = github.get("workflow_ref", "")
        identity = {
            "workflow_repository": github["repository"],
            "workflow_sha": github.get("sha", _NO_SHA),
            "workflow_ref": workflow_ref,
            "workflow_file_path": workflow_ref.partition("@")[0].removeprefix(f"{github['repository']}/"),
        }
        result = RunResult(temp)
        self._jobs(self.workflow, contexts, identity, _Run(runner_env, temp), result, prefix="")
        return result

    # --- jobs ---------------------------------------------------------------------------------------
    def _jobs(
        self,
        workflow: dict[str, Any],
        contexts: dict[str, Any],
        identity: dict[str, str],
        run: _Run,
        result: RunResult,
        prefix: str,
    ) -> None:
        for job_id, job in workflow["jobs"].items():
            name = f"{prefix}{job_id}"
            if "uses" in job:
                self._call(name, job, contexts, run, result)
            else:
                job_contexts = {**contexts, "job": {"status": "success", **identity}}
                result.jobs[name] = self._job(name, job, job_contexts, run)

    def _job(self, name: str, job: dict[str, Any], contexts: dict[str, Any], run: _Run) -> JobResult:
        result = JobResult(name=name)
        scope = {**contexts, "steps": {}, "env": {}}
        if "if" in job and not truthy(evaluate_condition(job["if"], scope, "success")):
            result.skipped = True
            return result
        env = {k: interpolate(v, scope) for k, v in (job.get("env") or {}).items()}
        state = _Job(name, run.runner_env, run.temp, env)
        result.steps, result.status = self._steps(job["steps"], scope, state, outer_env={})
        result.summary = state.summary
        return result

    def _call(
        self, name: str, job: dict[str, Any], contexts: dict[str, Any], run: _Run, result: RunResult
    ) -> None:
        """A job that calls a reusable workflow: the called workflow's jobs, as `name/job`."""
        if "if" in job and not truthy(evaluate_condition(job["if"], {**contexts, "job": {}}, "success")):
            result.jobs[name] = JobResult(name=name, skipped=True)
            return
        uses = job["uses"]
        repository, _, rest = uses.partition("/.github/")
        path, _, ref = f".github/{rest}".partition("@")
        source = self._repository(repository, uses)
        sha = _git(source, "rev-parse", f"{ref}^{{commit}}").strip()
        called = parse(_git(source, "show", f"{sha}:{path}"))
        on = called["on"]
        triggers = on if isinstance(on, dict) else dict.fromkeys([on] if isinstance(on, str) else on)
        if "workflow_call" not in triggers:
            raise AssertionError(f"{uses} cannot be called: it has no workflow_call trigger")
        declared = (triggers["workflow_call"] or {}).get("inputs") or {}
        secrets = (
            contexts["secrets"]
            if job.get("secrets") == "inherit"
            else {k: interpolate(v, contexts) for k, v in (job.get("secrets") or {}).items()}
        )
        called_contexts = {
            **contexts,
            "inputs": call_inputs(declared, job.get("with") or {}, contexts, uses),
            "secrets": {"GITHUB_TOKEN": contexts["secrets"]["GITHUB_TOKEN"], **secrets},
        }
        identity = {
            "workflow_repository": repository,
            "workflow_sha": sha,
            "workflow_ref": f"{repository}/{path}@{ref}",
            "workflow_file_path": path,
        }
        self._jobs(called, called_contexts, identity, run, result, prefix=f"{name}/")

    # --- steps --------------------------------------------------------------------------------------
    def _steps(
        self, steps: list[dict[str, Any]], scope: dict[str, Any], job: _Job, outer_env: dict[str, str]
    ) -> tuple[dict[str, StepResult], str]:
        """Run steps in order (a job's, or a composite action's with `outer_env`): results and status."""
        results: dict[str, StepResult] = {}
        status = "success"
        for index, step in enumerate(steps):
            step_id = step.get("id") or f"step{index}"
            env = {**job.env, **job.added_env, **outer_env}
            scope["env"] = env
            condition = step.get("if")
            run_it = (
                truthy(evaluate_condition(condition, scope, status)) if condition else status == "success"
            )
            if run_it:
                env.update({k: interpolate(v, scope) for k, v in (step.get("env") or {}).items()})
                outcome = self._step(step, step_id, env, scope, job)
                if outcome.outcome == "failure":
                    outcome.conclusion = "success" if step.get("continue-on-error") else "failure"
                if outcome.conclusion == "failure":
                    status = "failure"
                    scope["job"] = {**scope["job"], "status": "failure"}
            else:
                outcome = StepResult(
                    name=step.get("name", step_id), skipped=True, outcome="skipped", conclusion="skipped"
                )
            results[step_id] = outcome
            scope["steps"][step_id] = {
                "outputs": outcome.outputs,
                "outcome": outcome.outcome,
                "conclusion": outcome.conclusion,
            }
        return results, status

    def _step(
        self, step: dict[str, Any], step_id: str, env: dict[str, str], scope: dict[str, Any], job: _Job
    ) -> StepResult:
        name = step.get("name") or step.get("uses") or step_id
        if step_id in self.substitute:
            return StepResult(name=name)
        if "uses" not in step:
            return self._script(step["run"], name, env, job)
        with_values = {k: interpolate(v, scope) for k, v in (step.get("with") or {}).items()}
        folder = self._action_folder(step["uses"])
        if folder is not None:
            return self._composite(step["uses"], name, folder, with_values, env, scope, job)
        stand_in = self.actions.get(step["uses"].split("@", 1)[0])
        if stand_in is None:
            raise AssertionError(f"no local stand-in for {step['uses']}")
        files = _StepFiles.create(job)
        stand_in(with_values, {**job.runner_env, **env, **files.variables()})
        return StepResult(name=name, outputs=files.collect(job))

    def _script(self, script: str, name: str, env: dict[str, str], job: _Job) -> StepResult:
        files = _StepFiles.create(job)
        script_path = files.output.with_suffix(".sh")
        script_path.write_text(script, encoding="utf-8")
        process_env = {
            **self.base_env,
            "PATH": self._path(job),
            "HOME": self.base_env.get("HOME", str(job.temp)),
            **job.runner_env,
            **env,
            **files.variables(),
        }
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_path)],
            cwd=self.workspace,
            env=process_env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return StepResult(
            name=name,
            seconds=time.monotonic() - started,
            outcome="success" if done.returncode == 0 else "failure",
            outputs=files.collect(job),
            stdout=done.stdout,
            stderr=done.stderr,
        )

    def _path(self, job: _Job) -> str:
        inherited = self.base_env.get("PATH", os.environ.get("PATH", ""))
        mine = [str(Path(sys.executable).parent)] if self.preinstalled else []
        return os.pathsep.join([*reversed(job.added_path), *mine, inherited])

    # --- composite actions --------------------------------------------------------------------------
    def _action_folder(self, uses: str) -> Path | None:
        """Where a composite action's files are: in the workspace, or unpacked from a local repository."""
        if uses.startswith("./"):
            return self.workspace / uses
        name, _, ref = uses.partition("@")
        parts = name.split("/")
        repository, inside = "/".join(parts[:2]), "/".join(parts[2:])
        if repository not in self.repositories:
            return None
        target = self.workspace.parent / "_actions" / repository / ref
        if not target.exists():
            target.mkdir(parents=True)
            archive = subprocess.run(
                ["git", "-C", str(self.repositories[repository]), "archive", "--format=tar", ref],
                capture_output=True,
                check=True,
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(target, filter="data")
        return target / inside if inside else target

    def _composite(
        self,
        uses: str,
        name: str,
        folder: Path,
        with_values: dict[str, str],
        env: dict[str, str],
        scope: dict[str, Any],
        job: _Job,
    ) -> StepResult:
        metadata = yaml.safe_load((folder / "action.yml").read_text(encoding="utf-8"))
        runs = metadata["runs"]
        if runs.get("using") != "composite":
            raise AssertionError(f"{uses} is not a composite action")
        for step in runs["steps"]:
            if "run" in step and step.get("shell") != "bash":
                raise AssertionError(f"{uses}: a composite action's run step needs `shell: bash`: {step}")
        inner = {
            **scope,
            "inputs": action_inputs(metadata.get("inputs") or {}, with_values, scope, uses),
            "steps": {},
            "github": {**scope["github"], "action_path": str(folder)},
        }
        outer_env = {**env, "GITHUB_ACTION_PATH": str(folder)}
        steps, status = self._steps(runs["steps"], inner, job, outer_env=outer_env)
        outputs = {
            key: interpolate(spec.get("value", ""), inner)
            for key, spec in (metadata.get("outputs") or {}).items()
        }
        return StepResult(name=name, outcome=status, conclusion=status, outputs=outputs, steps=steps)

    def _repository(self, repository: str, uses: str) -> Path:
        if repository not in self.repositories:
            raise AssertionError(
                f"no local repository for {uses} (give repositories={{{repository!r}: path}})"
            )
        return self.repositories[repository]


def call_inputs(
    declared: dict[str, Any], given: dict[str, Any], contexts: dict[str, Any], uses: str
) -> dict[str, Any]:
    """A called workflow's inputs: the caller's `with:` values and the declared defaults, typed."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise AssertionError(f"{uses} has no input {', '.join(unknown)}")
    empty: dict[str, Any] = {"string": "", "boolean": False, "number": 0}
    values: dict[str, Any] = {}
    for name, spec in declared.items():
        kind = (spec or {}).get("type", "string")
        if name in given:
            values[name] = _typed(interpolate(given[name], contexts), kind, f"{uses} input {name}")
        elif (spec or {}).get("required"):
            raise AssertionError(f"{uses} needs the input {name}")
        else:
            values[name] = (spec or {}).get("default", empty[kind])
    return values


def action_inputs(
    declared: dict[str, Any], given: dict[str, str], contexts: dict[str, Any], uses: str
) -> dict[str, str]:
    """A composite action's inputs: the step's `with:` values and the declared defaults, interpolated."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise AssertionError(f"{uses} has no input {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name, spec in declared.items():
        if name in given:
            values[name] = given[name]
        elif (spec or {}).get("required") and "default" not in (spec or {}):
            raise AssertionError(f"{uses} needs the input {name}")
        else:
            values[name] = interpolate((spec or {}).get("default", ""), contexts)
    return values


def _typed(value: str, kind: str, where: str) -> Any:
    if kind == "boolean":
        if value not in ("true", "false"):
            raise AssertionError(f"{where}: {value!r} is not a boolean")
        return value == "true"
    if kind == "number":
        number = float(value)
        return int(number) if number.is_integer() else number
    return value


def _git(repository: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repository), *args], capture_output=True, text=True, check=True
    ).stdout


def read_key_values(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIMITER` ... `DELIMITER` blocks; a later value wins."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            values[key] = "\n".join(block)
        elif "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
    return values
