"""`rounds doctor`: every part checked at once, each problem with what to do about it."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github.actions_routes import ActionsFakeGitHub, running_actions_fake
from fake_github.fixtures import BOT_PERMISSIONS, TOKEN
from fake_zulip import FakeZulip
from signoz_emulator import SignozEmulator
from signoz_fixtures import T0_NS, fixture_dataset

from rounds_bot.cli.app import main
from rounds_bot.doctor import DoctorResult, examine
from rounds_bot.settings import Settings
from rounds_bot.sources.signoz.times import ns_to_datetime

pytestmark = pytest.mark.github_spec
NOW = ns_to_datetime(T0_NS + 3_500 * 1_000_000_000)


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    yield from running_actions_fake()


@pytest.fixture(scope="module")
def signoz() -> Iterator[SignozEmulator]:
    with SignozEmulator(fixture_dataset()) as emulator:
        yield emulator


@pytest.fixture
def claude_on_path(tmp_path: Path) -> str:
    """A stand-in `claude` that answers --version like the real one."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "claude"
    script.write_text("#!/bin/sh\necho '2.1.328 (Claude Code)'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def settings(tmp_path: Path, fake: ActionsFakeGitHub, signoz: SignozEmulator, **extra: str) -> Settings:
    values = {
        "SIGNOZ_API_URL": signoz.url,
        "ROUNDS_TRACKER": "github",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "octo/app",
        "ROUNDS_GITHUB_API_URL": fake.base_url,
        "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
        "ANTHROPIC_API_KEY": "sk-test",
        **extra,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def by_area(result: DoctorResult) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for check in result.checks:
        found.setdefault(check.area, []).append(f"{check.status}: {check.detail}")
    return found


def test_a_healthy_setup_has_nothing_to_fix(fake, signoz, tmp_path, claude_on_path):
    fake.state.add_artifact(fake.repo, "rounds-db", b"zip")
    fake.repo.pushed_at = NOW  # a repository with recent pushes: its schedule is in no danger
    with FakeZulip(streams=("ops",)) as zulip:
        chosen = settings(
            tmp_path,
            fake,
            signoz,
            ZULIP_SITE=zulip.url,
            ZULIP_EMAIL=zulip.email,
            ZULIP_API_KEY=zulip.api_key,
            ROUNDS_ZULIP_STREAM="ops",
        )
        result = examine(chosen, now=NOW, environ={"PATH": claude_on_path})
    assert result.problems == [], result.render()
    areas = by_area(result)
    assert areas["source"] == ["ok: SigNoz v0.138.0 at " + signoz.url]
    assert areas["last hour"][0] == "ok: exceptions: 5 occurrences in 3 exception groups"
    assert "ok: issues: write (created the 'rounds' label, as the first round would)" in areas["token"]
    assert any("requests left this hour" in line for line in areas["token"])
    assert areas["schedule"] == ["ok: workflow rounds.yml is enabled"]
    assert areas["diagnosis"][0].endswith("2.1.328 (Claude Code)")
    assert areas["Zulip"][0].startswith("ok: posting as rounds <rounds-bot@example.zulipchat.com> to ops")
    assert zulip.messages == []
    assert result.render().endswith("nothing to fix")


def test_every_problem_is_listed_with_its_fix(fake, signoz, tmp_path):
    fake.add_token("read-only-token", issues="read", actions="read")
    fake.workflows["rounds.yml"] = "disabled_inactivity"
    chosen = settings(
        tmp_path,
        fake,
        signoz,
        GITHUB_TOKEN="read-only-token",
        ZULIP_SITE="https://chat.example.com",
    )
    result = examine(chosen, now=NOW, environ={"PATH": str(tmp_path)})
    text = result.render()
    assert "FIX   token: cannot use issues: write" in text and "grant `issues: write`" in text
    assert "cannot use contents: read" in text and "grant `contents: read` (the code, for diagnoses)" in text
    assert "workflow rounds.yml is not running: GitHub disabled it after 60 days" in text
    assert "the Claude Code CLI (claude) is not on PATH" in text
    assert "Zulip notifications are half configured" in text
    assert text.endswith(f"{len(result.problems)} things to fix") and len(result.problems) >= 5


def test_an_old_or_short_lived_saved_state_is_a_warning(fake, signoz, tmp_path, claude_on_path):
    fake.state.add_artifact(fake.repo, "rounds-db", b"zip")
    chosen = settings(tmp_path, fake, signoz, ROUNDS_ARTIFACT_RETENTION_DAYS="120", ROUNDS_DIAGNOSER="off")
    later = examine(chosen, now=NOW.replace(year=2030), environ={"PATH": claude_on_path})
    saved = by_area(later)["saved state"]
    assert saved[0].startswith("warn: newest saved database") and "days ago" in saved[0]
    assert saved[1] == "warn: artifacts are kept 90 days, less than ROUNDS_ARTIFACT_RETENTION_DAYS=120"
    assert by_area(later)["diagnosis"] == ["off: ROUNDS_DIAGNOSER=off"]


def test_without_a_source_or_a_saved_state(fake, tmp_path, claude_on_path, clean_env):
    chosen = Settings(  # type: ignore[call-arg]
        _env_file=None,
        GITHUB_TOKEN=TOKEN,
        GITHUB_REPOSITORY="octo/app",
        ROUNDS_GITHUB_API_URL=fake.base_url,
        ROUNDS_WORKFLOW_FILE="elsewhere.yml",
    )
    areas = by_area(examine(chosen, environ={"PATH": claude_on_path}))
    assert areas["source"] == ["fix: no telemetry source is configured"]
    assert areas["saved state"][0] == "warn: no saved database named 'rounds-db' yet"
    assert areas["saved state"][1].startswith("off: ROUNDS_STATE_KEY is not set here")  # no fix jobs: off
    assert len(areas["saved state"]) == 2
    assert areas["schedule"] == ["warn: no workflow elsewhere.yml in the repository"]
    assert "off: no ANTHROPIC_API_KEY: problems are filed without a diagnosis" in areas["diagnosis"]


def test_the_doctor_command_exits_1_when_something_must_be_fixed(tmp_path, clean_env, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["doctor"], env={"PATH": str(tmp_path)})
    assert result.exit_code == 1
    assert "FIX   source: no telemetry source is configured" in result.output
    assert "off   GitHub: GITHUB_TOKEN and GITHUB_REPOSITORY are not both set" in result.output


def fix_settings(tmp_path: Path, fake: ActionsFakeGitHub, signoz: SignozEmulator, **extra: str) -> Settings:
    """Fix pull requests on: a test command, a key, and a `claude` that exists."""
    return settings(
        tmp_path,
        fake,
        signoz,
        ROUNDS_FIX_TEST_COMMAND="python -m pytest -x -q",
        ROUNDS_CLAUDE_BIN=sys.executable,
        **extra,
    )


def test_with_fixes_on_a_workflow_token_cannot_read_whether_actions_may_open_pull_requests(
    fake, signoz, tmp_path, claude_on_path
):
    result = examine(fix_settings(tmp_path, fake, signoz), now=NOW, environ={"PATH": claude_on_path})
    [check] = [c for c in result.checks if c.area == "fixes"]
    assert check.status == "warn"
    assert check.detail.startswith("could not read whether GitHub Actions may open pull requests here")
    assert check.fix is not None and check.fix.startswith(
        'look at Settings → Actions → General → Workflow permissions → "Allow GitHub Actions to create and '
        'approve pull requests": while it is off, rounds comments a link'
    )
    assert "warn  fixes: could not read whether GitHub Actions may open pull requests" in result.render()
    assert "pull-requests: write" not in result.render()


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        (
            False,
            "warn: GitHub Actions may not open pull requests in this repository: rounds pushes each fix's "
            "branch and comments a link on the issue that opens its pull request",
        ),
        (
            True,
            "ok: GitHub Actions may open pull requests here: rounds opens each fix as a draft pull request",
        ),
    ],
)
def test_with_fixes_on_the_doctor_says_whether_actions_may_open_pull_requests(
    fake, signoz, tmp_path, claude_on_path, allowed, expected
):
    fake.add_token("app-token", kind="app", administration="read", **BOT_PERMISSIONS)
    fake.repo.can_approve_pull_request_reviews = allowed
    chosen = fix_settings(tmp_path, fake, signoz, GITHUB_TOKEN="app-token")
    result = examine(chosen, now=NOW, environ={"PATH": claude_on_path})
    assert by_area(result)["fixes"] == [expected]
    text = result.render()
    if not allowed:
        assert (
            "      -> to let rounds open them itself, turn on Settings → Actions → General → Workflow "
            'permissions → "Allow GitHub Actions to create and approve pull requests", or give the fix job '
            "a GitHub App token (the fix action's `github-token` input; docs/fixes.md)"
        ) in text


def test_with_fixes_off_the_doctor_does_not_ask_about_pull_requests(fake, signoz, tmp_path, claude_on_path):
    result = examine(settings(tmp_path, fake, signoz), now=NOW, environ={"PATH": claude_on_path})
    assert by_area(result)["fixes"] == [
        "off: fix pull requests are off: ROUNDS_FIX_TEST_COMMAND (the repository's own test command) "
        "is not set"
    ]
    assert not fake.requests("actions/get-github-actions-default-workflow-permissions-repository")
