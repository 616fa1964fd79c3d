"""What every `rounds` command shares: the `--env-file` option, loading the settings, and friendly errors.

Every RoundsError becomes one line on stderr (plus an `::error::` line and one line on the job summary in
GitHub Actions, where a misconfiguration is read) and exit status 2; nothing else is caught, so a real bug
still shows its traceback.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import click

from rounds_bot.errors import RoundsError
from rounds_bot.settings import Settings, load_settings

P = ParamSpec("P")
R = TypeVar("R")

EXIT_USAGE = 2

env_file_option = click.option(
    "--env-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Read settings from this .env file as well as the environment (default: ./.env when it exists).",
)


def in_actions() -> bool:
    """Running in GitHub Actions (which sets GITHUB_ACTIONS=true in every step)."""
    return os.environ.get("GITHUB_ACTIONS") == "true"


def friendly_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn a RoundsError into `error: ...` and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except RoundsError as exc:
            click.echo(f"error: {exc}", err=True)
            if in_actions():
                click.echo(f"::error::{exc}", err=True)
                _summary_line(click.get_current_context(silent=True), exc)
            sys.exit(EXIT_USAGE)

    return wrapper


def _summary_line(context: click.Context | None, error: RoundsError) -> None:
    """The error as one line of the job summary: the run's page shows it without opening the log."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from rounds_bot.render.markdown import code
    from rounds_bot.render.step_summary import append_to_summary

    # the program's own name, however it was started (a test runner calls it `main`)
    command = " ".join(["rounds", *(context.command_path.split()[1:] if context is not None else [])])
    # a message can quote what a service answered: the one escaping rule, as a code span on one line
    append_to_summary(Path(target), f"**{code(command)} stopped:** {code(' '.join(str(error).split()))}\n\n")


def settings_from(env_file: Path | None) -> Settings:
    """The settings from the environment and `env_file` (or ./.env when it exists)."""
    if env_file is None and Path(".env").is_file():
        env_file = Path(".env")
    return load_settings(env_file)
