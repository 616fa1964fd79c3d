"""`rounds fix`: follow the fixes rounds proposed, and propose the ones asked for.

    rounds fix                 all in one process: watch merged and closed pull requests, evaluate shipped
                               fixes, then carry out every pending `/rounds fix` (and, with ROUNDS_FIX_AUTO, a
                               few chosen ones). The test command does not run while a token is in reach,
                               unless ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS=true
    rounds fix --issue 12      ask for a fix of issue #12's signature first, as `/rounds fix` would
    rounds fix --watch-only    only the first part: needs no model and no write access to the code

The same, as three stages with nothing in common but two folders (GitHub Actions: one job each):

    rounds fix edit --out BUNDLE [--issue N]       the model's changes, checked, as patches (model key,
                                                   read-only token; step outputs `digest`, `proposals`)
    rounds fix test --bundle BUNDLE --out VERDICT  their tests, where no token is (no database, no GitHub)
    rounds fix publish --bundle BUNDLE --verdict VERDICT [--digest SHA]
                                                   watch, then publish (write token; runs no repository code)

Needs the GitHub tracker's settings (GITHUB_TOKEN, GITHUB_REPOSITORY), except `test`. A failed attempt is
reported on its issue and is not an error of the command.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import click

from rounds_bot.cli.actions_io import add_to_summary, set_output
from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.fixing.job import run_fix_job
from rounds_bot.fixing.stages import edit_stage, publish_stage, test_stage
from rounds_bot.github.pulls import pulls_api_from_settings
from rounds_bot.store import Store

_FOLDER = click.Path(path_type=Path, file_okay=False)
_DIGEST = click.option(
    "--digest", default=None, help="The bundle's digest from the edit stage; a different bundle is refused."
)


@click.group("fix", invoke_without_command=True)
@click.option("--issue", type=int, default=None, help="Ask for a fix of this issue's signature first.")
@click.option("--watch-only", is_flag=True, help="Only follow pull requests already opened; propose nothing.")
@env_file_option
@click.pass_context
@friendly_errors
def fix_command(context: click.Context, issue: int | None, watch_only: bool, env_file: Path | None) -> None:
    """Propose the fixes asked for as draft pull requests, and follow the ones that shipped."""
    if context.invoked_subcommand is not None:
        return
    settings = settings_from(env_file)
    pulls = pulls_api_from_settings(settings)
    store = Store.open(settings.signatures_db_path)
    try:
        lines = run_fix_job(settings, store, pulls, datetime.now(UTC), issue=issue, watch_only=watch_only)
    finally:
        store.close()
    _say("rounds fix", lines)


@fix_command.command("edit")
@click.option("--out", "out", type=_FOLDER, required=True, help="Folder to write the proposal bundle into.")
@click.option("--issue", type=int, default=None, help="Ask for a fix of this issue's signature first.")
@env_file_option
@friendly_errors
def edit_command(out: Path, issue: int | None, env_file: Path | None) -> None:
    """Stage 1: the model's change for every pending request, checked, as a bundle of patches."""
    settings = settings_from(env_file)
    store = Store.open(settings.signatures_db_path)
    try:
        edited = edit_stage(
            settings,
            store,
            pulls_api_from_settings(settings),
            datetime.now(UTC),
            out=out,
            run_id=os.environ.get("GITHUB_RUN_ID", "local"),
            issue=issue,
        )
    finally:
        store.close()
    set_output("digest", edited.digest)
    set_output("proposals", str(edited.proposals))
    _say("rounds fix edit", edited.lines)


@fix_command.command("test")
@click.option("--bundle", type=_FOLDER, required=True, help="The bundle `rounds fix edit` wrote.")
@click.option("--out", "out", type=_FOLDER, required=True, help="Folder to write the test verdict into.")
@_DIGEST
@env_file_option
@friendly_errors
def test_command(bundle: Path, out: Path, digest: str | None, env_file: Path | None) -> None:
    """Stage 2: the repository's tests on every change of the bundle; needs no token, and refuses one."""
    settings = settings_from(env_file)
    _say("rounds fix test", test_stage(settings, os.environ, bundle=bundle, out=out, digest=digest or None))


@fix_command.command("publish")
@click.option(
    "--bundle", type=_FOLDER, default=None, help="The bundle `rounds fix edit` wrote (none: only watch)."
)
@click.option("--verdict", type=_FOLDER, default=None, help="The verdict `rounds fix test` wrote.")
@_DIGEST
@env_file_option
@friendly_errors
def publish_command(
    bundle: Path | None, verdict: Path | None, digest: str | None, env_file: Path | None
) -> None:
    """Stage 3: follow the fixes proposed before; commit, push and propose the tested changes."""
    settings = settings_from(env_file)
    store = Store.open(settings.signatures_db_path)
    try:
        lines = publish_stage(
            settings,
            store,
            pulls_api_from_settings(settings),
            datetime.now(UTC),
            bundle=bundle,
            verdict=verdict,
            digest=digest or None,
        )
    finally:
        store.close()
    _say("rounds fix publish", lines)


def _say(command: str, lines: list[str]) -> None:
    for line in lines:
        click.echo(line)
    add_to_summary(f"### {command}\n\n" + "\n".join(f"- {line}" for line in lines))
