"""`rounds doctor` with ROUNDS_STATE_KEY says whether the next restore would put the newest saved database in
place: it downloads and verifies the artifacts as the restore does (signed and valid; unsigned, so the next
round rebuilds from the issues; refused, and why), and writes nothing. Without the key it says, in one line,
that the gap the key closes is open."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fake_github.actions_routes import ActionsFakeGitHub
from fake_github.fixtures import repository_env
from test_state_signature import KEY, restore_with, saved

from rounds_bot.doctor.repository import github_checks
from rounds_bot.doctor.result import Check
from rounds_bot.settings import Settings

pytestmark = pytest.mark.github_spec
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def settings(fake: ActionsFakeGitHub, folder: Path, **extra: str) -> Settings:
    values = {"ROUNDS_TRACKER": "github", **repository_env(fake, folder), **extra}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def signature_line(fake: ActionsFakeGitHub, tmp_path: Path, **extra: str) -> Check:
    """The doctor's check of the signature; nothing is written where the database lives."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    checks = github_checks(settings(fake, home, **extra), NOW, {})
    assert list(home.iterdir()) == []
    found = [c for c in checks if c.area == "saved state" and "ROUNDS_STATE_KEY" in c.detail + (c.fix or "")]
    assert len(found) == 1, [c.detail for c in checks]
    return found[0]


def restored_by(fake: ActionsFakeGitHub, tmp_path: Path) -> int | None:
    """The artifact the restore itself puts in place with the key (None: it rebuilds from the issues)."""
    result, _ = restore_with(fake, tmp_path, KEY)
    return None if result.artifact is None else result.artifact.id


def test_a_signed_and_valid_newest_database_is_the_one_the_next_round_restores(fake, tmp_path):
    saved(fake, tmp_path, "older", run_id=40, key=KEY)
    newest = saved(fake, tmp_path, "newest", run_id=41, key=KEY)
    check = signature_line(fake, tmp_path, ROUNDS_STATE_KEY=KEY)
    assert check.status == "ok" and check.fix is None
    assert check.detail == (
        f"artifact {newest} (run 41) is signed with ROUNDS_STATE_KEY and its signature is valid: the next "
        "round restores it"
    )
    assert restored_by(fake, tmp_path) == newest


def test_unsigned_databases_mean_the_first_round_after_setting_the_key_rebuilds_from_the_issues(
    fake, tmp_path
):
    first = saved(fake, tmp_path, "before the key", run_id=40, key=None)
    second = saved(fake, tmp_path, "before the key too", run_id=41, key=None)
    check = signature_line(fake, tmp_path, ROUNDS_STATE_KEY=KEY)
    assert check.status == "warn"
    assert check.detail == (
        f"no saved database is signed (artifact {second} (run 41) carries no signature; artifact {first} "
        "(run 40) carries no signature): the next round rebuilds the database from the issues, as the "
        "first round after setting ROUNDS_STATE_KEY does, and saves a signed one"
    )
    assert check.fix is not None and "Signing the saved database" in check.fix
    assert restored_by(fake, tmp_path) is None


def test_a_newest_database_the_fix_test_job_could_have_saved_is_refused_for_the_older_signed_one(
    fake, tmp_path
):
    signed = saved(fake, tmp_path, "signed", run_id=40, key=KEY)
    forged = saved(fake, tmp_path, "forged", run_id=41, key="a key the fix-test job made up")
    unsigned = saved(fake, tmp_path, "unsigned", run_id=42, key=None)
    check = signature_line(fake, tmp_path, ROUNDS_STATE_KEY=KEY)
    assert check.status == "warn"
    assert check.detail == (
        f"the newest saved database is refused (artifact {unsigned} (run 42) carries no signature; artifact "
        f"{forged} (run 41) carries a signature that does not match its database under ROUNDS_STATE_KEY): "
        f"the next round restores the older artifact {signed} (run 40)"
    )
    assert restored_by(fake, tmp_path) == signed


def test_databases_signed_with_another_key_or_for_another_run_are_refused_and_why(fake, tmp_path):
    replayed = saved(fake, tmp_path, "replayed", run_id=40, key=KEY, signed_run=39)
    other = saved(fake, tmp_path, "another key", run_id=41, key="the key of another repository")
    check = signature_line(fake, tmp_path, ROUNDS_STATE_KEY=KEY)
    assert check.status == "fix"
    assert check.detail == (
        f"no saved database would be restored (artifact {other} (run 41) carries a signature that does not "
        f"match its database under ROUNDS_STATE_KEY; artifact {replayed} (run 40) carries a signature made "
        "for another run): every round rebuilds the database from the issues, and occurrence history "
        "restarts each time"
    )
    assert check.fix is not None and "the same ROUNDS_STATE_KEY" in check.fix
    assert restored_by(fake, tmp_path) is None


def test_an_artifact_that_cannot_be_downloaded_is_refused_as_the_restore_refuses_it(fake, tmp_path):
    signed = saved(fake, tmp_path, "signed", run_id=40, key=KEY)
    broken = fake.state.add_artifact(fake.repo, "rounds-db", b"not a zip", run_id=41).id
    check = signature_line(fake, tmp_path, ROUNDS_STATE_KEY=KEY)
    assert check.status == "warn"
    refused = f"the newest saved database is refused (artifact {broken} could not be used:"
    assert check.detail.startswith(refused)
    assert check.detail.endswith(f"the next round restores the older artifact {signed} (run 40)")
    assert restored_by(fake, tmp_path) == signed


def test_with_the_key_and_nothing_saved_yet_the_saved_state_check_alone_says_so(fake, tmp_path):
    checks = github_checks(settings(fake, tmp_path, ROUNDS_STATE_KEY=KEY), NOW, {})
    saved_state = [c.detail for c in checks if c.area == "saved state"]
    assert saved_state == ["no saved database named 'rounds-db' yet"]


@pytest.mark.parametrize(("fixes", "status"), [({}, "off"), ({"ROUNDS_FIX_TEST_COMMAND": "pytest"}, "warn")])
def test_without_the_key_the_doctor_says_in_one_line_that_the_gap_is_open(fake, tmp_path, fixes, status):
    saved(fake, tmp_path, "unsigned", run_id=40, key=None)
    check = signature_line(fake, tmp_path, **fixes)
    assert check == Check(
        area="saved state",
        status=status,
        detail="ROUNDS_STATE_KEY is not set here: unless the steps that save and restore the database have "
        "it, a restore takes an unsigned database, such as one the fix-test job saved "
        '(docs/github-actions.md, "Signing the saved database")',
    )
