"""Every command and option of `rounds` is documented in docs/commands.md."""

from __future__ import annotations

from pathlib import Path

import click

from rounds_bot.cli import main

COMMANDS_DOC = (Path(__file__).parent.parent / "docs" / "commands.md").read_text(encoding="utf-8")


def commands(group: click.Group, prefix: str = "rounds") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            found += commands(command, path)
        else:
            found.append((path, command))
    return found


def test_every_command_is_in_the_commands_doc():
    missing = [path for path, _ in commands(main) if f"`{path}" not in COMMANDS_DOC]
    assert not missing, f"document these commands in docs/commands.md: {missing}"


def test_every_option_is_in_the_commands_doc():
    missing = []
    for path, command in commands(main):
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("--") and flag not in COMMANDS_DOC:
                    missing.append(f"{path} {flag}")
    assert not missing, f"document these options in docs/commands.md: {missing}"
    assert "rounds --version" in COMMANDS_DOC
