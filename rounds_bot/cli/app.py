"""The `rounds` command: run, group, db, doctor.

Every RoundsError becomes one line on stderr and exit status 2; nothing else is caught, so a real bug still
shows its traceback.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import click

from rounds_bot import __version__
from rounds_bot.cli.db import rebuild_command
from rounds_bot.config import Settings, load_settings
from rounds_bot.errors import ConfigError, RoundsError
from rounds_bot.round.report import append_to_step_summary, render_report
from rounds_bot.sources.base import Source
from rounds_bot.store import Store
from rounds_bot.tracker.base import Tracker
from rounds_bot.tracker.dryrun import DryRunTracker

F = TypeVar("F", bound=Callable[..., Any])
EXIT_USAGE = 2

env_file_option = click.option(
    "--env-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Read settings from this .env file as well as the environment (default: ./.env when it exists).",
)


def friendly_errors(command: F) -> F:
    """Turn a RoundsError into `error: ...` and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except RoundsError as exc:
            click.echo(f"error: {exc}", err=True)
            if "GITHUB_ACTIONS" in __import__("os").environ:
                click.echo(f"::error::{exc}", err=True)
            sys.exit(EXIT_USAGE)

    return wrapper  # type: ignore[return-value]


def settings_from(env_file: Path | None) -> Settings:
    if env_file is None and Path(".env").is_file():
        env_file = Path(".env")
    return load_settings(env_file)


class LazyGroup(click.Group):
    """Commands whose modules are imported only when used: the grouping engine loads scikit-learn,
    which `rounds doctor` or `rounds command` do not need (click's documented lazy-loading pattern)."""

    lazy_commands: ClassVar[dict[str, str]] = {"group": "rounds_bot.cli.group:group_command"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_commands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute = self.lazy_commands[cmd_name].split(":")
            return getattr(importlib.import_module(module_name), attribute)
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="rounds")
def main() -> None:
    """rounds: makes rounds on running software and files one issue per problem."""


@main.command("run")
@click.option(
    "--demo", is_flag=True, help="Read the demo telemetry bundled with rounds (no accounts needed)."
)
@env_file_option
@friendly_errors
def run_command(demo: bool, env_file: Path | None) -> None:
    """Run one round: poll, group, file one issue per problem, report."""
    # imported here: the grouping engine loads scikit-learn, which other commands do not need
    from rounds_bot.round.diagnosis_step import build_diagnoser
    from rounds_bot.round.run import run_round

    settings = settings_from(env_file)
    source, whole_history = build_source(settings, demo)
    tracker = build_tracker(settings)
    diagnoser, diagnosis_mode = build_diagnoser(settings)
    store = Store.open(settings.signatures_db_path)
    try:
        report = run_round(
            settings,
            source,
            tracker,
            store,
            reads_whole_history=whole_history,
            diagnoser=diagnoser,
            diagnosis_mode=diagnosis_mode,
        )
    finally:
        store.close()
    markdown = render_report(report)
    click.echo(markdown)
    append_to_step_summary(markdown)


def build_source(settings: Settings, demo: bool) -> tuple[Source, bool]:
    """The configured source, and whether its whole history should be read on the first round."""
    from rounds_bot.sources.factory import source_from_spec

    if demo:
        from rounds_bot.demo import demo_data_path
        from rounds_bot.sources.otlp_file import OtlpFileSource

        return OtlpFileSource(demo_data_path(), name="otlp-file:demo"), True
    spec = settings.effective_source()
    if spec is None:
        raise ConfigError(
            "no telemetry source configured: set SIGNOZ_API_URL and SIGNOZ_API_KEY, "
            "or ROUNDS_SOURCE=otlp-file:PATH",
            hint="or try `rounds run --demo` for the bundled demo data",
        )
    source = source_from_spec(spec, settings)
    return source, spec.startswith("otlp-file:")


def build_tracker(settings: Settings) -> Tracker:
    if settings.tracker == "github":
        from rounds_bot.github.tracker import github_tracker_from_settings

        return github_tracker_from_settings(settings)
    return DryRunTracker(settings.output_dir)


@main.group("db")
def db_group() -> None:
    """Inspect or rebuild the signature database."""


@db_group.command("status")
@env_file_option
@friendly_errors
def db_status(env_file: Path | None) -> None:
    """Schema version, signatures, last runs."""
    settings = settings_from(env_file)
    store = Store.open(settings.signatures_db_path)
    try:
        rows = store.signatures()
        runs = store.runs()
        click.echo(
            f"database {settings.signatures_db_path}: schema v{store.schema_version()}, "
            f"{len(rows)} signatures, {len(runs)} runs, "
            f"integrity {'ok' if store.integrity_ok() else 'FAILED'}"
        )
        for row in rows:
            click.echo(
                f"  {row['id']}  {row['total_count']:>7}  [{row['service']}] {row['title']}  "
                f"{store.status(row['id'])}  {row['issue_ref'] or '-'}"
            )
    finally:
        store.close()


db_group.add_command(rebuild_command)

from rounds_bot.cli.actions import add_actions_commands  # noqa: E402  (its commands import this module)

add_actions_commands(main)
