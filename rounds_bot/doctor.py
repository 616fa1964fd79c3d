"""`rounds doctor`: every part rounds needs, checked at once, each problem with what to do about it.

    settings      they parse, and what they turn on (source, tracker, diagnosis, notifications)
    source        SigNoz reachable, its version and the last hour's errors; or the OTLP file readable
    GitHub        the token reads the repository, reads and writes issues, reads Actions and the code;
                  the rate limit left
    saved state   the newest saved database's age, and whether the repository keeps artifacts long enough
    schedule      the workflow is still enabled (public repositories' schedules stop after 60 quiet days)
    diagnosis     the `claude` binary runs, a key is set, and what the budget has left this month
    Zulip         the credentials work (no message is posted)

Checks never raise: each becomes a line with a status.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import Field

from rounds_bot.config import Settings
from rounds_bot.errors import RoundsError
from rounds_bot.models import Frozen
from rounds_bot.round.diagnosis_step import month_start
from rounds_bot.store import Store

Status = Literal["ok", "warn", "fix", "off"]
CLAUDE_VERSION_TIMEOUT_SECONDS = 30


class Check(Frozen):
    area: str
    status: Status
    detail: str
    fix: str | None = Field(default=None, description="what to do, for `warn` and `fix`")


class DoctorResult(Frozen):
    checks: list[Check] = Field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fix"]

    def render(self) -> str:
        marks = {"ok": "ok  ", "warn": "warn", "fix": "FIX ", "off": "off "}
        lines = []
        for check in self.checks:
            lines.append(f"{marks[check.status]}  {check.area}: {check.detail}")
            if check.fix:
                lines.append(f"      -> {check.fix}")
        count = len(self.problems)
        lines.append("")
        lines.append("nothing to fix" if count == 0 else f"{count} thing{'s' if count > 1 else ''} to fix")
        return "\n".join(lines)


def examine(
    settings: Settings,
    *,
    now: datetime | None = None,
    signoz_check: Callable[..., object] | None = None,
    environ: dict[str, str] | None = None,
) -> DoctorResult:
    """Run every check that the settings make possible."""
    now = now or datetime.now(UTC)
    environ = dict(os.environ if environ is None else environ)
    checks = [Check(area="settings", status="ok", detail=_settings_summary(settings))]
    checks += _source(settings, now, signoz_check)
    checks += _github(settings, now, environ)
    checks += _diagnosis(settings, now, environ)
    checks += _zulip(settings)
    return DoctorResult(checks=checks)


def _settings_summary(settings: Settings) -> str:
    return (
        f"source {settings.effective_source() or 'none'}, tracker {settings.tracker}, "
        f"database {settings.signatures_db_path}"
    )


# --- the source ---------------------------------------------------------------------------------
def _source(settings: Settings, now: datetime, signoz_check: Callable[..., object] | None) -> list[Check]:
    spec = settings.effective_source()
    if spec is None:
        return [
            Check(
                area="source",
                status="fix",
                detail="no telemetry source is configured",
                fix="set SIGNOZ_API_URL and SIGNOZ_API_KEY, or ROUNDS_SOURCE=otlp-file:PATH",
            )
        ]
    if spec.startswith("otlp-file:"):
        path = Path(spec.removeprefix("otlp-file:"))
        if path.is_file():
            return [
                Check(area="source", status="ok", detail=f"OTLP file {path} ({path.stat().st_size:,} bytes)")
            ]
        return [
            Check(
                area="source",
                status="fix",
                detail=f"OTLP file {path} does not exist",
                fix="fix ROUNDS_SOURCE",
            )
        ]
    if not settings.signoz_api_url:
        return [
            Check(
                area="source",
                status="fix",
                detail="ROUNDS_SOURCE=signoz without SIGNOZ_API_URL",
                fix="set SIGNOZ_API_URL, e.g. http://signoz.internal:8080",
            )
        ]
    if signoz_check is None:
        from rounds_bot.sources.signoz.probe import check as signoz_check
    report = signoz_check(settings.signoz_api_url, settings.signoz_api_key, now=now)
    checks = []
    if report.ok:  # type: ignore[attr-defined]
        hour = report.last_hour  # type: ignore[attr-defined]
        errors = f"; last hour: {hour.exception_groups} exception groups" if hour is not None else ""
        detail = f"SigNoz {report.version} at {report.url}{errors}"  # type: ignore[attr-defined]
        checks.append(Check(area="source", status="ok", detail=detail))
    for problem in report.problems:  # type: ignore[attr-defined]
        checks.append(Check(area="source", status="fix", detail=problem, fix="see the message"))
    for note in report.notes:  # type: ignore[attr-defined]
        checks.append(Check(area="source", status="warn", detail=note))
    return checks


# --- GitHub -------------------------------------------------------------------------------------
def _github(settings: Settings, now: datetime, environ: dict[str, str]) -> list[Check]:
    if not settings.github_token or not settings.github_repository:
        status: Status = "fix" if settings.tracker == "github" else "off"
        return [
            Check(
                area="GitHub",
                status=status,
                detail="GITHUB_TOKEN and GITHUB_REPOSITORY are not both set",
                fix="in Actions they come from the workflow; locally export a token and owner/name"
                if status == "fix"
                else None,
            )
        ]
    from rounds_bot.github.actions import actions_api_from_settings
    from rounds_bot.github.labels import BOT_LABEL, label_spec

    api = actions_api_from_settings(settings)
    checks: list[Check] = []
    try:
        repository = api.repository_info()
    except RoundsError as exc:
        return [
            Check(
                area="GitHub", status="fix", detail=str(exc), fix="check GITHUB_TOKEN and GITHUB_REPOSITORY"
            )
        ]
    branch = str(repository.get("default_branch") or "main")
    checks.append(
        Check(area="GitHub", status="ok", detail=f"{settings.github_repository}, default branch {branch}")
    )
    if repository.get("has_issues") is False:
        checks.append(
            Check(
                area="GitHub",
                status="fix",
                detail="issues are disabled in this repository",
                fix="enable Issues in the repository's Settings -> General -> Features",
            )
        )
    spec = label_spec(BOT_LABEL)
    probes: list[tuple[str, str, Callable[[], object]]] = [
        ("issues: read", "`issues: read`", lambda: api.list_labels(None)),
        (
            "issues: write",
            "`issues: write`",
            lambda: api.create_label(spec.name, spec.color, spec.description),
        ),
        (
            "actions: read",
            "`actions: read` (the saved database)",
            lambda: api.artifacts(settings.artifact_name),
        ),
        ("contents: read", "`contents: read` (the code, for diagnoses)", lambda: api.branch_head(branch)),
    ]
    artifacts = None
    for name, grant, probe in probes:
        try:
            result = probe()
        except RoundsError as exc:
            checks.append(
                Check(
                    area="token",
                    status="fix",
                    detail=f"cannot use {name}: {exc}",
                    fix=f"grant {grant} in the job's `permissions:`",
                )
            )
            continue
        note = ""
        if name == "issues: write" and result is True:
            note = f" (created the {BOT_LABEL!r} label, as the first round would)"
        if name == "actions: read":
            artifacts = result
        checks.append(Check(area="token", status="ok", detail=f"{name}{note}"))
    try:
        limit = api.rate_limit()
        status = "ok" if int(limit.get("remaining", 0)) > 100 else "warn"
        checks.append(
            Check(
                area="token",
                status=status,
                detail=f"{limit.get('remaining')} of {limit.get('limit')} requests left this hour",
            )
        )
    except RoundsError as exc:
        checks.append(Check(area="token", status="warn", detail=f"rate limit unknown: {exc}"))
    if artifacts is not None:
        checks += _saved_state(settings, artifacts, branch, repository.get("id"), now)  # type: ignore[arg-type]
    checks += _schedule(settings, api, environ)
    return checks


def _saved_state(
    settings: Settings, artifacts: list, branch: str, repository_id: object, now: datetime
) -> list[Check]:
    from rounds_bot.github.artifacts import _unusable, describe_age

    usable = [a for a in artifacts if _unusable(a, branch, repository_id) is None]
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
    checks = []
    age = now - newest.created_at if newest.created_at else None
    expected = timedelta(seconds=settings.poll_interval_seconds * 2) + timedelta(hours=1)
    status: Status = "warn" if age is not None and age > expected else "ok"
    checks.append(
        Check(
            area="saved state",
            status=status,
            detail=f"newest saved database: artifact {newest.id}, "
            f"saved {describe_age(newest.created_at, now)}",
            fix="scheduled runs seem to have stopped: look at the workflow's runs"
            if status == "warn"
            else None,
        )
    )
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


def _schedule(settings: Settings, api: object, environ: dict[str, str]) -> list[Check]:
    file_name = settings.workflow_file or _running_workflow(environ) or "rounds.yml"
    try:
        workflow = api.workflow(file_name)  # type: ignore[attr-defined]
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


# --- diagnosis ----------------------------------------------------------------------------------
def _diagnosis(settings: Settings, now: datetime, environ: dict[str, str]) -> list[Check]:
    mode = settings.diagnoser
    if mode == "off":
        return [Check(area="diagnosis", status="off", detail="ROUNDS_DIAGNOSER=off")]
    checks = []
    binary = settings.claude_bin
    key_set = settings.anthropic_api_key is not None or bool(environ.get("CLAUDE_CODE_OAUTH_TOKEN"))
    if mode in ("auto", "claude-code"):
        checks.append(_claude_binary(binary, environ, required=mode == "claude-code" or key_set))
        if not key_set:
            status: Status = "fix" if mode == "claude-code" else "off"
            checks.append(
                Check(
                    area="diagnosis",
                    status=status,
                    detail="no ANTHROPIC_API_KEY: problems are filed without a diagnosis",
                    fix="add the ANTHROPIC_API_KEY secret to turn diagnoses on",
                )
            )
    checks.append(_budget(settings, now))
    return checks


def _claude_binary(binary: str, environ: dict[str, str], *, required: bool) -> Check:
    found = shutil.which(binary, path=environ.get("PATH"))
    missing: Status = "fix" if required else "off"
    if found is None:
        return Check(
            area="diagnosis",
            status=missing,
            detail=f"the Claude Code CLI ({binary}) is not on PATH",
            fix="npm install -g @anthropic-ai/claude-code, or set ROUNDS_CLAUDE_BIN",
        )
    try:
        done = subprocess.run(
            [found, "--version"],
            capture_output=True,
            text=True,
            timeout=CLAUDE_VERSION_TIMEOUT_SECONDS,
            env={"PATH": environ.get("PATH", ""), "HOME": environ.get("HOME", "/tmp")},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(
            area="diagnosis",
            status="fix",
            detail=f"{found} does not run: {exc}",
            fix="reinstall the Claude Code CLI",
        )
    if done.returncode != 0:
        return Check(
            area="diagnosis",
            status="fix",
            detail=f"{found} --version failed: {done.stderr.strip()[:200]}",
            fix="reinstall the Claude Code CLI",
        )
    return Check(area="diagnosis", status="ok", detail=f"{found}: {done.stdout.strip()}")


def _budget(settings: Settings, now: datetime) -> Check:
    monthly = settings.monthly_budget_usd
    caps = (
        f"${settings.claude_max_budget_usd:.2f} per diagnosis, ${settings.round_budget_usd:.2f} a round, "
        f"${monthly:.2f} a month"
    )
    path = Path(settings.signatures_db_path)
    if not path.is_file():
        return Check(area="budget", status="ok", detail=f"{caps}; no database here to read the spending from")
    store = Store.open(path)
    try:
        spent = store.spent_since(month_start(now))
    finally:
        store.close()
    if spent >= monthly:
        return Check(
            area="budget",
            status="warn",
            detail=f"{caps}; ${spent:.2f} spent this month: the cap is reached",
            fix="diagnoses wait until next month, or raise ROUNDS_MONTHLY_BUDGET_USD",
        )
    return Check(area="budget", status="ok", detail=f"{caps}; ${spent:.2f} spent this month")


# --- Zulip --------------------------------------------------------------------------------------
def _zulip(settings: Settings) -> list[Check]:
    from rounds_bot.notify.zulip import zulip_from_settings

    try:
        notifier = zulip_from_settings(settings)
    except RoundsError as exc:
        return [Check(area="Zulip", status="fix", detail=str(exc))]
    if notifier is None:
        return [Check(area="Zulip", status="off", detail="notifications are off (no ZULIP_* settings)")]
    with notifier:
        try:
            who = notifier.whoami()
        except RoundsError as exc:
            return [Check(area="Zulip", status="fix", detail=str(exc))]
    return [
        Check(
            area="Zulip",
            status="ok",
            detail=f"posting as {who} to {notifier.target.stream} > {notifier.target.topic}",
        )
    ]
