"""`rounds doctor`: check what rounds needs and print what to fix (exit status 1 if anything must be)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rounds_bot.cli.actions import add_to_summary, env_file_option, friendly


@click.command("doctor")
@env_file_option
@friendly
def doctor_command(env_file: Path | None) -> None:
    """Check settings, SigNoz, the GitHub token, the saved state, the schedule, `claude`, the budget."""
    from rounds_bot.cli.app import settings_from
    from rounds_bot.doctor import examine

    settings = settings_from(env_file)
    result = examine(settings)
    text = result.render()
    click.echo(text)
    add_to_summary("### rounds doctor\n\n```\n" + text + "\n```")
    if result.problems:
        sys.exit(1)
