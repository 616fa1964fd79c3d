"""The checks behind `rounds doctor`: every part rounds needs, checked at once, each problem with what to do
about it. (The command that prints them is `rounds_bot.cli.doctor`; the SigNoz probe it relies on is
`rounds_bot.sources.signoz.probe`.)

    settings      they parse, and what they turn on (source, tracker, diagnosis, notifications)
    source        SigNoz reachable, its version and the last hour's errors; or the OTLP file readable
                  (doctor/source.py)
    GitHub        the token reads the repository, reads and writes issues, reads Actions and the code;
                  the rate limit left (doctor/repository.py)
    saved state   the newest saved database's age, and whether the repository keeps artifacts long enough
                  (doctor/workflow.py)
    schedule      the workflow is still enabled (public repositories' schedules stop after 60 quiet days)
                  (doctor/workflow.py)
    diagnosis     the `claude` binary runs, a key is set, and what the budget has left this month
                  (doctor/diagnosis.py)
    Zulip         the credentials work (no message is posted) (doctor/zulip.py)

Checks never raise: each becomes a `Check` with a status (doctor/result.py).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from rounds_bot.doctor.diagnosis import diagnosis_checks
from rounds_bot.doctor.repository import github_checks
from rounds_bot.doctor.result import Check, DoctorResult, Status
from rounds_bot.doctor.source import SignozCheck, source_checks
from rounds_bot.doctor.zulip import zulip_checks
from rounds_bot.settings import Settings

__all__ = ["Check", "DoctorResult", "SignozCheck", "Status", "examine"]


def examine(
    settings: Settings,
    *,
    now: datetime | None = None,
    signoz_check: SignozCheck | None = None,
    environ: dict[str, str] | None = None,
) -> DoctorResult:
    """Run every check that the settings make possible."""
    now = now or datetime.now(UTC)
    environ = dict(os.environ if environ is None else environ)
    checks = [Check(area="settings", status="ok", detail=_settings_summary(settings))]
    checks += source_checks(settings, now, signoz_check)
    checks += github_checks(settings, now, environ)
    checks += diagnosis_checks(settings, now, environ)
    checks += zulip_checks(settings)
    return DoctorResult(checks=checks)


def _settings_summary(settings: Settings) -> str:
    return (
        f"source {settings.effective_source() or 'none'}, tracker {settings.tracker}, "
        f"database {settings.signatures_db_path}"
    )
