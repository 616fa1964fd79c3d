"""Run a workflow's jobs the way the GitHub Actions runner would, against local fakes.

    runner = WorkflowRunner(load(".github/workflows/rounds.yml"), workspace, actions={...})  # workflow_files
    run = runner.run("issue_comment", event_payload, secrets=..., vars=..., github={...})
    run.jobs["round"].steps["restore"].outputs, run.summary, run.jobs["acknowledge"].skipped
    run.conclusion      # success | failure | startup_failure | skipped (every job skipped), None: no run
    run.startup_errors  # GitHub's messages when the workflow does not load; then no job ran

What it decides before any job runs, as GitHub does (`workflow_load`, which cites GitHub's documentation for
each rule):
- whether the event starts a run (`run.started`, `run.reason`): `actor="github-token"` (an event the
  workflow's own GITHUB_TOKEN made) starts none but workflow_dispatch and repository_dispatch, and an event
  the workflow's `on:` (or its `types:`) does not name starts none;
- whether the workflow and every workflow it calls load; if not the run concludes `startup_failure`, with
  GitHub's messages in `run.startup_errors` and no job run. Checked: every job of a called workflow, whatever
  its `if:`, asks for no more `permissions` than the calling job has (its own, else its workflow's, else the
  repository's default for the token: `default_permissions="restricted"`, GitHub's default since 2023, or
  "permissive"), however deep the calls nest; a call passes only inputs and secrets the called workflow
  declares, every required one, and literals of the declared type. What actionlint rejects and GitHub runs
  anyway (a called workflow reading an `inputs.X` or `secrets.X` it does not declare) is in
  `run.lint_errors`, and with `strict=True` (the default) refuses the run the same way;
- `secrets: inherit` passes the caller's secrets only to a workflow of the same owner (`owner`, by default
  the owner of `github["repository"]`; `enterprise_owners` for the other organizations of its enterprise):
  across owners the called workflow's secrets are empty, as on GitHub;
- GitHub's limits (`workflow_limits`): at most 10 levels of workflows (`max_levels=4` for GitHub Enterprise
  Server), `workflow_call` inputs typed boolean, number or string, at most 25 `workflow_dispatch` inputs of
  GitHub's five types (else `startup_failure`), and schedules at most every 5 minutes (actionlint's, in
  `run.lint_errors`).

What it does like the runner:
- evaluates `if:` of jobs and steps (a step's `if:` without a status function means `success() && (...)`) and
  interpolates `${{ }}` in `env:` and `with:` (`workflow_expressions`), from the contexts github, inputs,
  secrets, vars, env, steps, runner and job (its status and the identity of the workflow file that defines
  it: job.workflow_repository, job.workflow_sha, job.workflow_ref, job.workflow_file_path);
- runs `run:` steps with `bash --noprofile --norc -eo pipefail`, in the workspace, with the runner's
  variables:
  GITHUB_ACTIONS, CI, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH (the payload as a file), GITHUB_OUTPUT, GITHUB_ENV,
  GITHUB_PATH, GITHUB_STEP_SUMMARY (files of each step), GITHUB_REPOSITORY, GITHUB_RUN_ID,
  GITHUB_RUN_ATTEMPT, GITHUB_SHA,
  GITHUB_REF, GITHUB_WORKSPACE, GITHUB_WORKFLOW_REF, GITHUB_SERVER_URL, GITHUB_API_URL, RUNNER_TEMP;
- reads step outputs (`name=value` and `name<<DELIMITER` blocks), and `GITHUB_ENV` and `GITHUB_PATH` additions
  for the job's later steps (a later PATH addition comes first);
- honours `continue-on-error`, and a failed step fails the job;
- a job that calls a reusable workflow (`uses: owner/name/.github/workflows/file.yml@ref`) runs the called
  workflow's jobs, read at that ref from a local git repository (`repositories={"owner/name": path}`): its
  inputs from `with:` and the declared defaults, typed, its secrets (`inherit` or a mapping), the caller's
  github and vars contexts, and job.workflow_* naming the called file at the resolved commit
  (`workflow_uses`). Their results are named `caller-job/called-job`, each with its job-level `env`;
- a step that uses a composite action (`./folder` in the workspace, or `owner/name@ref` from `repositories`,
  unpacked under `_actions/owner/name/ref` as the runner does) runs the action's steps with its inputs
  (declared defaults interpolated; an undeclared input is an error), `github.action_path` and
  `GITHUB_ACTION_PATH`, a steps context of its own, and sets the action's outputs; its own steps' results are
  in the step result's `steps`;
- gives each job its own workflow's top-level `env:` under its own `env:`, never a caller's (a called
  workflow's jobs do not see the caller's workflow-level `env:`);
- cancels a job that asks for a concurrency group a workflow or calling job above it holds (the caller's
  top-level `concurrency:`, the calling job's, the called workflow's own), as GitHub does when it detects the
  deadlock: the job's status is `cancelled`, GitHub's message in `JobResult.annotations`, no step runs, and
  the run concludes `cancelled`;
- runs jobs in the file's order with the `needs` context (each needed job's result: success, failure or
  skipped, and its `outputs:`, evaluated from its steps when it ends; a job that calls a workflow has that
  workflow's `on.workflow_call.outputs`, evaluated from the `jobs` context of its jobs' results and
  outputs); a job without `if:` runs only when every job it needs succeeded, as GitHub's implicit
  success(); with `mint` (or `tokens`), a job has a GITHUB_TOKEN of its own (`github.token` and
  `secrets.GITHUB_TOKEN`), as GitHub mints one per job, with exactly the job's permissions
  (`workflow_tokens`: its own, else its workflow's, else the calling job's, else the repository's default;
  `JobResult.permissions`), so a step can do on the fake GitHub only what the job's `permissions:` grant;

What it replaces: other `uses:` steps by local stand-ins given by the test
(`actions={"actions/upload-artifact": ...}`, looked up by the action's name without its ref), called with the
step's `with:` values and environment (the runner's variables and the step's GITHUB_OUTPUT, GITHUB_ENV and
GITHUB_PATH files included, which the stand-in may write like an action does; it fails the step, as the
action would, by raising `ActionFailed` with the action's error message); and steps whose id is in
`substitute` (e.g. an install step). With `preinstalled=True` (the default) the scripts of the Python running
the tests come first on PATH: the package under test is already installed there. With `preinstalled=False`
only PATH additions and `base_env`'s PATH count, so a workflow must install what it runs.

What it does not do: run jobs on machines of their own (every job shares the workspace, a stricter setting
than GitHub's fresh runner per job), concurrency (a job that runs records the group it joins,
`JobResult.concurrency_group` and `RunResult.joined`, but nothing waits or is cancelled), timeouts,
matrices, services, containers, pre and post steps of actions, branch and path filters of triggers, and
GitHub's other load-time checks (the workflow schema, which contexts an expression may use where, the number
of distinct workflows a run calls).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflow_expressions import evaluate_condition, interpolate, truthy
from workflow_files import StepFiles
from workflow_limits import GITHUB_COM_LEVELS, TOP_LEVEL, concurrency_group, deadlock
from workflow_load import Permissions, load, parse_permissions, passes_inherited_secrets, start_decision
from workflow_tokens import job_permissions, passed_on
from workflow_uses import (
    CalledWorkflow,
    action_folder,
    action_inputs,
    call_inputs,
    called_workflow,
    composite_action,
)


class ActionFailed(Exception):
    """Raised by a stand-in: the action fails its step with this message (an `::error::` line)."""


ActionStandIn = Callable[[dict[str, str], dict[str, str]], None]
# mints a job's GITHUB_TOKEN: (job name, the token's permissions) -> the token
TokenMint = Callable[[str, Permissions], str]
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
    env: dict[str, str] = field(
        default_factory=dict
    )  # the environment it ran with (job's and its own `env:`)


@dataclass
class JobResult:
    name: str
    skipped: bool = False
    status: str = "success"  # success | failure | cancelled
    steps: dict[str, StepResult] = field(default_factory=dict)
    summary: str = ""
    annotations: list[str] = field(default_factory=list)  # GitHub's words on a job it cancelled
    env: dict[str, str] = field(default_factory=dict)  # the job's `env:`, interpolated
    outputs: dict[str, str] = field(default_factory=dict)  # the job's `outputs:`, for `needs.<job>.outputs`
    token: str = ""  # the GITHUB_TOKEN the job had
    permissions: Permissions = field(default_factory=dict)  # what that token may do (`workflow_tokens`)
    concurrency_group: str | None = None  # the group the job joined (it ran, with `concurrency:`), else None


@dataclass
class RunResult:
    temp: Path | None  # RUNNER_TEMP of the run; None when no run started
    jobs: dict[str, JobResult] = field(default_factory=dict)
    started: bool = True  # False: GitHub starts no run for this event (`reason` says why)
    reason: str = ""
    startup_errors: list[str] = field(default_factory=list)  # GitHub's: the workflow did not load
    lint_errors: list[str] = field(default_factory=list)  # actionlint's, which GitHub runs anyway
    strict: bool = True  # lint errors refused the run too

    @property
    def summary(self) -> str:
        return "\n".join(job.summary for job in self.jobs.values())

    def joined(self, group: str) -> list[str]:
        """The jobs that entered the concurrency group `group`: those that ran and name it (a job its `if:`
        skipped never joins its group; GitHub's "Control the concurrency of workflows and jobs")."""
        return [name for name, job in self.jobs.items() if job.concurrency_group == group]

    @property
    def conclusion(self) -> str | None:
        """The run's conclusion as GitHub gives it; None when no run started."""
        if not self.started:
            return None
        if self.startup_errors or (self.strict and self.lint_errors):
            return "startup_failure"
        if any(job.status == "failure" for job in self.jobs.values() if not job.skipped):
            return "failure"
        if any(job.status == "cancelled" for job in self.jobs.values()):
            return "cancelled"
        if self.jobs and all(job.skipped for job in self.jobs.values()):
            return "skipped"
        return "success"


@dataclass
class _Run:
    """What every job of one run shares: the runner's variables and its temporary folder."""

    runner_env: dict[str, str]
    temp: Path
    owner: str  # of the repository whose workflow runs
    tokens: dict[str, str] = field(default_factory=dict)  # job name -> its own GITHUB_TOKEN
    mint: TokenMint | None = None  # mints each other job's token with the job's permissions


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
        owner: str | None = None,
        enterprise_owners: Collection[str] = (),
        default_permissions: str = "restricted",
        strict: bool = True,
        max_levels: int = GITHUB_COM_LEVELS,
    ) -> None:
        self.workflow = workflow
        self.workspace = workspace
        self.actions = actions
        self.substitute = substitute or set()
        self.base_env = base_env or {}
        self.repositories = repositories or {}
        self.preinstalled = preinstalled
        self.owner = owner  # of the repository whose workflow runs; None: the owner of github["repository"]
        self.enterprise_owners = enterprise_owners
        self.default_permissions = default_permissions  # the repository's default for the GITHUB_TOKEN
        self.strict = strict  # what actionlint rejects (and GitHub runs) refuses the run too
        self.max_levels = max_levels  # levels of workflows that may nest: 10 on github.com, 4 on GHES
        self.run_number = 0
        self.run_attempt = 0
        self._called: dict[str, CalledWorkflow] = {}

    def run(
        self,
        event_name: str,
        payload: dict[str, Any],
        *,
        github: dict[str, Any],
        secrets: dict[str, str] | None = None,
        vars: dict[str, str] | None = None,
        inputs: dict[str, Any] | None = None,
        actor: str = "user",
        tokens: dict[str, str] | None = None,
        mint: TokenMint | None = None,
        rerun: bool = False,
    ) -> RunResult:
        """Run the workflow for an event, made by `actor`: "user" (a person), "app" (a GitHub App's token) or
        "github-token" (a workflow's GITHUB_TOKEN). Nothing runs when GitHub would start no run, or when the
        workflow does not load (`RunResult.conclusion == "startup_failure"`). `tokens` gives a job (by its
        name) a GITHUB_TOKEN of its own; `mint` makes every other job's, from the job's permissions, as GitHub
        mints one per job (without either, every job has `github["token"]`).

        With `rerun`, a new attempt of the last run (the Re-run all jobs button): the same run id, and
        `github.run_attempt` / GITHUB_RUN_ATTEMPT one more. A re-run is the same workflow run, so what
        it uploads meets the artifacts its earlier attempts uploaded (GitHub's "Re-running workflows and
        jobs")."""
        reason = start_decision(self.workflow, event_name, payload, actor)
        if reason:
            return RunResult(None, started=False, reason=reason, strict=self.strict)
        if rerun:
            assert self.run_number, "a re-run needs a run before it"
            self.run_attempt += 1
        else:
            self.run_number += 1
            self.run_attempt = 1
        self._called = {}
        owner = self.owner if self.owner is not None else github["repository"].split("/", 1)[0]
        loaded = load(
            self.workflow,
            self._called_workflow,
            owner=owner,
            default_permissions=self.default_permissions,
            enterprise_owners=self.enterprise_owners,
            max_levels=self.max_levels,
        )
        attempt = f"-attempt-{self.run_attempt}" if self.run_attempt > 1 else ""
        temp = self.workspace.parent / f"runner-temp-{self.run_number}{attempt}"
        result = RunResult(temp, startup_errors=loaded.errors, lint_errors=loaded.lint, strict=self.strict)
        if result.conclusion == "startup_failure":
            return result
        temp.mkdir(parents=True, exist_ok=True)
        event_path = temp / "event.json"
        event_path.write_text(json.dumps(payload), encoding="utf-8")
        contexts: dict[str, Any] = {
            "github": {
                **github,
                "event_name": event_name,
                "event": payload,
                "run_id": str(self.run_number),
                "run_attempt": str(self.run_attempt),
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
            "GITHUB_RUN_ATTEMPT": str(self.run_attempt),
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
        run = _Run(runner_env, temp, owner, tokens or {}, mint)
        # the workflow's own group, held for the whole run: a job under it that asks for it deadlocks
        held = _holding({}, self.workflow.get("concurrency"), contexts, TOP_LEVEL)
        self._jobs(
            self.workflow, contexts, identity, run, result, prefix="", inherited=None, trusted=True, held=held
        )
        return result

    def _called_workflow(self, uses: str) -> CalledWorkflow:
        """The workflow a `uses:` names, read once a run."""
        if uses not in self._called:
            self._called[uses] = called_workflow(self.repositories, uses)
        return self._called[uses]

    # --- jobs ---------------------------------------------------------------------------------------
    def _jobs(
        self,
        workflow: dict[str, Any],
        contexts: dict[str, Any],
        identity: dict[str, str],
        run: _Run,
        result: RunResult,
        prefix: str,
        inherited: Permissions | None,
        trusted: bool,
        held: dict[str, str],
    ) -> dict[str, dict[str, Any]]:
        """Run the jobs; each job's result and outputs (the `jobs` context of a called workflow's outputs).
        `inherited`: the permissions the calling job passes on (None at the top of a run); `trusted`: the
        workflow is of the owner (or enterprise) of the repository whose workflow runs; `held`: the
        concurrency groups the workflows and calling jobs above these jobs hold (`workflow_limits`)."""
        top, _ = parse_permissions(workflow.get("permissions"))
        # this workflow's own top-level `env:`, never its caller's (`workflow_limits`, 5.)
        workflow_env = {k: interpolate(v, contexts) for k, v in (workflow.get("env") or {}).items()}
        results: dict[str, str] = {}  # job id -> success | failure | skipped, for `needs`
        outputs: dict[str, dict[str, str]] = {}  # job id -> its outputs
        for job_id, job in workflow["jobs"].items():
            name = f"{prefix}{job_id}"
            needed = _needs(job, job_id, results, outputs)
            needs_ok = all(value["result"] == "success" for value in needed.values())
            if not needs_ok and "if" not in job:  # an implicit success() needs every needed job's success
                result.jobs[name] = JobResult(name=name, skipped=True)
                results[job_id] = "skipped"
                continue
            with_needs = {**contexts, "needs": needed, "_needs_status": "success" if needs_ok else "failure"}
            if "uses" in job:
                passes = passed_on(job, top, inherited)
                outputs[job_id] = self._call(name, job, with_needs, run, result, passes, held)
                results[job_id] = _called_result(result, name)
            else:
                job_contexts = {**with_needs, "job": {"status": "success", **identity}}
                policy = self.default_permissions
                permissions = job_permissions(job, top, inherited, policy=policy, trusted=trusted)
                result.jobs[name] = self._job(
                    name, job, job_contexts, run, permissions, workflow_env=workflow_env, held=held
                )
                results[job_id] = _job_result(result.jobs[name])
                outputs[job_id] = result.jobs[name].outputs
        return {job_id: {"result": results[job_id], "outputs": outputs.get(job_id, {})} for job_id in results}

    def _job(
        self,
        name: str,
        job: dict[str, Any],
        contexts: dict[str, Any],
        run: _Run,
        permissions: Permissions,
        *,
        workflow_env: dict[str, str],
        held: dict[str, str],
    ) -> JobResult:
        result = JobResult(name=name, permissions=permissions)
        scope = {**contexts, "steps": {}, "env": {}}
        status = contexts.get("_needs_status", "success")
        if "if" in job and not truthy(evaluate_condition(job["if"], scope, status)):
            result.skipped = True
            return result
        group = concurrency_group(job.get("concurrency"))
        cancelled = deadlock(str(interpolate(group, scope)), _job_name(job, name), held) if group else ""
        if cancelled:
            result.status, result.annotations = "cancelled", [cancelled]
            return result
        # the job's own token, minted as it starts, in both places it is read from
        token = run.tokens.get(name) or (run.mint(name, permissions) if run.mint else None)
        if token is not None:
            scope["github"] = {**scope["github"], "token": token}
            scope["secrets"] = {**scope["secrets"], "GITHUB_TOKEN": token}
        result.token = str(scope["github"].get("token", ""))
        concurrency = job.get("concurrency")
        if concurrency is not None:  # a string is the group's name
            group = concurrency.get("group") if isinstance(concurrency, dict) else concurrency
            result.concurrency_group = str(interpolate(group, scope))
        env = {**workflow_env, **{k: interpolate(v, scope) for k, v in (job.get("env") or {}).items()}}
        result.env = dict(env)
        state = _Job(name, run.runner_env, run.temp, env)
        result.steps, result.status = self._steps(job["steps"], scope, state, outer_env={})
        result.summary = state.summary
        # `outputs:` are evaluated when the job ends, from its steps, whatever its status
        result.outputs = {k: str(interpolate(v, scope)) for k, v in (job.get("outputs") or {}).items()}
        return result

    def _call(
        self,
        name: str,
        job: dict[str, Any],
        contexts: dict[str, Any],
        run: _Run,
        result: RunResult,
        passes: Permissions | None,
        held: dict[str, str],
    ) -> dict[str, str]:
        """A job that calls a reusable workflow: the called workflow's jobs, as `name/job`; the job's outputs
        are the called workflow's `on.workflow_call.outputs`, evaluated from its jobs' outputs."""
        status = contexts.get("_needs_status", "success")
        if "if" in job and not truthy(evaluate_condition(job["if"], {**contexts, "job": {}}, status)):
            result.jobs[name] = JobResult(name=name, skipped=True)
            return {}
        called = self._called_workflow(job["uses"])
        if job.get("secrets") == "inherit":
            # to a workflow of another owner, inherit passes nothing: its secrets are empty
            inherits = passes_inherited_secrets(run.owner, job["uses"], self.enterprise_owners)
            secrets = contexts["secrets"] if inherits else {}
        else:
            secrets = {k: interpolate(v, contexts) for k, v in (job.get("secrets") or {}).items()}
        called_contexts = {
            **contexts,
            "inputs": call_inputs(called.inputs, job.get("with") or {}, contexts, job["uses"]),
            "secrets": {"GITHUB_TOKEN": contexts["secrets"]["GITHUB_TOKEN"], **secrets},
        }
        trusted = passes_inherited_secrets(run.owner, job["uses"], self.enterprise_owners)
        # the calling job's group and the called workflow's own are held by the calling job for its jobs
        label = _job_name(job, name)
        for concurrency, scope in (
            (job.get("concurrency"), contexts),
            (called.workflow.get("concurrency"), called_contexts),
        ):
            group = concurrency_group(concurrency)
            cancelled = deadlock(str(interpolate(group, scope)), label, held) if group else ""
            if cancelled:
                result.jobs[name] = JobResult(name=name, status="cancelled", annotations=[cancelled])
                return {}
            held = _holding(held, concurrency, scope, label)
        jobs = self._jobs(
            called.workflow,
            called_contexts,
            called.identity,
            run,
            result,
            prefix=f"{name}/",
            inherited=passes,
            trusted=trusted,
            held=held,
        )
        trigger = called.workflow.get("on") or {}
        declared = (trigger.get("workflow_call") or {}).get("outputs") if isinstance(trigger, dict) else None
        scope = {**called_contexts, "jobs": jobs}
        return {key: str(interpolate(spec.get("value", ""), scope)) for key, spec in (declared or {}).items()}

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
                outcome.env = dict(env)
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
        try:
            stand_in(with_values, {**job.runner_env, **env, **files.variables()})
        except ActionFailed as failed:
            return StepResult(
                name=name, outcome="failure", outputs=job.collect(files), stderr=f"::error::{failed}\n"
            )
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


def _needs(
    job: dict[str, Any], job_id: str, results: dict[str, str], outputs: dict[str, dict[str, str]]
) -> dict[str, Any]:
    """The `needs` context of a job: each needed job's result and outputs (jobs run in file order here)."""
    wanted = job.get("needs") or []
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    missing = [name for name in wanted if name not in results]
    if missing:
        raise AssertionError(f"job {job_id} needs {missing}, which do not come before it in the file")
    return {name: {"result": results[name], "outputs": outputs.get(name, {})} for name in wanted}


def _job_result(job: JobResult) -> str:
    return "skipped" if job.skipped else job.status


def _called_result(result: RunResult, name: str) -> str:
    """A calling job's result: failure if a called job failed, cancelled if one was, skipped if all were,
    else success."""
    called = [job for key, job in result.jobs.items() if key == name or key.startswith(f"{name}/")]
    outcomes = {_job_result(job) for job in called}
    for worst in ("failure", "cancelled"):
        if worst in outcomes:
            return worst
    return "skipped" if outcomes <= {"skipped"} else "success"


def _job_name(job: dict[str, Any], name: str) -> str:
    """How GitHub names a job in its messages: its `name:`, else its id (the last part of `name`)."""
    return str(job.get("name") or name.rsplit("/", 1)[-1])


def _holding(held: dict[str, str], concurrency: Any, contexts: dict[str, Any], holder: str) -> dict[str, str]:
    """`held` with the group of `concurrency` (if any) held by `holder`; names match without case."""
    group = concurrency_group(concurrency)
    if not group:
        return held
    return {**held, str(interpolate(group, contexts)).lower(): holder}
