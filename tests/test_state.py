"""The signature database between workflow runs: which artifact is restored, what is never used or saved."""

from __future__ import annotations

import io
import sqlite3
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_github.actions_routes import ActionsFakeGitHub, actions_api_for
from fake_github.fixtures import TOKEN, repository_env
from fake_github.rounds import START, FixedSource, error_event, settings_for, tracker_for

from rounds_bot.cli.app import main
from rounds_bot.errors import StoreError
from rounds_bot.github.artifacts import check_database, restore, snapshot
from rounds_bot.store import Store

pytestmark = pytest.mark.github_spec


def database_with(path: Path, marker: str) -> Path:
    """A real signature database holding one recognisable cursor."""
    store = Store.open(path)
    try:
        with store.transaction():
            store.set_cursor(marker, START)
    finally:
        store.close()
    return path


def zipped(path: Path, name: str | None = None) -> bytes:
    """What actions/upload-artifact stores: the file at the archive's root."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(path, name or path.name)
    return buffer.getvalue()


def saved(fake: ActionsFakeGitHub, tmp_path: Path, marker: str, **where) -> int:
    folder = tmp_path / f"saved-{marker}"
    folder.mkdir()
    copy, _ = snapshot(database_with(folder / "live.db", marker), folder / "out")
    data = zipped(copy, "rounds.db")
    return fake.state.add_artifact(fake.repo, "rounds-db", data, **where).id


def cursor_sources(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        return [row[0] for row in connection.execute("select source from cursors")]
    finally:
        connection.close()


def restore_into(fake, tmp_path) -> tuple:
    target = tmp_path / "work" / "rounds.db"
    target.parent.mkdir(exist_ok=True)
    result = restore(actions_api_for(fake, tmp_path), artifact_name="rounds-db", target=target, token=TOKEN)
    return result, target


def test_the_newest_artifact_of_the_default_branch_is_restored(fake, tmp_path):
    saved(fake, tmp_path, "older", run_id=1)
    newest = saved(fake, tmp_path, "newest", run_id=2)
    saved(fake, tmp_path, "pull-request", head_branch="fix/typo", run_id=3)
    fork = saved(fake, tmp_path, "fork", run_id=4)
    fake.fork_artifacts.add(fork)
    expired = saved(fake, tmp_path, "expired", run_id=5)
    fake.repo.expired_artifacts.add(expired)
    result, target = restore_into(fake, tmp_path)
    assert result.source == "artifact" and result.artifact is not None and result.artifact.id == newest
    assert cursor_sources(target) == ["newest"]
    notes = " ".join(result.notes)
    assert "expired" in notes and "fork" in notes and "other than main" in notes
    # the token went to the API only: the fake records a violation if the signed URL received it
    assert fake.requests("actions/download-artifact")[0].status == 302


def test_of_this_runs_databases_only_the_one_handed_on_is_restored(fake, tmp_path):
    """The fix-publish job: in its own run (7) the only database it may restore is the fix-edit job's (id
    handed on as a job output); another `rounds-db` of the run, newer, is one the fix-test job's code could
    have saved (docs/fixes.md, "The boundary"). A newer one of another run (a round since) is restored."""
    older = saved(fake, tmp_path, "older run", run_id=6)
    edit = saved(fake, tmp_path, "fix-edit", run_id=7)
    fake.repo.artifacts.pop(edit)  # the run's names are unique: the forger deletes the edit job's first
    saved(fake, tmp_path, "forged", run_id=7)
    target = tmp_path / "work" / "rounds.db"
    target.parent.mkdir()
    api = actions_api_for(fake, tmp_path)
    result = restore(api, artifact_name="rounds-db", target=target, token=TOKEN, this_run=7, vouched=edit)
    assert result.source == "artifact" and result.artifact is not None and result.artifact.id == older
    assert cursor_sources(target) == ["older run"]
    assert "1 artifact came from this run but not from the job that handed its database on" in result.notes[0]

    vouched = saved(fake, tmp_path, "fix-edit again", run_id=8)
    result = restore(api, artifact_name="rounds-db", target=target, token=TOKEN, this_run=8, vouched=vouched)
    assert result.artifact is not None and result.artifact.id == vouched and result.notes == []
    since = saved(fake, tmp_path, "a round since", run_id=9)
    result = restore(api, artifact_name="rounds-db", target=target, token=TOKEN, this_run=8, vouched=vouched)
    assert result.artifact is not None and result.artifact.id == since
    assert cursor_sources(target) == ["a round since"]


def test_restoring_only_the_runs_handed_on_database_needs_the_runs_id(fake, tmp_path, clean_env):
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "octo/app",
        "ROUNDS_GITHUB_API_URL": fake.base_url,
        "SIGNATURES_DB_PATH": str(tmp_path / "rounds.db"),
    }
    failed = CliRunner().invoke(
        main, ["state", "restore", "--run-database", "5"], env={**env, "GITHUB_RUN_ID": ""}
    )
    assert failed.exit_code == 2 and "GITHUB_RUN_ID" in failed.output
    assert fake.requests() == [] and not (tmp_path / "rounds.db").exists()
    restored = CliRunner().invoke(
        main, ["state", "restore", "--run-database", "5"], env={**env, "GITHUB_RUN_ID": "3"}
    )
    assert restored.exit_code == 0, restored.output


def test_an_artifact_that_expires_before_its_download_is_skipped_for_the_next(fake, tmp_path):
    saved(fake, tmp_path, "older", run_id=1)
    newest = saved(fake, tmp_path, "newest", run_id=2)
    fake.fail(410, "actions/download-artifact", message="Artifact has expired")
    result, target = restore_into(fake, tmp_path)
    assert result.source == "artifact" and result.artifact is not None and result.artifact.id != newest
    assert cursor_sources(target) == ["older"]
    assert any("expired or was deleted" in note for note in result.notes)


def test_a_corrupt_database_is_never_restored(fake, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"SQLite format 3\x00" + b"\x17" * 5000)
    fake.state.add_artifact(fake.repo, "rounds-db", zipped(junk, "rounds.db"))
    not_ours = tmp_path / "other.db"
    sqlite3.connect(not_ours).execute("create table t (x)").connection.close()
    fake.state.add_artifact(fake.repo, "rounds-db", zipped(not_ours, "rounds.db"))
    result, target = restore_into(fake, tmp_path)
    assert result.source == "rebuilt"
    assert sum("failed its check" in note for note in result.notes) == 2
    assert check_database(target).ok


def test_without_an_artifact_the_database_is_rebuilt_from_the_issues(fake, tmp_path):
    settings = settings_for(tmp_path, fake)
    store = Store.open(settings.signatures_db_path)
    tracker = tracker_for(fake, Path(settings.signatures_db_path))
    try:
        run_round(settings, store, tracker)
    finally:
        store.close()
        tracker.journal.close()
    result, target = restore_into(fake, tmp_path)
    assert result.source == "rebuilt" and result.rebuilt is not None
    assert (result.rebuilt.issues_read, result.rebuilt.signatures) == (2, 2)
    assert "Rebuilt the signature database from 2 issues of octo/app" in result.summary("octo/app")
    rebuilt = Store.open(target)
    try:
        assert sorted(signature.issue_ref for signature in rebuilt.signatures()) == ["#1", "#2"]
    finally:
        rebuilt.close()


def run_round(settings, store, tracker) -> None:
    from rounds_bot.round.run import run_round as one_round

    events = [error_event(0), error_event(1)]
    one_round(
        settings,
        FixedSource(events),
        tracker,
        store,
        now=START + timedelta(minutes=5),
        reads_whole_history=True,
    )


def test_the_upload_copy_holds_what_is_still_in_the_write_ahead_log(tmp_path):
    live = tmp_path / "rounds.db"
    store = Store.open(live)
    keeper = sqlite3.connect(live)  # an open reader keeps the -wal from being checkpointed away
    try:
        keeper.execute("select 1 from cursors").fetchall()
        with store.transaction():
            store.set_cursor("fresh", START)
        copy, check = snapshot(live, tmp_path / "upload")
    finally:
        store.close()
        keeper.close()
    assert check.ok and cursor_sources(copy) == ["fresh"]
    assert sorted(p.name for p in (tmp_path / "upload").iterdir()) == ["rounds.db"]
    header = copy.read_bytes()[18:20]
    assert header == b"\x01\x01", "the copy is a rollback-journal database: one self-contained file"


def test_a_database_that_fails_its_check_is_never_copied_for_upload(tmp_path):
    broken = tmp_path / "rounds.db"
    broken.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="failed its check"):
        snapshot(broken, tmp_path / "upload")
    assert list((tmp_path / "upload").iterdir()) == []


def test_state_commands_set_step_outputs_and_the_job_summary(fake, tmp_path, clean_env, monkeypatch):
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    saved(fake, tmp_path, "newest", run_id=2)
    monkeypatch.chdir(tmp_path)
    env = {
        "GITHUB_ACTIONS": "true",
        **repository_env(fake, tmp_path),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    runner = CliRunner()
    restored = runner.invoke(main, ["state", "restore"], env=env)
    assert restored.exit_code == 0, restored.output
    checked = runner.invoke(main, ["state", "check", "--out", str(tmp_path / "upload")], env=env)
    assert checked.exit_code == 0, checked.output
    assert outputs.read_text().splitlines() == [
        "source=artifact",
        f"path={tmp_path / 'upload' / 'rounds.db'}",
        "ok=true",
    ]
    assert "Restored the signature database from artifact `rounds-db`" in summary.read_text()
    (tmp_path / "rounds.db").write_bytes(b"garbage" * 1000)
    failed = runner.invoke(main, ["state", "check", "--out", str(tmp_path / "upload2")], env=env)
    assert failed.exit_code == 2 and "::error::" in failed.output
    assert outputs.read_text().count("ok=true") == 1
