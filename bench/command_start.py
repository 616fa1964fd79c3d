"""What starting `rounds run` costs before its round begins, in CPU seconds of a new process that resolves
the command (imports its modules), two ways, alternated (A, B, B, A, ...), medians:

- held back: as the command line does it (`LazyGroup.get_command`), the cyclic garbage collector off while
  the command's modules are imported, and what they made frozen afterwards (`cli/app.py`,
  `collector_held_back`);
- collecting: the same modules imported with the collector running at Python's thresholds.

    python bench/command_start.py                 # 20 starts each way
    python bench/command_start.py --starts 40

Set PYTHONDONTWRITEBYTECODE only to include compiling rounds' sources in every start.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

#: what each way runs in a new process
WAYS = {
    "held back": "import click; from rounds_bot.cli.app import main; "
    "main.get_command(click.Context(main), 'run')",
    "collecting": "import importlib; import rounds_bot.cli.app; "
    "importlib.import_module('rounds_bot.cli.run')",
}


def child_cpu(code: str) -> float:
    """The CPU seconds (user and system) of a new Python process running `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=20, help="new processes each way")
    args = parser.parse_args()
    names = list(WAYS)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for attempt in range(args.starts):
        for name in names if attempt % 2 == 0 else reversed(names):
            seconds[name].append(child_cpu(WAYS[name]))
    held, collecting = (statistics.median(seconds[name]) for name in names)
    print(
        f"start  held back {held * 1000:6.1f} ms CPU   collecting {collecting * 1000:6.1f} ms CPU   "
        f"{held / collecting:5.2f}x  (medians of {args.starts} each)"
    )


if __name__ == "__main__":
    main()
