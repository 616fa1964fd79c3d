"""The commands that run rounds in GitHub Actions, registered on the `rounds` group by `add_actions_commands`:

    rounds command      handle `/rounds` comments (the event's, and any a replaced run left behind)
    rounds state        restore | check: the signature database between runs, as an artifact
    rounds doctor       what is set up, what is not, and how to fix it
    rounds notify       tell a Zulip stream what the last round filed

Plus what they share: the GitHub Actions file protocol (`$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`, workflow
commands such as `::warning::`), the event payload at `$GITHUB_EVENT_PATH`, and friendly errors.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from rounds_bot.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])

env_file_option = click.option(
    "--env-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Read settings from this .env file as well as the environment (default: ./.env when it exists).",
)


def friendly(command: F) -> F:
    """`rounds_bot.cli.app.friendly_errors`, looked up when called (the cli module imports this one)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from rounds_bot.cli.app import friendly_errors

        return friendly_errors(command)(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def set_output(name: str, value: str) -> None:
    """A step output (`steps.<id>.outputs.<name>`), when running in Actions."""
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(f"{name}={' '.join(value.split())}\n")


def add_to_summary(markdown: str) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(markdown.rstrip("\n") + "\n\n")


def annotate(level: str, message: str) -> None:
    """`::warning::`, `::notice::` or `::error::` in Actions (shown on the run page); else plain stderr."""
    if in_actions():
        escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        click.echo(f"::{level}::{escaped}", err=True)
    else:
        click.echo(f"{level}: {message}", err=True)


def read_event(path: Path | None) -> tuple[str, dict[str, Any]]:
    """The event name and payload: `--event FILE`, or `$GITHUB_EVENT_PATH` (a file, never inlined)."""
    name = os.environ.get("GITHUB_EVENT_NAME", "")
    if path is None:
        env_path = os.environ.get("GITHUB_EVENT_PATH")
        if not env_path:
            return name or "manual", {}
        path = Path(env_path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the event payload {path}: {exc}",
            hint="GITHUB_EVENT_PATH (or --event) must name the webhook event's JSON file",
        ) from exc
    if not isinstance(payload, dict):
        raise ConfigError(f"the event payload {path} is not a JSON object")
    if not name:
        name = (
            "issue_comment"
            if "comment" in payload
            else "workflow_dispatch"
            if "inputs" in payload
            else "manual"
        )
    return name, payload


def add_actions_commands(group: click.Group) -> None:
    from rounds_bot.cli.command import command_command
    from rounds_bot.cli.doctor import doctor_command
    from rounds_bot.cli.notify import notify_command
    from rounds_bot.cli.state import state_group

    for command in (command_command, state_group, doctor_command, notify_command):
        group.add_command(command)
