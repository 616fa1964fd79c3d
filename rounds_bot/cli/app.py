"""The `rounds` click group, `main`, and the commands registered on it:

    rounds run       one round (cli/run.py)
    rounds group     group JSON Lines error events (cli/group.py)
    rounds db        status | rebuild | replay: the signature database (cli/db.py)
    rounds command   `/rounds` comments (cli/command.py)
    rounds state     restore | check: the database between workflow runs (cli/state.py)
    rounds doctor    what is set up and what to fix (cli/doctor.py)
    rounds notify    tell a Zulip stream what the last round filed (cli/notify.py)
    rounds fix       propose the fixes asked for as draft pull requests; follow the shipped ones (cli/fix.py)
    rounds changelog every fix rounds proposed, with its status and rates (cli/changelog.py)

`rounds group` is imported only when it runs: the grouping engine loads scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import ClassVar

import click

from rounds_bot import __version__
from rounds_bot.cli.command import command_command
from rounds_bot.cli.db import db_group
from rounds_bot.cli.doctor import doctor_command
from rounds_bot.cli.notify import notify_command
from rounds_bot.cli.run import run_command
from rounds_bot.cli.state import state_group


class LazyGroup(click.Group):
    """Commands whose modules are imported only when used: the grouping engine loads scikit-learn,
    which `rounds doctor` or `rounds command` do not need (click's documented lazy-loading pattern)."""

    lazy_commands: ClassVar[dict[str, str]] = {
        "group": "rounds_bot.cli.group:group_command",
        "fix": "rounds_bot.cli.fix:fix_command",
        "changelog": "rounds_bot.cli.changelog:changelog_command",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_commands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute = self.lazy_commands[cmd_name].split(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy_commands[cmd_name]} is not a click command")
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="rounds")
def main() -> None:
    """rounds: makes rounds on running software and files one issue per problem."""


main.add_command(run_command)
main.add_command(db_group)
main.add_command(command_command)
main.add_command(state_group)
main.add_command(doctor_command)
main.add_command(notify_command)
