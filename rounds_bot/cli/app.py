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
    rounds eval      diagnosis quality on cases with a known answer (cli/eval.py)
    rounds pins      the folder of the Claude Code CLI's lockfile, shipped in the package (cli/pins.py)

Every command's module is imported only when that command runs: `rounds --help` lists them from
the table below (a test checks it says what each command's own help says), so it loads neither
the grouping engine nor the database library.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, NamedTuple

import click

from rounds_bot import __version__

# numpy serves the grouping engine for sorts and sparse sums, never for linear algebra, so one BLAS
# thread is enough: the OpenBLAS that numpy's wheels bundle would otherwise start a thread per core
# when numpy is first imported, about a tenth of a second of CPU in every command that groups. A
# value already set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@contextmanager
def collector_held_back(*, freeze: bool = False) -> Iterator[None]:
    """The cyclic garbage collector off while a command's modules are imported, and as it was afterwards.

    Importing a command makes about a hundred thousand objects that live as long as the process
    (functions, classes, pydantic's validators, compiled patterns): the collector, run at Python's
    thresholds while they are made, walks them again and again and finds little, 5 to 15% of the CPU
    time of importing `rounds run`'s modules.

    With `freeze`, what the imports made is then moved out of the collector's sight (`gc.freeze`) once
    they succeeded: otherwise the first collections after them walk it all twice more (as the youngest
    generation, then the middle one), about 50 ms of a round's CPU, to find almost nothing. Frozen
    objects are still freed when no longer referenced; only the little cyclic garbage the imports leave
    (under a thousand objects for `rounds run`: classes and functions made and dropped while modules are
    built) is never collected, a bounded cost as each module is imported once."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


class Lazy(NamedTuple):
    target: str  # "module:attribute" of the click command
    summary: str  # its short help, as `rounds --help` lists it


class LazyGroup(click.Group):
    """Commands whose modules are imported only when used (click's documented lazy-loading pattern)."""

    lazy_commands: ClassVar[dict[str, Lazy]] = {
        "changelog": Lazy(
            "rounds_bot.cli.changelog:changelog_command",
            "Every fix rounds proposed, newest first: status, signature, issue, pull request, rates.",
        ),
        "command": Lazy(
            "rounds_bot.cli.command:command_command",
            "Handle `/rounds` commands from issue comments (and the Run workflow button's inputs).",
        ),
        "db": Lazy("rounds_bot.cli.db:db_group", "Inspect or rebuild the signature database."),
        "eval": Lazy(
            "rounds_bot.cli.eval:eval_command",
            "Score diagnoses on cases with a known answer: crash-site baseline, recordings, a live model.",
        ),
        "doctor": Lazy(
            "rounds_bot.cli.doctor:doctor_command",
            "Check settings, SigNoz, the GitHub token, the saved state, the schedule, `claude`, the budget.",
        ),
        "fix": Lazy(
            "rounds_bot.cli.fix:fix_command",
            "Propose the fixes asked for as draft pull requests, and follow the ones that shipped.",
        ),
        "group": Lazy(
            "rounds_bot.cli.group:group_command",
            "Group JSON Lines error events read from FILE (or standard input).",
        ),
        "notify": Lazy(
            "rounds_bot.cli.notify:notify_command",
            "Post the last round's new issues and summary to Zulip (ZULIP_* settings).",
        ),
        "pins": Lazy(
            "rounds_bot.cli.pins:pins_command",
            "Print the folder of the lockfile the Claude Code CLI is installed from (npm ci).",
        ),
        "run": Lazy(
            "rounds_bot.cli.run:run_command",
            "Run one round: poll, group, file one issue per problem, report.",
        ),
        "state": Lazy(
            "rounds_bot.cli.state:state_group",
            "Restore and check the signature database between GitHub Actions runs (the workflow uploads it).",
        ),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_commands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = self.lazy_commands.get(cmd_name)
        if lazy is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = lazy.target.split(":")
        # frozen only the first time: a process that resolves a command again (tests) freezes nothing more
        with collector_held_back(freeze=module_name not in sys.modules):
            module = importlib.import_module(module_name)
        command = getattr(module, attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{lazy.target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list, from the table: listing a command does not import it."""
        rows = []
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        for name in self.list_commands(ctx):
            lazy = self.lazy_commands.get(name)
            if lazy is not None:
                rows.append((name, click.Command(name, help=lazy.summary).get_short_help_str(limit)))
            else:
                command = super().get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="rounds")
def main() -> None:
    """rounds: makes rounds on running software and files one issue per problem."""
