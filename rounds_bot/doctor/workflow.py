"""The doctor's workflow checks: the newest saved database's age, whether the repository keeps artifacts long
enough, and whether the scheduled workflow is still enabled (public repositories' schedules stop after 60
quiet days)."""

from __future__ import annotations

from datetime import datetime, timedelta

from rounds_bot.config import Settings
from rounds_bot.doctor.result import Check, Status
from rounds_bot.errors import RoundsError
from rounds_bot.github.actions import ActionsApi, Artifact
from rounds_bot.github.artifacts import describe_age, unusable_reason


def saved_state_checks(
    settings: Settings, artifacts: list[Artifact], branch: str, repository_id: object, now: datetime
) -> list[Check]:
    usable = [a for a in artifacts if unusable_reason(a, branch, repository_id) is None]
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


def schedule_checks(settings: Settings, api: ActionsApi, environ: dict[str, str]) -> list[Check]:
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
                fix="add .github/workflows/rounds.yml (see the README), or set ROUNDS_WORKFLOW_FILE",
            )
        ]
    state = workflow.get("state")
    if state == "active":
        return [Check(area="schedule", status="ok", detail=f"workflow {file_name} is enabled")]
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
