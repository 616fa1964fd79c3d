"""`rounds --help` lists every command without importing any of them."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from rounds_bot.cli.app import LazyGroup, main


@pytest.mark.parametrize("name", sorted(LazyGroup.lazy_commands))
def test_the_listed_summary_is_the_commands_own(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    assert LazyGroup.lazy_commands[name].summary == command.get_short_help_str(limit=300)


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    listed = result.stdout.split("Commands:", 1)[1]
    assert all(f"  {name} " in listed for name in LazyGroup.lazy_commands)


def test_help_imports_no_command_and_no_heavy_library() -> None:
    probe = (
        "import sys; from click.testing import CliRunner; from rounds_bot.cli.app import main; "
        "CliRunner().invoke(main, ['--help']); "
        "print(sorted(m for m in sys.modules if m.startswith(('rounds_bot.cli.', 'rounds_bot.grouping', "
        "'sklearn', 'numpy', 'sqlite_utils', 'pydantic', 'github', 'httpx'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "['rounds_bot.cli.app']"
