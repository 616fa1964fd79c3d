"""`rounds doctor` on what adopting rounds gets wrong: a schedule about to stop, look-ups not installed, and a
refused command's line on the job summary."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub
from fake_github.fixtures import repository_env

from rounds_bot.diagnosis import configured
from rounds_bot.doctor import examine
from rounds_bot.settings import Settings

pytestmark = pytest.mark.github_spec


def github_settings(tmp_path: Path, fake: ActionsFakeGitHub, **extra: str) -> Settings:
    values = {
        "ROUNDS_TRACKER": "github",
        **repository_env(fake, tmp_path),
        "ROUNDS_DIAGNOSER": "off",
        **extra,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def schedule_lines(fake: ActionsFakeGitHub, tmp_path: Path, quiet_days: int) -> list[str]:
    now = fake.clock()
    fake.repo.pushed_at = now - timedelta(days=quiet_days)
    result = examine(github_settings(tmp_path, fake), now=now, environ={"PATH": ""})
    return [f"{c.status}: {c.detail} | {c.fix}" for c in result.checks if c.area == "schedule"]


def test_a_public_repository_quiet_for_50_days_is_warned_before_github_stops_its_schedule(fake, tmp_path):
    [enabled, warning] = schedule_lines(fake, tmp_path, quiet_days=50)
    assert enabled.startswith("ok: workflow rounds.yml is enabled")
    assert warning.startswith(
        "warn: no push to the repository for 50 days: GitHub disables the schedule of a public repository "
        "after 60 days without activity, in about 10 days"
    )
    assert "push a commit before then" in warning


def test_a_recently_pushed_repository_gets_no_warning(fake, tmp_path):
    assert schedule_lines(fake, tmp_path, quiet_days=10) == ["ok: workflow rounds.yml is enabled | None"]


def test_a_diagnosis_without_the_lookups_installed_is_a_warning_and_the_round_says_so(
    fake, tmp_path, monkeypatch
):
    monkeypatch.setattr(configured, "incident_lookups_installed", lambda: False)
    from rounds_bot.doctor import diagnosis as doctor_diagnosis

    monkeypatch.setattr(doctor_diagnosis, "incident_lookups_installed", lambda: False)
    chosen = github_settings(tmp_path, fake, ROUNDS_DIAGNOSER="claude-code", ANTHROPIC_API_KEY="sk-test")
    result = examine(chosen, now=fake.clock(), environ={"PATH": ""})
    [lookups] = [c for c in result.checks if "incident look-ups" in c.detail]
    assert lookups.status == "warn"
    assert lookups.detail == (
        "the model gets only Read, Grep and Glob: the incident look-ups are not installed: install rounds "
        "with the `diagnosis` extra (pip install 'rounds-bot[diagnosis]')"
    )
    monkeypatch.setenv("PATH", str(_fake_claude(tmp_path)))
    diagnoser, mode = configured.build_diagnoser(chosen.model_copy(update={"claude_bin": "claude"}))
    assert diagnoser is not None and diagnoser.incident_tools is None  # type: ignore[attr-defined]
    assert mode.endswith("without incident look-ups: " + configured.LOOKUPS_MISSING)


def test_with_the_lookups_installed_the_doctor_says_so(fake, tmp_path):
    chosen = github_settings(tmp_path, fake, ROUNDS_DIAGNOSER="claude-code", ANTHROPIC_API_KEY="sk-test")
    result = examine(chosen, now=fake.clock(), environ={"PATH": ""})
    assert any(c.detail == "incident look-ups installed (trace, logs, counts)" for c in result.checks)


def _fake_claude(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    script = folder / "claude"
    script.write_text("#!/bin/sh\necho '2.1.328 (Claude Code)'\n")
    script.chmod(0o755)
    return folder
