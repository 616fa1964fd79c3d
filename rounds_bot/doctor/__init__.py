"""The checks behind `rounds doctor`: every part rounds needs, checked at once, each problem with what to do
about it. (The command that prints them is `rounds_bot.cli.doctor`; the SigNoz probe it relies on is
`rounds_bot.sources.signoz.probe`.)

    settings      they parse, and what they turn on (source, tracker, diagnosis, notifications)
    database      SIGNATURES_DB_PATH names a file (not a folder) in a folder that exists, is writable and
                  has room, and an existing file is an SQLite database
    source        SigNoz reachable, its version and the last hour's errors; or the OTLP file readable
                  (doctor/source.py)
    GitHub        the token reads the repository, reads and writes issues, reads Actions and the code;
                  the rate limit left (doctor/repository.py)
    saved state   the newest saved database's age, and whether the repository keeps artifacts long enough
                  (doctor/workflow.py); with ROUNDS_STATE_KEY, whether the next restore would take it, its
                  signature verified as the restore does, or without the key that the gap is open
                  (doctor/saved_signature.py)
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
from pathlib import Path

from rounds_bot.doctor.diagnosis import diagnosis_checks
from rounds_bot.doctor.repository import github_checks
from rounds_bot.doctor.result import Check, DoctorResult, Status
from rounds_bot.doctor.source import SignozCheck, source_checks
from rounds_bot.doctor.zulip import zulip_checks
from rounds_bot.errors import StoreError
from rounds_bot.settings import Settings
from rounds_bot.store.opening import check_file, storage_problem

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
    checks.append(_database(Path(settings.signatures_db_path)))
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


def _database(path: Path) -> Check:
    """Where the signature database lives: what `Store.open` would refuse, said before a round is run."""
    try:
        if not path.parent.is_dir():
            raise StoreError(
                f"the folder {path.parent} of the signature database does not exist",
                hint="create it, or set SIGNATURES_DB_PATH to a file in a folder that exists",
            )
        check_file(path)
        problem = storage_problem(path, "checked before any round")
        if problem is not None:
            raise problem
    except StoreError as error:
        message = str(error)
        if error.hint:
            message = message.removesuffix(f" ({error.hint})")
        return Check(area="database", status="fix", detail=message, fix=error.hint)
    state = "exists" if path.exists() else "is created by the first round"
    return Check(area="database", status="ok", detail=f"{path} {state}")
