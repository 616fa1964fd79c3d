"""ROUNDS_STATE_KEY: a saved database is signed, and with the key set only a signed one is restored.

The fix-test job runs code the model wrote and can upload a `rounds-db` of its own (SECURITY.md;
docs/fixes.md, "The boundary"), but it never holds the key: an unsigned, forged, tampered or replayed
artifact is refused with a note in the job summary and the next older one is tried, then the rebuild from
the issues as before.
Without the key, restoring is what it always was.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for
from fake_github.fixtures import TOKEN, repository_env
from test_state import cursor_sources, database_with
from workflow_files import load

from rounds_bot.cli.app import main
from rounds_bot.github.artifacts import TRIED_ARTIFACTS_SIGNED, restore, snapshot
from rounds_bot.github.state_signature import sign, signature_path, verify

pytestmark = pytest.mark.github_spec
KEY = "a-state-key-the-fix-test-job-never-holds"


def upload_folder(folder: Path) -> bytes:
    """What actions/upload-artifact stores for a folder: its files at the archive's root."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(folder.iterdir()):
            archive.write(file, file.name)
    return buffer.getvalue()


def saved(
    fake: ActionsFakeGitHub,
    tmp_path: Path,
    marker: str,
    *,
    run_id: int,
    key: str | None,
    signed_run: int | None = None,
) -> int:
    """A database saved by `state check` with `key` (None: unsigned) as run `run_id`'s artifact; the
    signature made for `signed_run` instead when given (a replay)."""
    folder = tmp_path / f"saved-{marker}"
    folder.mkdir()
    live = database_with(folder / "rounds.db", marker)
    copy, _ = snapshot(live, folder / "out", state_key=key, run_id=signed_run or run_id)
    assert signature_path(copy).exists() == (key is not None)
    return fake.state.add_artifact(fake.repo, "rounds-db", upload_folder(copy.parent), run_id=run_id).id


def restore_with(fake, tmp_path, key: str | None):
    target = tmp_path / "work" / "rounds.db"
    target.parent.mkdir(exist_ok=True)
    api = actions_api_for(fake, tmp_path)
    result = restore(api, artifact_name="rounds-db", target=target, token=TOKEN, state_key=key)
    return result, target


# --- the signature itself ----------------------------------------------------------------------------------
def test_a_signature_vouches_for_its_database_and_run_only(tmp_path):
    database = database_with(tmp_path / "rounds.db", "signed")
    good = sign(database, KEY, 41).read_bytes()
    assert verify(database, good, KEY, 41) is None
    assert verify(database, good, KEY, 42) == "carries a signature made for another run"
    assert "does not match" in (verify(database, good, "another key", 41) or "")
    assert verify(database, None, KEY, 41) == "carries no signature"
    for forged in (
        b"",
        b"\xff\xfe",
        b"[]",
        b'{"format": "x"}',
        b"{" * 5000,
        good.replace(b'"run_id"', b'"run"'),
    ):
        assert verify(database, forged, KEY, 41) is not None, forged
    body = json.loads(good)
    body["hmac_sha256"] = "0" * 64
    assert "does not match" in (verify(database, json.dumps(body).encode(), KEY, 41) or "")


def test_any_changed_byte_of_the_database_breaks_its_signature(tmp_path):
    database = database_with(tmp_path / "rounds.db", "signed")
    signature = sign(database, KEY, 7).read_bytes()
    data = database.read_bytes()
    chosen = random.Random(26).sample(range(len(data)), 40)
    for offset in chosen:
        changed = bytearray(data)
        changed[offset] ^= 0x01
        database.write_bytes(bytes(changed))
        assert verify(database, signature, KEY, 7) is not None, offset
    database.write_bytes(data + b"\0")
    assert verify(database, signature, KEY, 7) is not None
    database.write_bytes(data)
    assert verify(database, signature, KEY, 7) is None


# --- restoring -------------------------------------------------------------------------------------------
def test_with_the_key_only_a_signed_database_of_its_own_run_is_restored(fake, tmp_path):
    good = saved(fake, tmp_path, "signed", run_id=5, key=KEY)
    unsigned = saved(fake, tmp_path, "unsigned", run_id=6, key=None)
    other_key = saved(fake, tmp_path, "forged", run_id=7, key="a key the forger made up")
    replayed = saved(fake, tmp_path, "replayed", run_id=8, key=KEY, signed_run=5)
    tampered = saved(fake, tmp_path, "tampered", run_id=9, key=KEY)
    # the forger keeps the signature of run 9's database and swaps the database for its own
    forged_db = database_with(tmp_path / "forged.db", "swapped in")
    archive = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(fake.repo.artifacts[tampered].data)) as original,
        zipfile.ZipFile(archive, "w") as rebuilt,
    ):
        rebuilt.writestr("rounds.db.sig", original.read("rounds.db.sig"))
        rebuilt.write(forged_db, "rounds.db")
    fake.repo.artifacts[tampered].data = archive.getvalue()

    result, target = restore_with(fake, tmp_path, KEY)
    assert result.source == "artifact" and result.artifact is not None and result.artifact.id == good
    assert cursor_sources(target) == ["signed"]
    notes = "\n".join(result.notes)
    for refused, why in [
        (tampered, "does not match its database"),
        (replayed, "made for another run"),
        (other_key, "does not match its database"),
        (unsigned, "carries no signature"),
    ]:
        assert f"artifact {refused} " in notes and why in notes, (refused, notes)
    assert "ROUNDS_STATE_KEY is set" in result.summary("octo/app")
    assert not target.with_name("rounds.db.restoring").exists()


def test_with_the_key_and_no_signed_database_it_is_rebuilt_from_the_issues(fake, tmp_path):
    for run in range(1, TRIED_ARTIFACTS_SIGNED + 3):
        saved(fake, tmp_path, f"unsigned {run}", run_id=run, key=None)
    result, target = restore_with(fake, tmp_path, KEY)
    assert result.source == "rebuilt"
    assert sum("carries no signature" in note for note in result.notes) == TRIED_ARTIFACTS_SIGNED
    assert target.exists() and cursor_sources(target) == []


def test_without_the_key_the_newest_database_is_restored_signed_or_not(fake, tmp_path):
    saved(fake, tmp_path, "signed", run_id=5, key=KEY)
    newest = saved(fake, tmp_path, "unsigned", run_id=6, key=None)
    result, target = restore_with(fake, tmp_path, None)
    assert result.artifact is not None and result.artifact.id == newest and result.notes == []
    assert cursor_sources(target) == ["unsigned"]
    signed = saved(fake, tmp_path, "signed later", run_id=7, key=KEY)
    result, target = restore_with(fake, tmp_path, None)
    assert result.artifact is not None and result.artifact.id == signed
    assert cursor_sources(target) == ["signed later"]


# --- the commands --------------------------------------------------------------------------------------
def test_state_check_signs_the_upload_with_the_key_and_restore_refuses_what_it_did_not_sign(
    fake, tmp_path, clean_env, monkeypatch
):
    outputs = tmp_path / "outputs"
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(tmp_path)
    database_with(tmp_path / "rounds.db", "this round")
    env = {
        "GITHUB_ACTIONS": "true",
        **repository_env(fake, tmp_path),
        "GITHUB_RUN_ID": "12",
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    runner = CliRunner()
    upload = tmp_path / "upload"
    checked = runner.invoke(
        main, ["state", "check", "--out", str(upload)], env={**env, "ROUNDS_STATE_KEY": KEY}
    )
    assert checked.exit_code == 0, checked.output
    assert f"path={upload}" in outputs.read_text().splitlines()  # the folder: the database and its signature
    assert sorted(p.name for p in upload.iterdir()) == ["rounds.db", "rounds.db.sig"]
    assert KEY not in checked.output and KEY not in (upload / "rounds.db.sig").read_text()
    signed = fake.state.add_artifact(fake.repo, "rounds-db", upload_folder(upload), run_id=12).id

    unsigned_copy = tmp_path / "unsigned"
    # an unset secret reaches the step as an empty variable: no key
    unkeyed = runner.invoke(
        main, ["state", "check", "--out", str(unsigned_copy)], env={**env, "ROUNDS_STATE_KEY": ""}
    )
    assert unkeyed.exit_code == 0, unkeyed.output
    assert outputs.read_text().splitlines()[-2] == f"path={unsigned_copy / 'rounds.db'}"  # as it always was
    assert sorted(p.name for p in unsigned_copy.iterdir()) == ["rounds.db"]
    forged = fake.state.add_artifact(fake.repo, "rounds-db", upload_folder(unsigned_copy), run_id=13).id

    restored = runner.invoke(main, ["state", "restore"], env={**env, "ROUNDS_STATE_KEY": KEY})
    assert restored.exit_code == 0, restored.output
    text = summary.read_text()
    assert f"artifact `rounds-db` (id {signed}, run 12" in text
    assert f"artifact {forged} (run 13) carries no signature, not used" in text

    summary.write_text("")
    restored = runner.invoke(main, ["state", "restore"], env=env)
    assert restored.exit_code == 0, restored.output
    assert f"(id {forged}, run 13" in summary.read_text()  # without the key: the newest, as before


# --- who gets the key ------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent


def _steps_given_the_key(steps: list[dict]) -> list[str]:
    return [str(step.get("id")) for step in steps if "STATE_KEY" in json.dumps(step.get("env") or {})]


def test_only_the_steps_that_restore_and_save_the_database_get_the_key():
    workflow = load(ROOT / ".github" / "workflows" / "rounds.yml")
    assert "ROUNDS_STATE_KEY" in workflow["on"]["workflow_call"]["secrets"]
    for job_id, job in workflow["jobs"].items():
        expected = ["restore", "check"] if job_id == "round" else []
        assert _steps_given_the_key(job["steps"]) == expected, job_id
    for path in [
        ROOT / "action.yml",
        ROOT / "fix" / "edit" / "action.yml",
        ROOT / "fix" / "publish" / "action.yml",
    ]:
        action = load(path)
        assert action["inputs"]["state-key"]["default"] == ""
        assert _steps_given_the_key(action["runs"]["steps"]) == ["restore", "check"], path
    tests = (ROOT / "fix" / "test" / "action.yml").read_text()
    assert "state-key" not in tests and "STATE_KEY" not in tests  # the job that runs the model's code
