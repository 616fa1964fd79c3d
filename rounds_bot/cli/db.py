"""`rounds db rebuild`: the signature database, rebuilt from the bot's GitHub issues alone."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from rounds_bot.errors import StoreError
from rounds_bot.github.journal import Journal
from rounds_bot.github.rebuild import RebuildResult, rebuild_database
from rounds_bot.github.tracker import GitHubOptions, github_api_from_settings
from rounds_bot.store import Store

# Rebuilding 1,000 issues takes 10 listing requests; leave room for repositories with many more.
REBUILD_REQUEST_BUDGET = 900


@click.command("rebuild")
@click.option(
    "--env-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Read settings from this .env file as well as the environment (default: ./.env when it exists).",
)
@click.option("--force", is_flag=True, help="Replace a database that has signatures (kept as PATH.bak).")
def rebuild_command(env_file: Path | None, force: bool) -> None:
    """Rebuild SIGNATURES_DB_PATH from the bot's issues on GitHub (after the database was lost)."""
    from rounds_bot.cli.app import friendly_errors, settings_from

    @friendly_errors
    def run() -> None:
        settings = settings_from(env_file)
        target = Path(settings.signatures_db_path)
        _refuse_to_overwrite(target, force)
        api = github_api_from_settings(settings, GitHubOptions(max_requests_per_round=REBUILD_REQUEST_BUDGET))
        result = rebuild_into(target, lambda store, journal: rebuild_database(api, store, journal))
        click.echo(describe(result, target, settings.github_repository or ""))

    run()


def rebuild_into(target: Path, build: Callable[[Store, Journal], RebuildResult]) -> RebuildResult:
    """Build next to `target`, then swap it in: a failed rebuild leaves the old file untouched."""
    scratch = target.with_name(target.name + ".rebuilding")
    _remove_database_files(scratch)
    store = Store.open(scratch)
    journal = Journal.open(scratch)
    try:
        result = build(store, journal)
    except BaseException:
        store.close()
        journal.close()
        _remove_database_files(scratch)
        raise
    store.close()
    journal.close()
    backup = target.with_name(target.name + ".bak")
    _remove_database_files(backup)
    # a -wal file left beside a lost database would be replayed into the new one: move it aside too
    for suffix in ("", "-wal", "-shm"):
        side = target.with_name(target.name + suffix)
        if side.exists():
            os.replace(side, backup.with_name(backup.name + suffix))
    os.replace(scratch, target)
    return result


def describe(result: RebuildResult, target: Path, repository: str) -> str:
    lines = [
        f"rebuilt {target} from {result.issues_read} issues of {repository} in {result.requests} GitHub "
        f"requests: {result.signatures} signatures ({result.open} open, {result.resolved} resolved, "
        f"{result.muted} muted)",
    ]
    if result.unreadable:
        lines.append(
            f"  {len(result.unreadable)} issues carry the bot's label but no readable marker, skipped: "
            + ", ".join(result.unreadable)
        )
    if result.duplicates:
        lines.append("  later issues for a signature already seen, skipped: " + ", ".join(result.duplicates))
    lines.append(
        "  the first round after a rebuild reads its lookback window again (ERROR_LOOKBACK_MINUTES); "
        "spike baselines start afresh"
    )
    return "\n".join(lines)


def _refuse_to_overwrite(target: Path, force: bool) -> None:
    if not target.exists() or force:
        return
    store = Store.open(target)
    try:
        count = len(store.signatures())
    finally:
        store.close()
    if count:
        raise StoreError(
            f"{target} already holds {count} signatures",
            hint="pass --force to replace it (the old file is kept as " + target.name + ".bak)",
        )


def _remove_database_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.unlink()
