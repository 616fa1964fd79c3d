"""Run a workflow's jobs the way the GitHub Actions runner would, against local fakes.

    runner = WorkflowRunner(load(".github/workflows/rounds.yml"), workspace, actions={...})  # workflow_files
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
  called file at the resolved commit (`workflow_uses`). Their results are named `caller-job/called-job`;
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

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflow_expressions import evaluate_condition, interpolate, truthy
from workflow_files import StepFiles
from workflow_uses import action_folder, action_inputs, call_inputs, called_workflow, composite_action

ActionStandIn = Callable[[dict[str, str], dict[str, str]], None]
_NO_SHA = "0" * 40


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

    def files(self) -> StepFiles:
        """The files of the job's next step."""
        self.steps_run += 1
        return StepFiles.create(self.temp, f"{self.name.replace('/', '-')}-{self.steps_run}")

    def collect(self, files: StepFiles) -> dict[str, str]:
        """Hand the step's environment, PATH and summary additions to the job; the step's outputs."""
        written = files.read()
        self.added_env.update(written.env)
        self.added_path.extend(written.path)
        self.summary += written.summary
        return written.outputs


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
        called = called_workflow(self.repositories, job["uses"])
        secrets = (
            contexts["secrets"]
            if job.get("secrets") == "inherit"
            else {k: interpolate(v, contexts) for k, v in (job.get("secrets") or {}).items()}
        )
        called_contexts = {
            **contexts,
            "inputs": call_inputs(called.inputs, job.get("with") or {}, contexts, job["uses"]),
            "secrets": {"GITHUB_TOKEN": contexts["secrets"]["GITHUB_TOKEN"], **secrets},
        }
        self._jobs(called.workflow, called_contexts, called.identity, run, result, prefix=f"{name}/")

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
        folder = action_folder(self.repositories, step["uses"], self.workspace)
        if folder is not None:
            return self._composite(step["uses"], name, folder, with_values, env, scope, job)
        stand_in = self.actions.get(step["uses"].split("@", 1)[0])
        if stand_in is None:
            raise AssertionError(f"no local stand-in for {step['uses']}")
        files = job.files()
        stand_in(with_values, {**job.runner_env, **env, **files.variables()})
        return StepResult(name=name, outputs=job.collect(files))

    def _script(self, script: str, name: str, env: dict[str, str], job: _Job) -> StepResult:
        files = job.files()
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
            outputs=job.collect(files),
            stdout=done.stdout,
            stderr=done.stderr,
        )

    def _path(self, job: _Job) -> str:
        inherited = self.base_env.get("PATH", os.environ.get("PATH", ""))
        mine = [str(Path(sys.executable).parent)] if self.preinstalled else []
        return os.pathsep.join([*reversed(job.added_path), *mine, inherited])

    # --- composite actions --------------------------------------------------------------------------
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
        metadata = composite_action(folder, uses)
        inner = {
            **scope,
            "inputs": action_inputs(metadata.get("inputs") or {}, with_values, scope, uses),
            "steps": {},
            "github": {**scope["github"], "action_path": str(folder)},
        }
        outer_env = {**env, "GITHUB_ACTION_PATH": str(folder)}
        steps, status = self._steps(metadata["runs"]["steps"], inner, job, outer_env=outer_env)
        outputs = {
            key: interpolate(spec.get("value", ""), inner)
            for key, spec in (metadata.get("outputs") or {}).items()
        }
        return StepResult(name=name, outcome=status, conclusion=status, outputs=outputs, steps=steps)
