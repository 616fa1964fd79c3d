"""Run a workflow's jobs the way the GitHub Actions runner would, against local fakes.

    runner = WorkflowRunner(load(".github/workflows/rounds.yml"), workspace, actions={...})
    run = runner.run("issue_comment", event_payload, secrets=..., vars=..., github={...})
    run.jobs["round"].steps["restore"].outputs, run.summary, run.jobs["acknowledge"].skipped

What it does like the runner:
- evaluates `if:` of jobs and steps (a step's `if:` without a status function means `success() && (...)`);
- interpolates `${{ }}` in `env:` and `with:` from the contexts github, inputs, secrets, vars, env, steps,
  runner and job (a small evaluator for GitHub's expression syntax: literals, property access, `!`, `==`,
  `!=`, `<`, `>`, `&&`, `||` with their value semantics, `contains`, `startsWith`, `endsWith`, `format`,
  `toJSON`, `fromJSON` and the status functions);
- runs `run:` steps with `bash --noprofile --norc -eo pipefail`, in the workspace, with the runner's
  variables:
  GITHUB_ACTIONS, CI, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH (the payload as a file), GITHUB_OUTPUT, GITHUB_ENV,
  GITHUB_STEP_SUMMARY (one file per step), GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_SHA, GITHUB_REF,
  GITHUB_WORKSPACE, GITHUB_WORKFLOW_REF, GITHUB_SERVER_URL, GITHUB_API_URL, RUNNER_TEMP;
- reads step outputs (`name=value` and `name<<DELIMITER` blocks) and `GITHUB_ENV` additions for later steps;
- honours `continue-on-error`, and a failed step fails the job.

What it replaces: `uses:` steps by local stand-ins given by the test (`actions={"actions/upload-artifact":
...}`, looked up by the action's name without its ref), and steps whose id is in `substitute` (e.g. the
install step: the package under test is already installed here).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ActionStandIn = Callable[[dict[str, str], dict[str, str]], None]
_STATUS_FUNCTIONS = ("success()", "failure()", "always()", "cancelled()")


def load(path: Path) -> dict[str, Any]:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
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


@dataclass
class JobResult:
    name: str
    skipped: bool = False
    status: str = "success"
    steps: dict[str, StepResult] = field(default_factory=dict)
    summary: str = ""


@dataclass
class RunResult:
    jobs: dict[str, JobResult] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        return "\n".join(job.summary for job in self.jobs.values())


class WorkflowRunner:
    def __init__(
        self,
        workflow: dict[str, Any],
        workspace: Path,
        *,
        actions: dict[str, ActionStandIn],
        substitute: set[str] | None = None,
        base_env: dict[str, str] | None = None,
    ) -> None:
        self.workflow = workflow
        self.workspace = workspace
        self.actions = actions
        self.substitute = substitute or set()
        self.base_env = base_env or {}
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
            "job": {"status": "success"},
        }
        runner_env = {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": github["repository"],
            "GITHUB_RUN_ID": str(self.run_number),
            "GITHUB_SHA": github.get("sha", "0" * 40),
            "GITHUB_REF": github.get("ref", "refs/heads/main"),
            "GITHUB_REF_NAME": github.get("ref_name", "main"),
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_WORKFLOW_REF": github.get("workflow_ref", ""),
            "GITHUB_SERVER_URL": github.get("server_url", "https://github.com"),
            "GITHUB_API_URL": github.get("api_url", ""),
            "RUNNER_TEMP": str(temp),
        }
        result = RunResult()
        for job_id, job in self.workflow["jobs"].items():
            result.jobs[job_id] = self._job(job_id, job, contexts, runner_env, temp)
        return result

    # --- a job --------------------------------------------------------------------------------
    def _job(
        self,
        job_id: str,
        job: dict[str, Any],
        contexts: dict[str, Any],
        runner_env: dict[str, str],
        temp: Path,
    ) -> JobResult:
        result = JobResult(name=job_id)
        job_contexts = {**contexts, "steps": {}, "env": {}, "job": {"status": "success"}}
        if "if" in job and not truthy(evaluate_condition(job["if"], job_contexts, "success")):
            result.skipped = True
            return result
        job_env = {k: interpolate(v, job_contexts) for k, v in (job.get("env") or {}).items()}
        added_env: dict[str, str] = {}
        for index, step in enumerate(job["steps"]):
            step_id = step.get("id") or f"step{index}"
            env = {**job_env, **added_env}
            job_contexts["env"] = env
            status = result.status
            condition = step.get("if")
            run_it = (
                truthy(evaluate_condition(condition, job_contexts, status))
                if condition
                else status == "success"
            )
            if not run_it:
                outcome = StepResult(
                    name=step.get("name", step_id), skipped=True, outcome="skipped", conclusion="skipped"
                )
                result.steps[step_id] = outcome
                job_contexts["steps"][step_id] = {
                    "outputs": {},
                    "outcome": "skipped",
                    "conclusion": "skipped",
                }
                continue
            env.update({k: interpolate(v, job_contexts) for k, v in (step.get("env") or {}).items()})
            outcome = self._step(job_id, step, step_id, env, job_contexts, runner_env, temp, added_env)
            if outcome.outcome == "failure" and step.get("continue-on-error"):
                outcome.conclusion = "success"
            elif outcome.outcome == "failure":
                outcome.conclusion = "failure"
                result.status = "failure"
                job_contexts["job"] = {"status": "failure"}
            result.steps[step_id] = outcome
            job_contexts["steps"][step_id] = {
                "outputs": outcome.outputs,
                "outcome": outcome.outcome,
                "conclusion": outcome.conclusion,
            }
            summary_file = temp / f"summary-{job_id}-{step_id}.md"
            if summary_file.exists():
                result.summary += summary_file.read_text(encoding="utf-8")
        return result

    def _step(
        self,
        job_id: str,
        step: dict[str, Any],
        step_id: str,
        env: dict[str, str],
        contexts: dict[str, Any],
        runner_env: dict[str, str],
        temp: Path,
        added_env: dict[str, str],
    ) -> StepResult:
        name = step.get("name") or step.get("uses") or step_id
        if step_id in self.substitute:
            return StepResult(name=name)
        if "uses" in step:
            action = step["uses"].split("@", 1)[0]
            stand_in = self.actions.get(action)
            if stand_in is None:
                raise AssertionError(f"no local stand-in for {step['uses']}")
            with_values = {
                k: interpolate(v, {**contexts, "env": env}) for k, v in (step.get("with") or {}).items()
            }
            stand_in(with_values, env)
            return StepResult(name=name)
        output_file = temp / f"output-{job_id}-{step_id}"
        env_file = temp / f"env-{job_id}-{step_id}"
        summary_file = temp / f"summary-{job_id}-{step_id}.md"
        for path in (output_file, env_file):
            path.write_text("", encoding="utf-8")
        script = temp / f"{job_id}-{step_id}.sh"
        script.write_text(step["run"], encoding="utf-8")
        inherited_path = self.base_env.get("PATH", os.environ.get("PATH", ""))
        process_env = {
            **self.base_env,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{inherited_path}",
            "HOME": self.base_env.get("HOME", str(temp)),
            **runner_env,
            **env,
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_ENV": str(env_file),
            "GITHUB_STEP_SUMMARY": str(summary_file),
        }
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env=process_env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        added_env.update(read_key_values(env_file.read_text(encoding="utf-8")))
        return StepResult(
            name=name,
            seconds=time.monotonic() - started,
            outcome="success" if done.returncode == 0 else "failure",
            outputs=read_key_values(output_file.read_text(encoding="utf-8")),
            stdout=done.stdout,
            stderr=done.stderr,
        )


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


# --- expressions --------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"\s*(?:(?P<number>-?\d+(?:\.\d+)?)|(?P<string>'(?:[^']|'')*')|(?P<op>==|!=|<=|>=|&&|\|\||[!<>().,\[\]*])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def evaluate_condition(condition: Any, contexts: dict[str, Any], job_status: str) -> Any:
    text = str(condition).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2].strip()
    if not any(function in text.replace(" ", "") for function in _STATUS_FUNCTIONS):
        text = f"success() && ({text})"
    return evaluate(text, {**contexts, "_status": job_status})


def interpolate(value: Any, contexts: dict[str, Any]) -> str:
    text = str(value) if not isinstance(value, bool) else str(value).lower()

    def replace(match: re.Match[str]) -> str:
        return to_string(evaluate(match[1], contexts))

    return re.sub(r"\$\{\{(.*?)\}\}", replace, text)


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (isinstance(value, float) and value != value)


def evaluate(text: str, contexts: dict[str, Any]) -> Any:
    tokens = _tokens(text)
    parser = _Parser(tokens, contexts)
    value = parser.expression()
    if parser.position != len(tokens):
        raise ValueError(f"unexpected {tokens[parser.position]} in {text!r}")
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    found, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot read {text[position:]!r}")
        kind = match.lastgroup or ""
        found.append((kind, match[kind]))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return found


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], contexts: dict[str, Any]) -> None:
        self.tokens = tokens
        self.position = 0
        self.contexts = contexts

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.position]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected}, found {token[1]}")
        self.position += 1
        return token

    def expression(self) -> Any:
        value = self.conjunction()
        while self.peek() == "||":
            self.take()
            right = self.conjunction()
            value = value if truthy(value) else right
        return value

    def conjunction(self) -> Any:
        value = self.comparison()
        while self.peek() == "&&":
            self.take()
            right = self.comparison()
            value = right if truthy(value) else value
        return value

    def comparison(self) -> Any:
        left = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            right = self.unary()
            left = _compare(op, left, right)
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.expression()
            self.take(")")
            return value
        if kind == "number":
            return float(text) if "." in text else int(text)
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind != "name":
            raise ValueError(f"unexpected {text}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == "(":
            return self.call(text)
        value = self.contexts.get(text)
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = to_string(self.expression())
                self.take("]")
            value = value.get(key) if isinstance(value, dict) else None
        return value

    def call(self, name: str) -> Any:
        self.take("(")
        arguments = []
        while self.peek() != ")":
            arguments.append(self.expression())
            if self.peek() == ",":
                self.take()
        self.take(")")
        status = self.contexts.get("_status", "success")
        functions: dict[str, Callable[..., Any]] = {
            "success": lambda: status == "success",
            "failure": lambda: status == "failure",
            "always": lambda: True,
            "cancelled": lambda: False,
            "contains": _contains,
            "startswith": lambda a, b: to_string(a).lower().startswith(to_string(b).lower()),
            "endswith": lambda a, b: to_string(a).lower().endswith(to_string(b).lower()),
            "format": lambda f, *a: re.sub(r"\{(\d+)\}", lambda m: to_string(a[int(m[1])]), f),
            "tojson": lambda v: json.dumps(v, indent=2),
            "fromjson": lambda v: json.loads(v),
        }
        return functions[name.lower()](*arguments)


def _contains(search: Any, item: Any) -> bool:
    if isinstance(search, list):
        return any(_compare("==", element, item) for element in search)
    return to_string(item).lower() in to_string(search).lower()


def _compare(op: str, left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        left, right = left.lower(), right.lower()
    elif type(left) is not type(right):
        left, right = _number(left), _number(right)
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    try:
        return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    except TypeError:
        return False


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value) if str(value).strip() else 0.0
    except ValueError:
        return float("nan")
