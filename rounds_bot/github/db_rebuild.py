"""The signature database rebuilt from the bot's issues, swapped into place only once it is complete.

    rebuild_into(target, build)        build a fresh database beside `target`, then swap it in
                                       (the old one kept as `.bak`)
    rebuild_from_issues(api, target)   the same, filled by `rebuild.rebuild_database` from the bot's issues

Used by `rounds db rebuild` and, when no saved database is usable, by `rounds state restore`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rounds_bot.github.journal import Journal
from rounds_bot.github.rebuild import RebuildResult, rebuild_database
from rounds_bot.github.rest import GitHubApi
from rounds_bot.store import Store


def rebuild_into(target: Path, build: Callable[[Store, Journal], RebuildResult]) -> RebuildResult:
    """Build next to `target`, then swap it in: a failed rebuild leaves the old file untouched."""
    scratch = target.with_name(target.name + ".rebuilding")
    remove_database_files(scratch)
    store = Store.open(scratch)
    journal = Journal.open(scratch)
    try:
        result = build(store, journal)
    except BaseException:
        store.close()
        journal.close()
        remove_database_files(scratch)
        raise
    store.close()
    journal.close()
    backup = target.with_name(target.name + ".bak")
    remove_database_files(backup)
    # a -wal file left beside a lost database would be replayed into the new one: move it aside too
    for suffix in ("", "-wal", "-shm"):
        side = target.with_name(target.name + suffix)
        if side.exists():
            os.replace(side, backup.with_name(backup.name + suffix))
    os.replace(scratch, target)
    return result


def rebuild_from_issues(api: GitHubApi, target: Path) -> RebuildResult:
    """The database from the bot's issues alone, swapped in only when complete."""
    return rebuild_into(target, lambda store, journal: rebuild_database(api, store, journal))


def remove_database_files(path: Path) -> None:
    """The database file at `path` and its -wal and -shm companions, those that exist."""
    for suffix in ("", "-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.unlink()
