"""`rounds notify`: tell the Zulip stream what the last round filed (off unless Zulip is configured).

rounds notify          after a round: a notice per new issue and a summary, once per round
rounds notify --test   one test message, to check the settings (exit status 2 when Zulip is off)
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import click

from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.controls import load_controls
from rounds_bot.errors import ConfigError
from rounds_bot.github.journal import Journal
from rounds_bot.notify.notices import mark_notified, round_notices
from rounds_bot.notify.zulip import zulip_from_settings
from rounds_bot.store import Store


@click.command("notify")
@click.option("--test", is_flag=True, help="Send one test message and stop.")
@env_file_option
@friendly_errors
def notify_command(test: bool, env_file: Path | None) -> None:
    """Post the last round's new issues and summary to Zulip (ZULIP_* settings)."""
    settings = settings_from(env_file)
    notifier = zulip_from_settings(settings)
    if notifier is None:
        if test:  # asked to check the settings: that there are none is the answer, and a failure
            raise ConfigError(
                "no test message sent: notifications are off "
                "(ZULIP_SITE and the other ZULIP_* settings are not set)",
                hint="set them as docs/settings.md says, then run `rounds notify --test` again",
            )
        click.echo("notifications are off: ZULIP_SITE and the other ZULIP_* settings are not set")
        return
    with notifier:
        if test:
            notifier.send(f"rounds can post to this stream (repository {settings.github_repository or '?'})")
            click.echo(f"sent a test message to {notifier.target.stream} > {notifier.target.topic}")
            return
        store = Store.open(settings.signatures_db_path)
        journal = Journal.open(settings.signatures_db_path)
        try:
            pause = load_controls(store).pause
            if pause is not None:
                click.echo(f"nothing sent: rounds is paused (by @{pause.by} since {pause.since})")
                return
            links = {issue.signature_id: issue.url for issue in journal.issues() if issue.url}
            notices = round_notices(store, links, run_url=_run_url())
            for message in notices.messages:
                notifier.send(message)
            if notices.run_id and notices.messages:
                mark_notified(store, notices.run_id, datetime.now(UTC))
            click.echo(
                f"sent {len(notices.messages)} messages to {notifier.target.stream} > {notifier.target.topic}"
                if notices.messages
                else f"nothing sent: {notices.why_none}"
            )
        finally:
            journal.close()
            store.close()


def _run_url() -> str | None:
    """This workflow run's page, in Actions."""
    server, repository, run = (
        os.environ.get(n) for n in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if server and repository and run:
        return f"{server}/{repository}/actions/runs/{run}"
    return None
