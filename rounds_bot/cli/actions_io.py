"""How a command running in a GitHub Actions step talks to the runner: the file protocol (`$GITHUB_OUTPUT`,
`$GITHUB_STEP_SUMMARY`), workflow commands such as `::warning::` (plain stderr lines outside Actions), and the
event payload at `$GITHUB_EVENT_PATH`.

Used by the commands the workflow runs: `rounds command`, `rounds state`, `rounds doctor`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from rounds_bot.cli.options import in_actions
from rounds_bot.errors import ConfigError
from rounds_bot.render.step_summary import append_to_summary


def set_output(name: str, value: str) -> None:
    """A step output (`steps.<id>.outputs.<name>`), when running in Actions."""
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(f"{name}={' '.join(value.split())}\n")


def add_to_summary(markdown: str) -> None:
    """Markdown appended to the job summary, when running in Actions."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        append_to_summary(Path(target), markdown.rstrip("\n") + "\n\n")


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
