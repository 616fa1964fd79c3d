"""`rounds db status | rebuild | replay`: inspect the signature database, rebuild it from the bot's GitHub
issues alone (after it was lost), or rebuild the tables derived from its event log."""

from __future__ import annotations

from pathlib import Path

import click

from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.errors import StoreError
from rounds_bot.github.db_rebuild import rebuild_from_issues
from rounds_bot.github.rebuild import RebuildResult
from rounds_bot.github.tracker import GitHubOptions, github_api_from_settings
from rounds_bot.store import Store

__all__ = ["db_group", "describe", "rebuild_command", "replay_command", "status_command"]

# Rebuilding 1,000 issues takes 10 listing requests; leave room for repositories with many more.
REBUILD_REQUEST_BUDGET = 900


@click.group("db")
def db_group() -> None:
    """Inspect or rebuild the signature database."""


@db_group.command("status")
@env_file_option
@friendly_errors
def status_command(env_file: Path | None) -> None:
    """Schema version, signatures, last runs."""
    settings = settings_from(env_file)
    if not Path(settings.signatures_db_path).exists():
        # a read-only look must not leave an empty database behind
        click.echo(
            f"no signature database at {settings.signatures_db_path} yet: no round has run here "
            "(SIGNATURES_DB_PATH says where it lives)"
        )
        return
    store = Store.open(settings.signatures_db_path)
    try:
        signatures = store.signatures()
        runs = store.runs()
        click.echo(
            f"database {settings.signatures_db_path}: schema v{store.schema_version()}, "
            f"{len(signatures)} signatures, {len(runs)} runs, "
            f"integrity {'ok' if store.integrity_ok() else 'FAILED'}"
        )
        for signature in signatures:
            click.echo(
                f"  {signature.id}  {signature.total_count:>7}  [{signature.service}] {signature.title}  "
                f"{store.status(signature.id)}  {signature.issue_ref or '-'}"
            )
    finally:
        store.close()


@db_group.command("rebuild")
@env_file_option
@click.option("--force", is_flag=True, help="Replace a database that has signatures (kept as PATH.bak).")
@friendly_errors
def rebuild_command(env_file: Path | None, force: bool) -> None:
    """Rebuild SIGNATURES_DB_PATH from the bot's issues on GitHub (after the database was lost)."""
    settings = settings_from(env_file)
    target = Path(settings.signatures_db_path)
    _refuse_to_overwrite(target, force)
    api = github_api_from_settings(settings, GitHubOptions(max_requests_per_round=REBUILD_REQUEST_BUDGET))
    result = rebuild_from_issues(api, target)
    click.echo(describe(result, target, settings.github_repository or ""))


@db_group.command("replay")
@env_file_option
@friendly_errors
def replay_command(env_file: Path | None) -> None:
    """Rebuild the tables derived from the event log (incidents, fixes) from the log alone."""
    settings = settings_from(env_file)
    if not Path(settings.signatures_db_path).exists():
        raise StoreError(
            f"no signature database at {settings.signatures_db_path}: nothing to replay",
            hint="point SIGNATURES_DB_PATH at the database (`rounds state restore` fetches the saved one)",
        )
    store = Store.open(settings.signatures_db_path)
    try:
        store.replay()
        rows = store.derived_rows()
        facts = store.db.execute("select count(*) from events").fetchone()[0]
    finally:
        store.close()
    incidents, fixes = len(rows["incidents"]), len(rows["fixes"])
    click.echo(
        f"replayed {facts} facts of {settings.signatures_db_path}: {incidents} "
        f"signature{'s' if incidents != 1 else ''}, {fixes} fix{'es' if fixes != 1 else ''}"
    )


def describe(result: RebuildResult, target: Path, repository: str) -> str:
    """What a rebuild found, for the terminal."""
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
    if result.not_ours:
        lines.append(
            "  issues with the bot's label and a marker that rounds' own account did not open"
            " (a copied marker is no record), skipped: " + ", ".join(result.not_ours)
        )
    lines.extend(f"  {problem}" for problem in result.partial)
    lines.append(
        "  the first round after a rebuild reads its lookback window again (ERROR_LOOKBACK_MINUTES), "
        "counting only occurrences after each issue's last-seen time; spike baselines start afresh"
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
