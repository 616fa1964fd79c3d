"""Errors said as what they are, each one line and exit status 2: a database path that is a folder (and
`doctor` says so), a read-only file system and a full disk (never "damaged"), a `.env` that is not UTF-8,
misspelt or unknown settings (with the setting meant), `notify --test` with Zulip off.

The read-only and full-disk cases run `rounds` for real on a small tmpfs in a mount namespace of its own
(`unshare --mount`; skipped where the machine does not allow it), so SQLite meets the real conditions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rounds_bot.cli.app import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def workdir(clean_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_database_path_that_is_a_folder_is_one_clear_line_and_doctor_says_fix(workdir, clean_env):
    (workdir / "state").mkdir()
    clean_env.setenv("SIGNATURES_DB_PATH", str(workdir / "state"))
    code, _, err = run("run", "--demo")
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: the signature database path {workdir / 'state'} is a folder, not a file "
        f"(set SIGNATURES_DB_PATH to a file, e.g. {workdir / 'state' / 'rounds.db'})"
    ]
    code, out, _ = run("doctor")
    assert code == 1
    assert f"FIX   database: the signature database path {workdir / 'state'} is a folder" in out
    assert "nothing to fix" not in out


def test_doctor_says_ok_for_a_database_to_be_created_and_fix_for_a_missing_folder(workdir, clean_env):
    _, out, _ = run("doctor")
    assert "ok    database: rounds.db is created by the first round" in out
    clean_env.setenv("SIGNATURES_DB_PATH", str(workdir / "missing" / "rounds.db"))
    _, out, _ = run("doctor")
    assert f"FIX   database: the folder {workdir / 'missing'} of the signature database does not exist" in out


def test_a_settings_file_that_is_not_utf8_is_one_clear_line(workdir):
    (workdir / ".env").write_bytes(b"ROUNDS_SOURCE=otlp-file:caf\xe9.jsonl\n")
    code, _, err = run("run", "--demo")
    assert code == 2
    expected = "error: settings file .env is not UTF-8 text: byte 0xe9 on line 1 (save it as UTF-8)"
    assert err.strip() == expected


def test_misspelt_settings_in_env_files_and_the_environment_name_the_setting_meant(workdir, clean_env):
    (workdir / ".env").write_text("ROUNDS_DIAGNOSE_TRESHOLD=3\nPOLL_INTERVAL_SECOND=600\nOTHER_TOOL=x\n")
    clean_env.setenv("SIGNOZ_API_UR", "http://127.0.0.1:9")
    clean_env.setenv("SIGNOZ_INGESTION_KEY", "another tool's")  # not close to a setting: not rounds'
    clean_env.setenv("ROUNDS_HOME", "/tmp/x")  # set by rounds' own action, not a setting
    for command in (["run", "--demo"], ["doctor"]):
        code, _, err = run(*command)
        assert code == 2
        assert err.strip() == (
            "error: 3 unknown settings: SIGNOZ_API_UR in the environment (did you mean SIGNOZ_API_URL?); "
            "POLL_INTERVAL_SECOND in .env (did you mean POLL_INTERVAL_SECONDS?); "
            "ROUNDS_DIAGNOSE_TRESHOLD in .env (did you mean ROUNDS_DIAGNOSE_THRESHOLD?) "
            "(every setting is listed in docs/settings.md)"
        )


def test_an_unknown_rounds_name_is_reported_even_when_no_setting_is_close(workdir, clean_env):
    clean_env.setenv("ROUNDS_WHATEVER", "1")
    code, _, err = run("run", "--demo")
    assert code == 2
    assert "ROUNDS_WHATEVER in the environment (no setting has a name like it)" in err


def test_notify_test_with_zulip_off_fails_with_one_line_and_plain_notify_stays_quiet(workdir):
    code, out, err = run("notify", "--test")
    assert code == 2 and out == ""
    assert err.startswith("error: no test message sent: notifications are off (ZULIP_SITE and the other")
    code, out, _ = run("notify")
    assert code == 0 and out.startswith("notifications are off")


# --- a real read-only file system and a real full disk ----------------------------------------------------

_SCRIPT = """
set -e
mount -t tmpfs -o size=2m tmpfs "$DIR"
cd "$DIR"
rounds() { "$PYTHON" -c "from rounds_bot.cli.app import main; main()" "$@"; }
rounds run --demo > /dev/null
echo "--- read-only"
mount -o remount,ro "$DIR"
rounds run --demo 2>&1 || echo "exit $?"
mount -o remount,rw "$DIR"
rm -rf rounds-out
dd if=/dev/zero of=filler bs=4k 2>/dev/null || true
echo "--- full"
rounds run --demo 2>&1 || echo "exit $?"
"""


def _in_a_mount_namespace(folder: Path) -> str:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run([unshare, "--mount", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("this machine does not allow a mount namespace")
    environment = {"PATH": os.environ.get("PATH", ""), "PYTHON": sys.executable, "DIR": str(folder)}
    environment["PYTHONPATH"] = str(ROOT)
    environment["HOME"] = str(folder.parent)
    done = subprocess.run(
        [unshare, "--mount", "sh", "-c", _SCRIPT],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_read_only_file_system_and_a_full_disk_are_said_as_such_never_as_damage(tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    output = _in_a_mount_namespace(folder)
    read_only, full = output.split("--- read-only\n")[1].split("--- full\n")
    assert read_only.strip().splitlines() == [
        "error: the signature database rounds.db cannot be written: its file system is mounted read-only "
        "(unable to open database file) (make the file and its folder writable by the user that runs rounds, "
        "or set SIGNATURES_DB_PATH to a writable place; the database itself is not damaged)",
        "exit 2",
    ]
    lines = full.strip().splitlines()
    assert lines[-1] == "exit 2" and len(lines) == 2
    assert lines[0].startswith("error: the signature database rounds.db cannot be written: its disk is full")
    assert "damaged:" not in output
