"""GitHub's limits on workflow files and on what a caller shares with the workflows it calls, for the local
workflow runner (`workflow_load` and `workflow_runner` apply them):

    nesting_error(uses, levels, max_levels)   # GitHub's refusal of a call nested too deep; "" when it loads
    input_declaration_errors(workflow)        # workflow_call and workflow_dispatch inputs GitHub cannot read
    schedule_lint(workflow)                   # schedules more frequent than GitHub runs them (actionlint)
    schedule_interval_minutes("17,47 * * * *")  # 30: the shortest gap between two runs in a day
    deadlock(group, held)                     # the job holding a concurrency group a called job asks for

1. Nesting. "You can connect a maximum of ten levels of workflows - that is, the top-level caller workflow and
   up to nine levels of reusable workflows" (GitHub Enterprise Server: four)
   https://docs.github.com/en/actions/how-tos/reuse-automations/reuse-workflows#nesting-reusable-workflows
   GitHub refuses the run at load; the documentation does not quote its message, so the words of
   `nesting_error` are this model's, in the form of GitHub's other call errors.
2. Input declarations.
   - `on.workflow_call.inputs.<id>.type` "Required if input is defined for the on.workflow_call keyword ...
     This must be one of: boolean, number, or string."
     https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_callinputsinput_idtype
     A called workflow that breaks it does not load for its caller ("error parsing called workflow ...";
     the schema's words after it: "Required property is missing: type", "Unexpected value 'choice'").
   - `on.workflow_dispatch.inputs`: "The maximum number of top-level properties for inputs is 25" (10 until
     GitHub's changelog of 2025-12-04, "Actions workflow dispatch workflows now support 25 inputs"; the
     refusal then read "you may only define up to 10 `inputs` for a `workflow_dispatch` event"), each of
     type boolean, choice, number, environment or string (the default), a choice with `options`
     https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_dispatchinputs
     GitHub reports "Invalid workflow file" and starts no run of it.
3. Schedules. "The shortest interval you can run scheduled workflows is once every 5 minutes"
   https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#schedule
   GitHub runs a more frequent schedule less often than written; actionlint refuses it ("scheduled job runs
   too frequently. it runs once per %g seconds. the shortest interval is once every 5 minutes [events]",
   rule_events.go, which measures the first two runs after the epoch; here the shortest gap in a day, which
   also finds `0,2 * * * *`). Cron is read in UTC, on the default branch's workflow only (same page).
4. Concurrency. A called workflow's jobs run inside the caller's run: a group the caller's workflow (its
   top-level `concurrency:`) or the calling job holds cannot be taken by a job under it, which waits for its
   own ancestor. GitHub cancels that job: "Canceling since a deadlock for concurrency group 'G' was detected
   between 'top level workflow' and 'JOB'" (https://github.com/rhysd/actionlint/issues/538,
   https://github.com/github/vscode-github-actions/issues/135); a called workflow's own top-level group
   counts as its calling job's. Group names match without case ("Concurrency group names are case
   insensitive", https://docs.github.com/en/actions/how-tos/write-workflows/choose-when-workflows-run/control-workflow-concurrency).
   A job after the call (`needs:` it) takes the group once the call is over: no deadlock.
5. `env`. "Any environment variables set in an env context defined at the workflow level in the caller
   workflow are not propagated to the called workflow"
   https://docs.github.com/en/actions/reference/workflows-and-actions/reusing-workflow-configurations#limitations
   (the runner gives each workflow's jobs its own top-level `env:` only).
"""

from __future__ import annotations

import itertools
from typing import Any

from workflow_uses import triggers

GITHUB_COM_LEVELS = 10
ENTERPRISE_SERVER_LEVELS = 4
MAX_DISPATCH_INPUTS = 25
CALL_INPUT_TYPES = ("boolean", "number", "string")
DISPATCH_INPUT_TYPES = ("boolean", "choice", "number", "environment", "string")
SHORTEST_SCHEDULE_MINUTES = 5
TOP_LEVEL = "top level workflow"  # how GitHub names a workflow's own concurrency group in its message
_DAY = 24 * 60


# --- 1. nesting ----------------------------------------------------------------------------------------
def nesting_error(uses: str, levels: int, max_levels: int) -> str:
    """The refusal of a call that makes `levels` levels of workflows (the caller is level 1); "" if it
    is allowed."""
    if levels <= max_levels:
        return ""
    return (
        f"Error calling workflow '{uses}'. Reusable workflows can be nested at most {max_levels} levels deep "
        f"(the caller and {max_levels - 1} called workflows)."
    )


# --- 2. input declarations -----------------------------------------------------------------------------
def input_declaration_errors(workflow: dict[str, Any]) -> list[str]:
    """Every input declaration of `workflow` GitHub cannot read: `(event, message)` joined as text."""
    on = triggers(workflow)
    errors = [f"call: {e}" for e in _typed_inputs(on.get("workflow_call"), CALL_INPUT_TYPES, required=True)]
    dispatch = on.get("workflow_dispatch")
    inputs = (dispatch or {}).get("inputs") if isinstance(dispatch, dict) else None
    if inputs and len(inputs) > MAX_DISPATCH_INPUTS:
        errors.append(
            f"dispatch: you may only define up to {MAX_DISPATCH_INPUTS} `inputs` for a "
            "`workflow_dispatch` event"
        )
    errors += [f"dispatch: {e}" for e in _typed_inputs(dispatch, DISPATCH_INPUT_TYPES, required=False)]
    return errors


def call_input_errors(uses: str, workflow: dict[str, Any]) -> list[str]:
    """A called workflow's unreadable `workflow_call` inputs, as its caller's load reports them."""
    found = _typed_inputs(triggers(workflow).get("workflow_call"), CALL_INPUT_TYPES, required=True)
    return [f"error parsing called workflow '{uses}': {error}" for error in found]


def dispatch_input_errors(workflow: dict[str, Any]) -> list[str]:
    """A workflow's unreadable `workflow_dispatch` inputs: GitHub's "Invalid workflow file" errors."""
    errors = input_declaration_errors(workflow)
    return [
        f"Invalid workflow file: {e.removeprefix('dispatch: ')}" for e in errors if e.startswith("dispatch")
    ]


def _typed_inputs(settings: Any, kinds: tuple[str, ...], *, required: bool) -> list[str]:
    errors = []
    inputs = settings.get("inputs") if isinstance(settings, dict) else None
    for name, spec in (inputs or {}).items():
        spec = spec or {}
        if "type" not in spec:
            if required:
                errors.append(f"input '{name}': Required property is missing: type")
        elif spec["type"] not in kinds:
            errors.append(f"input '{name}': Unexpected value '{spec['type']}'")
        elif spec["type"] == "choice" and not spec.get("options"):
            errors.append(f"input '{name}': Required property is missing: options")
    return errors


# --- 3. schedules --------------------------------------------------------------------------------------
def schedule_lint(workflow: dict[str, Any]) -> list[str]:
    """actionlint's errors for schedules that run more often than every 5 minutes."""
    found = []
    for entry in triggers(workflow).get("schedule") or []:
        cron = str((entry or {}).get("cron", ""))
        minutes = schedule_interval_minutes(cron)
        if minutes < SHORTEST_SCHEDULE_MINUTES:
            found.append(
                f"scheduled job runs too frequently. it runs once per {minutes * 60} seconds. the shortest "
                f'interval is once every 5 minutes [events] (cron "{cron}")'
            )
    return found


def schedule_interval_minutes(cron: str) -> int:
    """The shortest gap between two runs of a POSIX cron schedule within a day (a day at most: the day,
    month and weekday fields only space runs further apart)."""
    fields = cron.split()
    if len(fields) != 5:
        raise ValueError(f"a cron schedule has 5 fields, not {len(fields)}: {cron!r}")
    times = sorted(h * 60 + m for h in _cron_field(fields[1], 23) for m in _cron_field(fields[0], 59))
    if len(times) == 1:
        return _DAY
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return min([*gaps, times[0] + _DAY - times[-1]])


def _cron_field(field: str, highest: int) -> set[int]:
    """The values of one cron field: `*`, `a`, `a-b`, each with an optional `/step`, comma-separated."""
    values: set[int] = set()
    for part in field.split(","):
        span, _, step = part.partition("/")
        if span == "*":
            low, high = 0, highest
        elif "-" in span:
            low, high = (int(x) for x in span.split("-", 1))
        else:
            low = int(span)
            high = highest if step else low
        values.update(range(low, high + 1, int(step) if step else 1))
    return values


# --- 4. concurrency ------------------------------------------------------------------------------------
def concurrency_group(concurrency: Any) -> Any:
    """The group a `concurrency:` value names (a string is the group itself); None without one."""
    return concurrency.get("group") if isinstance(concurrency, dict) else concurrency


def deadlock(group: str, job: str, held: dict[str, str]) -> str:
    """GitHub's cancellation of `job` when a workflow or job above it holds `group`; "" when none does.
    `held`: who holds each group above the job, by the group's name without case."""
    holder = held.get(group.lower())
    if holder is None:
        return ""
    return (
        f"Canceling since a deadlock for concurrency group '{group}' was detected between '{holder}' "
        f"and '{job}'"
    )
