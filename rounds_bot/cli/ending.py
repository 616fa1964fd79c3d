"""How the `rounds` process ends after a command that is done with everything it owns: at once, without
the interpreter's teardown.

A round leaves hundreds of thousands of objects in module globals (memos, caches, compiled scanners); at
exit the interpreter collects and frees them one by one, most of a second of CPU after a first round over
20k records, for memory the operating system takes back whole the moment the process ends. So a command
that has finished and closed what it owns says so (`done_with_everything`), and the console script then
ends the process with `os._exit` and the same status, after what the interpreter's exit does for the
program's sake: the atexit handlers (logging's flush among them) and the standard streams flushed.

Nothing else is skipped, so the process ends the usual way whenever:

- the command did not say so: it failed, it was refused, or it is a command that does not;
- the status is not success;
- a thread other than the main one is still running (the interpreter would wait for it);
- its database is not yet whole in its main file (a -wal or -shm beside it: a connection still open,
  which the teardown would close and checkpoint; the workflow uploads the main file alone);
- a standard stream cannot be flushed (a closed pipe): the interpreter reports it as before.

The temporary files a round uses are anonymous (`tempfile.TemporaryFile`, SQLite's temporary databases):
no name is left on disk whichever way the process ends. Only `console` ends a process: `main` called
in-process (tests, click's runner) returns or raises as before.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path

#: the database suffixes SQLite leaves beside a database a connection still has open
_OPEN_DATABASE_SUFFIXES = ("-wal", "-shm", "-journal")

_done = False


def done_with_everything(database: Path) -> None:
    """Called by a command that has finished and closed all it owns, its database at `database` among it:
    the console script may end the process without the teardown (unless the database is still open)."""
    global _done
    _done = whole_in_main_file(database)


def whole_in_main_file(database: Path) -> bool:
    """Nothing of the database waits beside its main file: no connection has it open any more."""
    return not any(Path(f"{database}{suffix}").exists() for suffix in _OPEN_DATABASE_SUFFIXES)


def forget() -> None:
    """Back to the start: no command has said it is done (each process's console script starts here)."""
    global _done
    _done = False


def end_now_if_done(status: object) -> None:
    """End the process at once with `status` when the command said it is done and nothing else needs
    the interpreter's exit; otherwise return, and the caller ends the usual way."""
    if not (_done and status in (None, 0) and _main_thread_alone()):
        return
    # the interpreter's own first step at exit: whatever a library registered still runs
    atexit._run_exitfuncs()
    if not _streams_flushed():
        return
    os._exit(0)


def _main_thread_alone() -> bool:
    main = threading.main_thread()
    return all(thread is main or thread.daemon for thread in threading.enumerate())


def _streams_flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the usual exit says so, as it always did
        return False
    return True
