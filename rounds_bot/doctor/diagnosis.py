"""The doctor's diagnosis checks: the `claude` binary runs, a key is set, the incident look-ups are installed,
and what the budget has left this month."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from rounds_bot.clock import month_start
from rounds_bot.diagnosis.claude_cli import CLAUDE_INSTALL_HINT
from rounds_bot.diagnosis.configured import LOOKUPS_MISSING, incident_lookups_installed
from rounds_bot.doctor.result import Check, Status
from rounds_bot.settings import Settings
from rounds_bot.store import Store

CLAUDE_VERSION_TIMEOUT_SECONDS = 30


def diagnosis_checks(settings: Settings, now: datetime, environ: dict[str, str]) -> list[Check]:
    mode = settings.diagnoser
    if mode == "off":
        return [Check(area="diagnosis", status="off", detail="ROUNDS_DIAGNOSER=off")]
    checks = []
    binary = settings.claude_bin
    key_set = settings.anthropic_api_key is not None or bool(environ.get("CLAUDE_CODE_OAUTH_TOKEN"))
    if mode in ("auto", "claude-code"):
        checks.append(_claude_binary(binary, environ, required=mode == "claude-code" or key_set))
        checks.append(_lookups(required=mode == "claude-code" or key_set))
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
            fix=CLAUDE_INSTALL_HINT,
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


def _lookups(*, required: bool) -> Check:
    if incident_lookups_installed():
        installed = "incident look-ups installed (trace, logs, counts)"
        return Check(area="diagnosis", status="ok", detail=installed)
    return Check(
        area="diagnosis",
        status="warn" if required else "off",
        detail="the model gets only Read, Grep and Glob: " + LOOKUPS_MISSING,
        fix="the workflow and the actions install it; with `rounds-package`, name `rounds-bot[diagnosis]`",
    )


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
