"""Where rounds tells someone to install the Claude Code CLI (the doctor's fix, the "diagnosis off" note,
a CLI that cannot start), it names the version rounds is tested with: `npm ci` from the lockfile the package
ships (`rounds pins claude-code`), as the workflow installs it, never a bare `npm install` of the registry's
latest. The hint's command is run as written, by bash, with the real `rounds` and a stand-in `npm`
that records what it was asked: it copies the package's pins byte for byte and runs `npm ci` on them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rounds_bot.diagnosis.claude_cli import CLAUDE_INSTALL_HINT
from rounds_bot.diagnosis.configured import build_diagnoser
from rounds_bot.doctor import examine
from rounds_bot.settings import Settings

PINS = Path(__file__).resolve().parent.parent / "rounds_bot" / "pins" / "claude-code"
ROUNDS = "import sys; sys.argv[0] = 'rounds'; from rounds_bot.cli.app import main; main()"


def _command_of(hint: str) -> tuple[str, str]:
    """The shell command the hint gives, and the ROUNDS_CLAUDE_BIN it says to set."""
    command = hint.split(": ", 1)[1].split(", then set ", 1)[0]
    setting = hint.split("ROUNDS_CLAUDE_BIN=", 1)[1]
    return command, setting


def test_the_install_hint_installs_the_pinned_cli_with_npm_ci(tmp_path: Path) -> None:
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    (bin_dir / "rounds").write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{ROUNDS}" "$@"\n')
    (bin_dir / "npm").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$HOME/npm-args"\n')
    for tool in ("rounds", "npm"):
        (bin_dir / tool).chmod(0o755)
    command, setting = _command_of(CLAUDE_INSTALL_HINT)
    env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", "-euc", command], env=env, check=True, timeout=120)
    folder = home / ".rounds" / "claude-code"
    for name in ("package.json", "package-lock.json"):
        assert (folder / name).read_bytes() == (PINS / name).read_bytes(), name
    assert (home / "npm-args").read_text().split() == ["ci", "--prefix", str(folder)]
    assert setting == "$HOME/.rounds/claude-code/node_modules/.bin/claude"


def test_the_doctor_and_the_diagnosis_off_note_give_the_pinned_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `claude` anywhere
    chosen = Settings(
        _env_file=None,  # type: ignore[call-arg]
        ROUNDS_DIAGNOSER="claude-code",
        ANTHROPIC_API_KEY="sk-ant-test",
        SIGNATURES_DB_PATH=str(tmp_path / "r.db"),
    )
    diagnoser, note = build_diagnoser(chosen)
    assert diagnoser is None and CLAUDE_INSTALL_HINT in note
    fixes = [check.fix for check in examine(chosen, environ={"PATH": str(tmp_path)}).checks]
    assert CLAUDE_INSTALL_HINT in fixes
    assert not any("npm install" in (fix or "") for fix in fixes)
