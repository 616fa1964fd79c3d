"""`rounds changelog [--json]`: every fix rounds proposed, newest first, with its status and measured rates,
and the branches whose pull request is left to a person, folded from the event log (`fixing/changelog.py`)."""

from __future__ import annotations

from pathlib import Path

import click

from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.errors import StoreError
from rounds_bot.fixing.changelog import changelog_fixes, changelog_json, changelog_markdown, changelog_offers
from rounds_bot.lifecycle import LIFECYCLE_FACTS
from rounds_bot.store import Store


@click.command("changelog")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of Markdown.")
@env_file_option
@friendly_errors
def changelog_command(as_json: bool, env_file: Path | None) -> None:
    """Every fix rounds proposed, newest first: status, signature, issue, pull request, rates."""
    settings = settings_from(env_file)
    if not Path(settings.signatures_db_path).exists():
        raise StoreError(
            f"no signature database at {settings.signatures_db_path}",
            hint="point SIGNATURES_DB_PATH at the database (`rounds state restore` fetches the saved one)",
        )
    store = Store.open(settings.signatures_db_path)
    try:
        facts = store.facts(LIFECYCLE_FACTS)
    finally:
        store.close()
    fixes, offers = changelog_fixes(facts), changelog_offers(facts)
    repository = settings.github_repository or ""
    text = changelog_json(fixes, offers) if as_json else changelog_markdown(fixes, repository, offers)
    click.echo(text, nl=False)
