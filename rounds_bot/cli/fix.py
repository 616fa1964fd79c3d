"""`rounds fix`: follow the fixes rounds proposed, and propose the ones asked for (the workflow's fix job).

    rounds fix                 watch merged and closed pull requests, evaluate shipped fixes, then carry out
                               every pending `/rounds fix` (and, with ROUNDS_FIX_AUTO, a few chosen ones)
    rounds fix --issue 12      ask for a fix of issue #12's signature first, as `/rounds fix` would
    rounds fix --watch-only    only the first part: needs no model and no write access to the code

Needs the GitHub tracker's settings (GITHUB_TOKEN, GITHUB_REPOSITORY). A failed attempt is reported on its
issue and is not an error of the command.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from rounds_bot.cli.actions_io import add_to_summary
from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.fixing.job import run_fix_job
from rounds_bot.github.pulls import pulls_api_from_settings
from rounds_bot.store import Store


@click.command("fix")
@click.option("--issue", type=int, default=None, help="Ask for a fix of this issue's signature first.")
@click.option("--watch-only", is_flag=True, help="Only follow pull requests already opened; propose nothing.")
@env_file_option
@friendly_errors
def fix_command(issue: int | None, watch_only: bool, env_file: Path | None) -> None:
    """Propose the fixes asked for as draft pull requests, and follow the ones that shipped."""
    settings = settings_from(env_file)
    pulls = pulls_api_from_settings(settings)
    store = Store.open(settings.signatures_db_path)
    try:
        lines = run_fix_job(settings, store, pulls, datetime.now(UTC), issue=issue, watch_only=watch_only)
    finally:
        store.close()
    for line in lines:
        click.echo(line)
    add_to_summary("### rounds fix\n\n" + "\n".join(f"- {line}" for line in lines))
