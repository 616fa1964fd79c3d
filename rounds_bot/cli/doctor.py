"""`rounds doctor`, the command: print what the checks found (exit status 1 if anything must be fixed).

The checks themselves are `rounds_bot.doctor`; the SigNoz one is `rounds_bot.sources.signoz.probe`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rounds_bot.cli.actions_io import add_to_summary
from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from


@click.command("doctor")
@env_file_option
@friendly_errors
def doctor_command(env_file: Path | None) -> None:
    """Check settings, SigNoz, the GitHub token, the saved state, the schedule, `claude`, the budget."""
    # imported here: the budget check reads the diagnosis step and the store, which --help does not need
    from rounds_bot.doctor import examine

    settings = settings_from(env_file)
    result = examine(settings)
    text = result.render()
    click.echo(text)
    add_to_summary("### rounds doctor\n\n```\n" + text + "\n```")
    if result.problems:
        sys.exit(1)
