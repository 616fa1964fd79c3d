"""The `rounds` command line: the click group and a module per command.

    app.py          the group `main` (the console script `rounds`), which registers every command
    options.py      what every command shares: `--env-file`, loading the settings, friendly errors
    actions_io.py   talking to the GitHub Actions runner: step outputs, the job summary, the event payload
    run.py, group.py, db.py, command.py, state.py, doctor.py, notify.py    one command (or group) each

Command modules import only `options` and `actions_io` from here, never `app` or each other. The checks
behind `rounds doctor` are `rounds_bot.doctor`; the workflow artifact behind `rounds state` is
`rounds_bot.github.artifacts`.
"""

from rounds_bot.cli.app import main

__all__ = ["main"]
