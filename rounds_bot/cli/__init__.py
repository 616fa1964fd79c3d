"""The `rounds` command line: the click group and a module per command.

    app.py          the group `main`, which registers every command
    console.py      the console script `rounds` (`console`): `main`, then the process's end
    ending.py       ending the process without the interpreter's teardown, once a command is done
    options.py      what every command shares: `--env-file`, loading the settings, friendly errors
    actions_io.py   talking to the GitHub Actions runner: step outputs, the job summary, the event payload
    run.py, group.py, db.py, command.py, state.py, doctor.py, notify.py    one command (or group) each

Command modules import only `options`, `actions_io` and `ending` from here, never `app` or each other.
The checks behind `rounds doctor` are `rounds_bot.doctor`; the workflow artifact behind `rounds state` is
`rounds_bot.github.artifacts`.
"""

from rounds_bot.cli.app import main

__all__ = ["main"]
