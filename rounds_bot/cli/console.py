"""The console script `rounds`: the click group `main`, then the process's end (`ending.py`), which skips
the interpreter's teardown after a command that is done with everything it owns."""

from __future__ import annotations

from rounds_bot.cli import ending
from rounds_bot.cli.app import main


def console() -> None:
    """What `rounds` runs: `main` as a program (click's standalone mode always ends it with SystemExit)."""
    ending.forget()
    try:
        main()
    except SystemExit as exit_:
        ending.end_now_if_done(exit_.code)
        raise
