"""The doctor's GitHub checks: the token reads the repository, reads and writes issues, reads Actions and the
code; the rate limit left; with fix pull requests on, whether GitHub Actions may open pull requests here.
Then what the workflow keeps and whether it runs (`doctor.workflow`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from rounds_bot.doctor.result import Check, Status
from rounds_bot.doctor.workflow import saved_state_checks, schedule_checks
from rounds_bot.errors import RoundsError
from rounds_bot.fixing.enabled import fixes_off
from rounds_bot.github.actions import ActionsApi, Artifact, actions_api_from_settings
from rounds_bot.github.labels import BOT_LABEL, label_spec
from rounds_bot.github.pulls import ACTIONS_SETTING
from rounds_bot.settings import Settings

T = TypeVar("T")


def github_checks(settings: Settings, now: datetime, environ: dict[str, str]) -> list[Check]:
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
    api = actions_api_from_settings(settings)
    try:
        repository = api.repository_info()
    except RoundsError as exc:
        return [
            Check(
                area="GitHub", status="fix", detail=str(exc), fix="check GITHUB_TOKEN and GITHUB_REPOSITORY"
            )
        ]
    branch = str(repository.get("default_branch") or "main")
    checks = _repository(settings, repository, branch)
    token, artifacts = _permissions(api, settings, branch)
    checks += token
    checks.append(_rate_limit(api))
    off = fixes_off(settings)
    if off is None:
        checks.append(_pull_requests_allowed(api))
    else:
        # informational: the round's doctor cannot know whether the repository has the fix jobs
        fix = "with the fix jobs (the README's step 4), add ROUNDS_FIX_TEST_COMMAND=... to ROUNDS_SETTINGS"
        checks.append(Check(area="fixes", status="off", detail=f"fix pull requests are off: {off}", fix=fix))
    if artifacts is not None:
        checks += saved_state_checks(settings, api, artifacts, branch, repository.get("id"), now)
    checks += schedule_checks(settings, api, environ, repository, now)
    return checks


def _repository(settings: Settings, repository: dict[str, Any], branch: str) -> list[Check]:
    checks = [
        Check(area="GitHub", status="ok", detail=f"{settings.github_repository}, default branch {branch}")
    ]
    if repository.get("has_issues") is False:
        checks.append(
            Check(
                area="GitHub",
                status="fix",
                detail="issues are disabled in this repository",
                fix="enable Issues in the repository's Settings -> General -> Features",
            )
        )
    return checks


def _permissions(
    api: ActionsApi, settings: Settings, branch: str
) -> tuple[list[Check], list[Artifact] | None]:
    """What the token may do, each proved by one request; and the saved databases, when it may read them."""
    spec = label_spec(BOT_LABEL)
    read, _ = _permission("issues: read", "`issues: read`", lambda: api.list_labels(None))
    write, created = _permission(
        "issues: write", "`issues: write`", lambda: api.create_label(spec.name, spec.color, spec.description)
    )
    if created:
        write = Check(
            area="token",
            status="ok",
            detail=f"issues: write (created the {BOT_LABEL!r} label, as the first round would)",
        )
    actions, artifacts = _permission(
        "actions: read", "`actions: read` (the saved database)", lambda: api.artifacts(settings.artifact_name)
    )
    contents, _ = _permission(
        "contents: read", "`contents: read` (the code, for diagnoses)", lambda: api.branch_head(branch)
    )
    return [read, write, actions, contents], artifacts


def _permission(name: str, grant: str, probe: Callable[[], T]) -> tuple[Check, T | None]:
    """`ok` and the probe's answer, or `fix` with the grant the job's `permissions:` needs (and None)."""
    try:
        answer = probe()
    except RoundsError as exc:
        return (
            Check(
                area="token",
                status="fix",
                detail=f"cannot use {name}: {exc}",
                fix=f"grant {grant} in the job's `permissions:`",
            ),
            None,
        )
    return Check(area="token", status="ok", detail=name), answer


def _pull_requests_allowed(api: ActionsApi) -> Check:
    """Whether a workflow's GITHUB_TOKEN may open fixes' pull requests, or rounds offers a link instead."""
    try:
        settings = api.workflow_permissions()
    except RoundsError as exc:
        detail = f"the repository's Actions workflow permissions are unknown: {exc}"
        return Check(area="fixes", status="warn", detail=detail)
    if settings is None:
        return Check(
            area="fixes",
            status="warn",
            detail="could not read whether GitHub Actions may open pull requests here (this token may not "
            "read the repository's Actions settings: it takes `administration: read`)",
            fix=f"look at {ACTIONS_SETTING}: while it is off, rounds comments a link that opens each fix's "
            "pull request instead of opening it (a GitHub App token in the fix action's `github-token` "
            "is not affected)",
        )
    if not settings.can_approve_pull_request_reviews:
        return Check(
            area="fixes",
            status="warn",
            detail="GitHub Actions may not open pull requests in this repository: rounds pushes each fix's "
            "branch and comments a link on the issue that opens its pull request",
            fix=f"to let rounds open them itself, turn on {ACTIONS_SETTING}, or give the fix job a GitHub "
            "App token (the fix action's `github-token` input; docs/fixes.md)",
        )
    detail = "GitHub Actions may open pull requests here: rounds opens each fix as a draft pull request"
    return Check(area="fixes", status="ok", detail=detail)


def _rate_limit(api: ActionsApi) -> Check:
    try:
        limit = api.rate_limit()
    except RoundsError as exc:
        return Check(area="token", status="warn", detail=f"rate limit unknown: {exc}")
    status: Status = "ok" if int(limit.get("remaining", 0)) > 100 else "warn"
    return Check(
        area="token",
        status=status,
        detail=f"{limit.get('remaining')} of {limit.get('limit')} requests left this hour",
    )
