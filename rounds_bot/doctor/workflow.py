"""The doctor's workflow checks: the newest saved database's age, whether the repository keeps artifacts long
enough, whether the next restore would take it with ROUNDS_STATE_KEY (`doctor.saved_signature`), and whether
the scheduled workflow is still enabled (public repositories' schedules stop after 60 quiet days), with a
warning before that happens."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from rounds_bot.doctor.result import Check, Status
from rounds_bot.doctor.saved_signature import signature_check
from rounds_bot.errors import RoundsError
from rounds_bot.github.actions import ActionsApi, Artifact
from rounds_bot.github.artifacts import describe_age, unusable_reason
from rounds_bot.settings import Settings

#: GitHub disables the schedules of a public repository after this many days without activity in it
#: (docs.github.com: "Disabling and enabling a workflow"); rounds' own issues and artifacts do not count.
INACTIVITY_DAYS = 60
#: How long before that the doctor starts to warn.
WARN_DAYS_BEFORE = 15


def saved_state_checks(
    settings: Settings,
    api: ActionsApi,
    artifacts: list[Artifact],
    branch: str,
    repository_id: object,
    now: datetime,
) -> list[Check]:
    usable = [a for a in artifacts if unusable_reason(a, branch, repository_id) is None]
    signed = signature_check(settings, api, usable)
    return _saved(settings, usable, now) + ([] if signed is None else [signed])


def _saved(settings: Settings, usable: list[Artifact], now: datetime) -> list[Check]:
    """The newest usable saved database's age, and how long the repository keeps it."""
    if not usable:
        return [
            Check(
                area="saved state",
                status="warn",
                detail=f"no saved database named {settings.artifact_name!r} yet",
                fix="the first scheduled run saves one; until then each run rebuilds it from the issues",
            )
        ]
    newest = usable[0]
    checks = [_age(settings, newest, now)]
    if newest.created_at and newest.expires_at:
        kept = (newest.expires_at - newest.created_at).days
        if kept + 1 < settings.artifact_retention_days:
            checks.append(
                Check(
                    area="saved state",
                    status="warn",
                    detail=f"artifacts are kept {kept} days, less than ROUNDS_ARTIFACT_RETENTION_DAYS="
                    f"{settings.artifact_retention_days}",
                    fix="the repository's (or organisation's) artifact retention limit is lower: raise it in "
                    "Settings -> Actions -> General, or lower the setting",
                )
            )
    return checks


def _age(settings: Settings, newest: Artifact, now: datetime) -> Check:
    """A saved database older than two poll intervals (and an hour) means the scheduled runs stopped."""
    age = now - newest.created_at if newest.created_at else None
    expected = timedelta(seconds=settings.poll_interval_seconds * 2) + timedelta(hours=1)
    status: Status = "warn" if age is not None and age > expected else "ok"
    return Check(
        area="saved state",
        status=status,
        detail=f"newest saved database: artifact {newest.id}, saved {describe_age(newest.created_at, now)}",
        fix="scheduled runs seem to have stopped: look at the workflow's runs" if status == "warn" else None,
    )


def schedule_checks(
    settings: Settings,
    api: ActionsApi,
    environ: dict[str, str],
    repository: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> list[Check]:
    file_name = settings.workflow_file or _running_workflow(environ) or "rounds.yml"
    try:
        workflow = api.workflow(file_name)
    except RoundsError as exc:
        return [Check(area="schedule", status="warn", detail=f"cannot read workflow {file_name}: {exc}")]
    if workflow is None:
        return [
            Check(
                area="schedule",
                status="warn",
                detail=f"no workflow {file_name} in the repository",
                fix="add .github/workflows/rounds.yml (rounds' README), or set ROUNDS_WORKFLOW_FILE",
            )
        ]
    state = workflow.get("state")
    if state == "active":
        enabled = Check(area="schedule", status="ok", detail=f"workflow {file_name} is enabled")
        soon = _inactivity(repository or {}, now) if now is not None else None
        return [enabled] if soon is None else [enabled, soon]
    why = {
        "disabled_inactivity": "GitHub disabled it after 60 days without activity in the repository",
        "disabled_manually": "someone disabled it",
        "disabled_fork": "workflows are disabled in forks",
    }.get(str(state), f"its state is {state}")
    return [
        Check(
            area="schedule",
            status="fix",
            detail=f"workflow {file_name} is not running: {why}",
            fix="enable it: the Actions tab -> the workflow -> Enable workflow",
        )
    ]


def _running_workflow(environ: dict[str, str]) -> str | None:
    """`owner/repo/.github/workflows/rounds.yml@refs/heads/main` -> `rounds.yml` (the caller's workflow)."""
    ref = environ.get("GITHUB_WORKFLOW_REF", "")
    path = ref.split("@", 1)[0]
    return path.rsplit("/", 1)[-1] if "/.github/workflows/" in path else None


def _inactivity(repository: dict[str, Any], now: datetime) -> Check | None:
    """A public repository that has had no push for a while: its schedule stops at 60 days."""
    if repository.get("private") is not False or not repository.get("pushed_at"):
        return None
    pushed = datetime.fromisoformat(str(repository["pushed_at"]).replace("Z", "+00:00"))
    quiet = (now - pushed).days
    left = INACTIVITY_DAYS - quiet
    if left > WARN_DAYS_BEFORE:
        return None
    when = f"in about {left} days" if left > 0 else "any time now"
    return Check(
        area="schedule",
        status="warn",
        detail=f"no push to the repository for {quiet} days: GitHub disables the schedule of a public "
        f"repository after {INACTIVITY_DAYS} days without activity, {when}",
        fix="push a commit before then (rounds' own issues do not count), or enable the workflow again "
        "when it stops (the Actions tab -> the workflow -> Enable workflow)",
    )
