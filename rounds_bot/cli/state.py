"""`rounds state restore | check`: the signature database between workflow runs.

rounds state restore          before the round: the newest usable artifact to SIGNATURES_DB_PATH, or the
                              database rebuilt from the bot's issues (said in the job summary);
                              step output `source=artifact|rebuilt`
rounds state restore --run-database ID
                              the same, but of this run's artifacts (GITHUB_RUN_ID) only artifact ID, the
                              database the fix-edit job saved, may be restored (the fix-publish job)
rounds state check --out DIR  after the round: integrity check, then a single-file copy in DIR for
                              `actions/upload-artifact`; step output `ok=true` only when it passed, and
                              `path`: the copy, or with ROUNDS_STATE_KEY the folder (the copy and its
                              signature, `github/state_signature.py`)
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from rounds_bot.cli.actions_io import add_to_summary, annotate, set_output
from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.errors import ConfigError, StoreError
from rounds_bot.github.actions import actions_api_from_settings
from rounds_bot.github.artifacts import check_database, restore, snapshot
from rounds_bot.github.tracker import GitHubOptions
from rounds_bot.settings import Settings

# A rebuild lists every bot issue (10 requests per 1,000 issues); the tracker's default budget is per round.
RESTORE_REQUEST_BUDGET = 900


@click.group("state")
def state_group() -> None:
    """Restore and check the signature database between GitHub Actions runs (the workflow uploads it)."""


@state_group.command("restore")
@click.option(
    "--run-database",
    type=click.IntRange(min=1),
    default=None,
    help="Of this run's saved databases, restore only the artifact with this id (the fix-edit job's).",
)
@env_file_option
@friendly_errors
def restore_command(run_database: int | None, env_file: Path | None) -> None:
    """Put the newest saved database in place (an existing one is kept as .bak), or rebuild it from issues."""
    this_run = _this_run() if run_database is not None else None
    settings = settings_from(env_file)
    api = actions_api_from_settings(settings, GitHubOptions(max_requests_per_round=RESTORE_REQUEST_BUDGET))
    assert settings.github_token is not None and settings.github_repository is not None
    target = Path(settings.signatures_db_path)
    result = restore(
        api,
        artifact_name=settings.artifact_name,
        target=target,
        token=settings.github_token.get_secret_value(),
        this_run=this_run,
        vouched=run_database,
        state_key=_state_key(settings),
    )
    summary = result.summary(settings.github_repository)
    click.echo(summary.strip())
    add_to_summary(summary)
    set_output("source", result.source)
    if result.rebuilt is not None:
        if result.rebuilt.issues_read:
            annotate(
                "warning",
                f"no usable saved database: rebuilt {target} from {result.rebuilt.issues_read} issues "
                f"({'; '.join(result.notes)})",
            )
        else:
            annotate("notice", f"no saved database and no rounds issues yet: {target} starts empty")


def _state_key(settings: Settings) -> str | None:
    """ROUNDS_STATE_KEY, when set: saved databases are signed with it and only signed ones restored."""
    key = settings.state_key.get_secret_value() if settings.state_key is not None else ""
    return key or None


def _run_id() -> int | None:
    run = os.environ.get("GITHUB_RUN_ID", "")
    return int(run) if run.isdigit() else None


def _this_run() -> int:
    run = os.environ.get("GITHUB_RUN_ID", "")
    if not run.isdigit():
        raise ConfigError(
            f"--run-database needs the workflow run's id in GITHUB_RUN_ID (found {run!r})",
            hint="it is for a step of a GitHub Actions job, where the runner sets GITHUB_RUN_ID",
        )
    return int(run)


@state_group.command("check")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Also write a checked single-file copy into this folder, for upload.",
)
@env_file_option
@friendly_errors
def check_command(out_dir: Path | None, env_file: Path | None) -> None:
    """Check the database's integrity (never upload one that fails)."""
    settings = settings_from(env_file)
    database = Path(settings.signatures_db_path)
    if out_dir is None:
        result = check_database(database)
        if not result.ok:
            raise StoreError(f"{database} failed its check: {'; '.join(result.problems)}")
    else:
        # the run that saves it is signed too: a restore compares it with the run GitHub names
        key = _state_key(settings)
        copy, result = snapshot(database, out_dir, state_key=key, run_id=_run_id())
        set_output("path", str(out_dir) if key is not None else str(copy))
        click.echo(f"wrote {copy}")
    click.echo(f"{database}: ok (schema v{result.schema_version}, {result.signatures} signatures)")
    set_output("ok", "true")  # only now: without it the upload step does not run
