"""`rounds pins claude-code`: print the folder of the lockfile the Claude Code CLI is installed from.

The folder ships inside the package (package data), so whichever way rounds was installed (from a pinned
commit, a PyPI version or a git URL) the workflow and the actions install the CLI with `npm ci` from the
lockfile of the rounds they run: the exact version, and every package's sha512 `integrity`, which npm checks
each downloaded tarball against ("npm ci": it installs what package-lock.json names and fails when
package.json disagrees with it; https://docs.npmjs.com/cli/commands/npm-ci). A rounds too old to have the
command fails with click's usage error, so an install step can never mistake it for a folder.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from rounds_bot.cli.options import friendly_errors
from rounds_bot.errors import RoundsError

#: every lockfile the package ships, and the files `npm ci` needs from its folder
PINNED_FILES = {"claude-code": ("package.json", "package-lock.json")}


def pins_folder(name: str) -> Path:
    """The installed package's folder of the lockfile `name`, with every file `npm ci` needs in it."""
    # a path on disk: rounds is installed as files (pip never installs it zipped), as demo_data_path reads
    folder = Path(str(resources.files("rounds_bot") / "pins" / name))
    missing = [file for file in PINNED_FILES[name] if not (folder / file).is_file()]
    if missing:
        raise RoundsError(
            f"this installation of rounds has no {', '.join(missing)} in {folder}",
            hint="reinstall rounds-bot from a wheel or a source checkout: the files are its package data",
        )
    return folder


@click.command("pins")
@click.argument("name", type=click.Choice(sorted(PINNED_FILES)))
@friendly_errors
def pins_command(name: str) -> None:
    """Print the folder of the lockfile the Claude Code CLI is installed from (npm ci)."""
    click.echo(str(pins_folder(name)))
