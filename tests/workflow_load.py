"""What GitHub decides before any job of a workflow runs, for the local workflow runner: whether an event
starts a run at all, and whether the workflow, with every workflow it calls, loads.

    reason = start_decision(workflow, "issue_comment", payload, actor="github-token")  # "" when a run starts
    loaded = load(workflow, resolve, owner="octo", default_permissions="restricted")
    loaded.errors   # GitHub's own messages: the run concludes `startup_failure`, no job runs
    loaded.lint     # what actionlint rejects and GitHub runs anyway (the runner refuses it too, when strict)
    passes_inherited_secrets("octo", "octo/rounds/.github/workflows/rounds.yml@sha")  # True: same owner

`resolve(uses)` reads a called workflow (`workflow_uses.called_workflow`). The messages are GitHub's words, as
its workflow parser writes them (published with the runner: actions/runner, src/Sdk/WorkflowParser,
https://github.com/actions/runner/blob/main/src/Sdk/WorkflowParser/Conversion/PermissionsHelper.cs and
.../Conversion/WorkflowTemplateConverter.cs, .../Conversion/ReusableWorkflowsLoader.cs); GitHub puts the
caller's file, line and column in front of each (`.github/workflows/ci.yml (Line: 7, Col: 3): `), which this
model leaves out. As GitHub's loader does, the first call that has errors stops the loading: its errors are
all the run reports.

1. Permissions of called workflows. A called workflow can keep or lower the calling job's `GITHUB_TOKEN`
   permissions, never raise them, however deep the calls nest:
   https://docs.github.com/en/actions/reference/workflows-and-actions/reusing-workflow-configurations#supported-keywords-for-jobs-that-call-a-reusable-workflow
   ("The GITHUB_TOKEN permissions passed from the caller workflow can be only downgraded (not elevated) by the
   called workflow") and #access-and-permissions-for-nested-workflows on that page. GitHub checks it when it
   loads the called workflow, for EVERY job that names `permissions:` (and the called workflow's top-level
   `permissions:`), whatever the job's `if:` (https://github.com/actions/runner/issues/4151,
   https://github.com/canonical/authd/issues/1528):
   "Error calling workflow 'owner/repo/.github/workflows/x.yml@ref'. The nested job 'fix' is requesting
   'contents: write, pull-requests: write', but is only allowed 'contents: read, pull-requests: none'."
   (the workflow's own: "... The workflow is requesting '...', but is only allowed '...'."), one
   `scope: level` per scope over the limit, in GitHub's order of scopes (SCOPES).
   - Scopes and levels: https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#permissions
     and #jobsjob_idpermissions: none < read < write; `id-token` is write or none, `models` and
     `vulnerability-alerts` read or none; naming any scope sets the others to none; `{}` is none everywhere;
     `read-all` / `write-all` every scope at that level (the parser gives `models` and `vulnerability-alerts`
     read at most, and `id-token` the level itself). Another key or level: "Unexpected value '...'".
   - The calling job's limit: its own `permissions:`, else its workflow's top-level `permissions:`, else
     (neither names any) the repository's default for the token
     (https://docs.github.com/en/actions/reference/github_token-reference#permissions-for-the-github_token,
     "How permissions are calculated for a workflow job" on the same page and on workflow-syntax#permissions):
     "restricted" (contents and packages read, metadata read, nothing else) or "permissive" (write on every
     scope; the parser lets a called workflow of the same organization or enterprise have `id-token: write`,
     `models` and `vulnerability-alerts` read). Restricted is GitHub's default for repositories, organizations
     and enterprises created since February 2023:
     https://github.blog/changelog/2023-02-02-github-actions-updating-the-default-github_token-permissions-to-read-only
   - A called job's permissions: its own, else its workflow's top-level, else the calling job's limit
     (inherited); a job that calls again passes those on as the next limit.
2. `secrets: inherit` passes the caller's secrets only within one organization or enterprise:
   https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idsecretsinherit
   ("can be used to pass secrets across repositories within the same organization, or across organizations
   within the same enterprise") and https://docs.github.com/en/actions/how-tos/reuse-automations/reuse-workflows.
   To a workflow of another owner it passes none (only GITHUB_TOKEN, which every called workflow gets): not a
   load error, the secrets are empty (passes_inherited_secrets). Secrets passed by name must be declared
   (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_callsecrets:
   "If a caller workflow passes a secret that is not specified in the called workflow, this results in an
   error"): "Invalid secret, X is not defined in the referenced workflow."; a secret declared
   `required: true` and not passed: "Secret X is required, but not provided while calling.". With `inherit`
   GitHub checks neither at load (the parser skips them; the reuse-workflows page: with `secrets: inherit`
   "you can reference them even if they are not explicitly defined in the `on` key").
3. `workflow_call` inputs:
   https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_callinputs
   ("If a caller workflow passes an input that is not specified in the called workflow, this results in an
   error"): "Invalid input, X is not defined in the referenced workflow."; "Input X is required, but not
   provided while calling." (also when the input has a default); a literal of the wrong type for a boolean or
   number input (a default, or a `with:` value without `${{ }}`): "Unexpected value 'X'". Names match
   without case. A called workflow without a workflow_call trigger: "workflow_call key is not defined in the
   referenced workflow."
   A called workflow that reads `inputs.X` or `secrets.X` it does not declare is what actionlint rejects (its
   expression rule: `property "x" is not defined in object type {...}`, `inputs` typed from the workflow_call
   and workflow_dispatch inputs, `secrets` from the declared workflow_call secrets, when it declares any, and
   GITHUB_TOKEN): GitHub itself runs it, an undeclared input empty
   (https://github.com/clouddrove/github-shared-workflows/issues/436) and an inherited secret there even
   undeclared, so it is `lint`, not `errors`.
4. Events made with the GITHUB_TOKEN start no workflow run, except workflow_dispatch and repository_dispatch:
   https://docs.github.com/en/actions/how-tos/write-workflows/choose-when-workflows-run/trigger-a-workflow#triggering-a-workflow-from-a-workflow
   and https://docs.github.com/en/actions/concepts/security/github_token#when-github_token-triggers-workflow-runs
   (a GitHub App's or a person's token do start runs). An event the workflow's `on:` does not name, or whose
   activity type (`payload["action"]`) its `types:` do not list, starts none either
   (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onevent_nametypes);
   branch and path filters are not modelled.

5. GitHub's limits on files and calls (`workflow_limits`, which cites them): the depth of nested calls, how
   `workflow_call` and `workflow_dispatch` inputs are declared, and (`lint`) schedules at most every 5
   minutes.

A run that failed to load concludes `startup_failure`: "The workflow run failed during startup."
(https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-run-statuses).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from workflow_expressions import expressions, properties_read
from workflow_limits import (
    GITHUB_COM_LEVELS,
    call_input_errors,
    dispatch_input_errors,
    nesting_error,
    schedule_lint,
)
from workflow_uses import CalledWorkflow, owner_of, triggers

# GitHub's order (Permissions.ComparisonKeyMapping), which is the order of its messages
SCOPES = (
    "actions",
    "artifact-metadata",
    "attestations",
    "checks",
    "contents",
    "deployments",
    "discussions",
    "issues",
    "packages",
    "pages",
    "pull-requests",
    "repository-projects",
    "statuses",
    "security-events",
    "id-token",
    "models",
    "vulnerability-alerts",
)
LEVELS = ("none", "read", "write")
ALLOWED_LEVELS = {
    **{scope: LEVELS for scope in SCOPES},
    "id-token": ("none", "write"),
    "models": ("none", "read"),
    "vulnerability-alerts": ("none", "read"),
}
# scopes at read at most under `read-all`/`write-all` and the permissive default (Permissions' constructor)
_CAPPED_AT_READ = ("models", "vulnerability-alerts")
DEFAULT_PERMISSIONS = ("restricted", "permissive")
ACTORS = ("user", "app", "github-token")
STARTED_BY_GITHUB_TOKEN = ("workflow_dispatch", "repository_dispatch")
# secrets every workflow has, beside those it declares (actionlint's list)
_AUTOMATIC_SECRETS = ("github_token", "actions_step_debug", "actions_runner_debug")

Permissions = dict[str, str]  # every scope -> none | read | write


# --- 4. does an event start a run ---------------------------------------------------------------------
def start_decision(workflow: dict[str, Any], event_name: str, payload: dict[str, Any], actor: str) -> str:
    """Why GitHub starts no run of `workflow` for this event, made by `actor`; "" when it starts one.

    `actor`: "user" (a person's token or the web UI), "app" (a GitHub App's installation token) or
    "github-token" (the GITHUB_TOKEN of a workflow run).
    """
    if actor not in ACTORS:
        raise ValueError(f"actor must be one of {ACTORS}, not {actor!r}")
    if actor == "github-token" and event_name not in STARTED_BY_GITHUB_TOKEN:
        return (
            f"a {event_name} event made with the GITHUB_TOKEN starts no workflow run "
            "(only workflow_dispatch and repository_dispatch do)"
        )
    on = triggers(workflow)
    if event_name not in on:
        return f"the workflow has no `on: {event_name}` trigger"
    settings = on[event_name]
    types = settings.get("types") if isinstance(settings, dict) else None
    if types is not None:
        listed = [types] if isinstance(types, str) else list(types)
        if payload.get("action") not in listed:
            return f"`on.{event_name}.types` does not list {payload.get('action')!r}"
    return ""


# --- 2. secrets: inherit ----------------------------------------------------------------------------------
def passes_inherited_secrets(owner: str, uses: str, enterprise_owners: Collection[str] = ()) -> bool:
    """Whether `secrets: inherit` in a workflow of `owner`'s repository passes its secrets to `uses`."""
    called = owner_of(uses)
    return called == "" or called.lower() in {o.lower() for o in (owner, *enterprise_owners)}


# --- 1. permissions -----------------------------------------------------------------------------------
def parse_permissions(value: Any) -> tuple[Permissions | None, list[str]]:
    """A `permissions:` value as every scope's level, and GitHub's errors; None where the key is absent."""
    if value is None:
        return None, []
    if isinstance(value, str):
        if value not in ("read-all", "write-all"):
            return None, [f"Unexpected value '{value}'"]
        return _every_scope(value.removesuffix("-all"), id_token=True), []
    if not isinstance(value, dict):
        return None, [f"Unexpected value '{value}'"]
    permissions = dict.fromkeys(SCOPES, "none")
    errors = []
    for scope, level in value.items():
        if scope not in ALLOWED_LEVELS:
            errors.append(f"Unexpected value '{scope}'")
        elif level not in ALLOWED_LEVELS[scope]:
            errors.append(f"Unexpected value '{level}'")
        else:
            permissions[scope] = level
    return (None if errors else permissions), errors


def token_default(policy: str, *, trusted: bool) -> Permissions:
    """The most a called workflow may ask for when no workflow on the way names permissions: the
    repository's default for the token (PermissionsHelper.CreatePermissionsFromPolicy); `trusted`: the called
    workflow is of the same organization or enterprise as the workflow that runs."""
    if policy == "restricted":
        return {**dict.fromkeys(SCOPES, "none"), "contents": "read", "packages": "read"}
    if policy == "permissive":
        return _every_scope("write", id_token=trusted)
    raise ValueError(f"default_permissions must be one of {DEFAULT_PERMISSIONS}, not {policy!r}")


def over_the_limit(requested: Permissions, allowed: Permissions) -> list[tuple[str, str, str]]:
    """(scope, requested, allowed) for every scope above what is allowed, in GitHub's order."""
    return [
        (scope, requested[scope], allowed[scope])
        for scope in SCOPES
        if LEVELS.index(requested[scope]) > LEVELS.index(allowed[scope])
    ]


def permission_error(uses: str, job_id: str | None, violations: list[tuple[str, str, str]]) -> str:
    wanted = ", ".join(f"{scope}: {level}" for scope, level, _ in violations)
    allowed = ", ".join(f"{scope}: {level}" for scope, _, level in violations)
    who = f"The nested job '{job_id}' is" if job_id else "The workflow is"
    return f"Error calling workflow '{uses}'. {who} requesting '{wanted}', but is only allowed '{allowed}'."


def _every_scope(level: str, *, id_token: bool) -> Permissions:
    permissions = dict.fromkeys(SCOPES, level)
    for scope in _CAPPED_AT_READ:
        permissions[scope] = "read" if level == "write" else level
    permissions["id-token"] = level if id_token else "none"
    return permissions


# --- loading ---------------------------------------------------------------------------------------------
@dataclass
class Loaded:
    errors: list[str] = field(default_factory=list)  # GitHub's: the run is a startup_failure
    lint: list[str] = field(default_factory=list)  # actionlint's, which GitHub runs anyway


def load(
    workflow: dict[str, Any],
    resolve: Callable[[str], CalledWorkflow],
    *,
    owner: str,
    default_permissions: str = "restricted",
    enterprise_owners: Collection[str] = (),
    max_levels: int = GITHUB_COM_LEVELS,
) -> Loaded:
    """Load `workflow` and every workflow it calls, as GitHub does before it starts a run.

    `owner`: the owner of the repository whose workflow runs; `enterprise_owners`: other owners of its
    enterprise (their workflows are "trusted" too); `max_levels`: how many levels of workflows may nest
    (the caller is the first: 10 on github.com, 4 on GitHub Enterprise Server; `workflow_limits`).
    """
    if default_permissions not in DEFAULT_PERMISSIONS:
        raise ValueError(
            f"default_permissions must be one of {DEFAULT_PERMISSIONS}, not {default_permissions!r}"
        )
    loader = _Loader(resolve, owner, default_permissions, enterprise_owners, max_levels)
    # a workflow file GitHub cannot read starts no run (its dispatch inputs); one that runs more often than
    # GitHub schedules it is actionlint's (`workflow_limits`)
    loaded = Loaded(errors=dispatch_input_errors(workflow) + _permission_values(workflow))
    if loaded.errors:
        return loaded
    loader.lint.extend(schedule_lint(workflow))
    top, _ = parse_permissions(workflow.get("permissions"))
    for job_id, job in (workflow.get("jobs") or {}).items():
        if "uses" not in job:
            continue
        own, _ = parse_permissions(job.get("permissions"))
        errors = loader.call(job_id, job, own if own is not None else top, chain=())
        if errors:
            loaded.errors = errors
            break
    loaded.lint = loader.lint
    return loaded


class _Loader:
    def __init__(
        self,
        resolve: Callable[[str], CalledWorkflow],
        owner: str,
        policy: str,
        enterprise_owners: Collection[str],
        max_levels: int,
    ) -> None:
        self.resolve = resolve
        self.max_levels = max_levels
        self.owner = owner
        self.policy = policy
        self.enterprise_owners = enterprise_owners
        self.lint: list[str] = []
        self.linted: set[str] = set()

    def call(
        self, job_id: str, job: dict[str, Any], limit: Permissions | None, chain: tuple[str, ...]
    ) -> list[str]:
        """Load the workflow a job calls (ReusableWorkflowsLoader.LoadRecursive); GitHub's errors."""
        uses = str(job["uses"])
        if uses in chain:
            return [f"Error calling workflow '{uses}'. Loops in the workflow tree are not permitted."]
        # the caller is level 1, each workflow on the way one more, this one the last
        too_deep = nesting_error(uses, len(chain) + 2, self.max_levels)
        if too_deep:
            return [too_deep]
        called = self.resolve(uses)
        if uses not in self.linted:
            self.linted.add(uses)
            self.lint.extend(undeclared_reads(called, uses))
        errors = call_input_errors(uses, called.workflow) + _permission_values(called.workflow)
        if errors:
            return errors
        trusted = passes_inherited_secrets(self.owner, uses, self.enterprise_owners)
        allowed = limit if limit is not None else token_default(self.policy, trusted=trusted)
        passed_on = limit  # what the called workflow's jobs get when they name none
        if "on" not in called.workflow:
            errors.append("workflow_call key is not defined in the referenced workflow.")
        for key in called.workflow:
            if key == "on":
                if not called.callable:
                    errors.append("workflow_call key is not defined in the referenced workflow.")
                    continue
                errors.extend(input_errors(called.inputs, job.get("with") or {}))
                errors.extend(secret_errors(called.secrets, job.get("secrets")))
            elif key == "permissions":
                top, _ = parse_permissions(called.workflow["permissions"])
                if top is not None:
                    violations = over_the_limit(top, allowed)
                    if violations:
                        errors.append(permission_error(uses, None, violations))
                    passed_on = top
        nested: dict[str, Permissions | None] = {}
        for called_id, called_job in (called.workflow.get("jobs") or {}).items():
            own, _ = parse_permissions(called_job.get("permissions"))
            if own is not None:
                violations = over_the_limit(own, allowed)
                if violations:
                    errors.append(permission_error(uses, called_id, violations))
            nested[called_id] = own if own is not None else passed_on
        if errors:
            return errors
        for called_id, called_job in (called.workflow.get("jobs") or {}).items():
            if "uses" in called_job:
                errors = self.call(called_id, called_job, nested[called_id], (*chain, uses))
                if errors:
                    return errors
        return []


def _permission_values(workflow: dict[str, Any]) -> list[str]:
    """GitHub's errors for `permissions:` values it cannot read, at the top and in each job."""
    errors = parse_permissions(workflow.get("permissions"))[1]
    for job in (workflow.get("jobs") or {}).values():
        errors.extend(parse_permissions((job or {}).get("permissions"))[1])
    return errors


# --- 2 and 3: what a call passes --------------------------------------------------------------------------
def input_errors(declared: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """GitHub's errors for a call's `with:` (WorkflowTemplateConverter.ConvertToWorkflowJobInputs)."""
    errors = []
    by_name = {str(name).lower(): value for name, value in given.items()}
    for name, spec in declared.items():
        spec = spec or {}
        kind = spec.get("type", "string")
        if "default" in spec:
            errors.extend(_literal_errors(spec["default"], kind))
        if name.lower() in by_name:
            errors.extend(_literal_errors(by_name[name.lower()], kind))
        elif spec.get("required") is True:
            errors.append(f"Input {name} is required, but not provided while calling.")
    known = {name.lower() for name in declared}
    errors.extend(
        f"Invalid input, {name} is not defined in the referenced workflow."
        for name in given
        if str(name).lower() not in known
    )
    return errors


def secret_errors(declared: dict[str, Any] | None, given: Any) -> list[str]:
    """GitHub's errors for a call's `secrets:` (WorkflowTemplateConverter.ValidateWorkflowJobSecrets); none
    for `inherit`, which GitHub does not check when it loads the workflow."""
    if given == "inherit":
        return []
    given = given or {}
    by_name = {str(name).lower() for name in given}
    errors = [
        f"Secret {name} is required, but not provided while calling."
        for name, spec in (declared or {}).items()
        if isinstance(spec, dict) and spec.get("required") is True and name.lower() not in by_name
    ]
    known = {name.lower() for name in declared or {}}
    errors.extend(
        f"Invalid secret, {name} is not defined in the referenced workflow."
        for name in given
        if str(name).lower() not in known
    )
    return errors


def _literal_errors(value: Any, kind: str) -> list[str]:
    """A value without an expression must already have the input's type; a string input takes any."""
    if isinstance(value, str) and "${{" in value:
        return []
    fits = {
        "boolean": isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
    }.get(kind, True)
    if fits:
        return []
    text = "" if value is None else ("true" if value is True else "false" if value is False else str(value))
    return [f"Unexpected value '{text}'"]


# --- 3. what a called workflow reads (actionlint) ---------------------------------------------------------
def undeclared_reads(called: CalledWorkflow, uses: str) -> list[str]:
    """actionlint's errors for `inputs.X` and `secrets.X` a called workflow reads and does not declare."""
    on = called.triggers
    declared_inputs: dict[str, str] = {}
    for event in ("workflow_dispatch", "workflow_call"):
        for name, spec in ((on.get(event) or {}).get("inputs") or {}).items():
            declared_inputs[name.lower()] = _type_name((spec or {}).get("type", "string"))
    declared_secrets = None
    if called.secrets is not None:
        declared_secrets = dict.fromkeys(_AUTOMATIC_SECRETS, "string")
        declared_secrets.update({name.lower(): "string" for name in called.secrets})
    found: list[str] = []
    for expression in _all_expressions(called.workflow):
        try:
            inputs, secrets = properties_read(expression, "inputs"), properties_read(expression, "secrets")
        except ValueError:
            continue  # not an expression this model reads
        for name in inputs:
            if name.lower() not in declared_inputs:
                found.append(_undefined(uses, name, declared_inputs))
        for name in secrets if declared_secrets is not None else []:
            if name.lower() not in declared_secrets:
                found.append(_undefined(uses, name, declared_secrets))
    return list(dict.fromkeys(found))


def _undefined(uses: str, name: str, declared: dict[str, str]) -> str:
    members = "; ".join(f"{key}: {kind}" for key, kind in sorted(declared.items()))
    return f'{uses}: property "{name.lower()}" is not defined in object type {{{members}}} [expression]'


def _type_name(kind: str) -> str:
    return {"boolean": "bool", "number": "number"}.get(kind, "string")


def _all_expressions(node: Any, key: str = "") -> Iterator[str]:
    """Every expression of a workflow: `${{ }}` in any string, and `if:` conditions written without them."""
    if isinstance(node, dict):
        for child_key, child in node.items():
            yield from _all_expressions(child, str(child_key))
    elif isinstance(node, list):
        for child in node:
            yield from _all_expressions(child, key)
    elif isinstance(node, str):
        found = expressions(node)
        if key == "if" and not found:
            found = [node]
        yield from found
