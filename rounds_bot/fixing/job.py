"""One run of `rounds fix`, all in one process (the GitHub Actions jobs run its stages apart: `stages.py`):

    1. watch     the pull requests rounds opened (merged? closed?) and evaluate the fixes that shipped
    2. ask       `--issue N` asks for a fix like `/rounds fix` would; ROUNDS_FIX_AUTO picks a few by itself
    3. propose   every pending request: a draft pull request, or a report on the issue saying why not
                 (`proposals.py`: edit, test and publish in turn)

Returns the lines the terminal and the job summary show.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

from rounds_bot.errors import CommandError
from rounds_bot.fixing.auto import request_automatic_fixes
from rounds_bot.fixing.enabled import fixes_off
from rounds_bot.fixing.proposals import ALL_IN_ONE, FixOutcome, propose_fixes
from rounds_bot.fixing.requests import pending_requests, record_request
from rounds_bot.fixing.setup import fix_run
from rounds_bot.fixing.tokens import refuse_tests_beside
from rounds_bot.fixing.watch import Watch, watch_fixes
from rounds_bot.github.pulls import PullsApi
from rounds_bot.settings import Settings
from rounds_bot.store import Store


def run_fix_job(
    settings: Settings,
    store: Store,
    pulls: PullsApi,
    now: datetime,
    *,
    issue: int | None = None,
    watch_only: bool = False,
) -> list[str]:
    lines = follow(settings, store, pulls, now)
    if watch_only:
        return lines
    off = off_line(settings, store)
    if off is not None:
        return [*lines, off]
    if issue is not None:
        asked_for(store, issue)  # a wrong issue number is said first
    if issue is not None or settings.fix_auto or pending_requests(store):
        # before anything is asked or chosen: the test command would run in this process (`tokens.py`)
        refuse_tests_beside(settings, os.environ, doing=ALL_IN_ONE)
    if issue is not None:
        ask(store, issue, now)
    lines += [f"{sid}: chosen for an automatic fix" for sid in request_automatic_fixes(store, settings, now)]
    run = fix_run(settings, store, now, pulls)
    outcomes = propose_fixes(run)
    if not outcomes:
        lines.append("no fix was asked for")
    return [*lines, *(describe(outcome) for outcome in outcomes), *run.notes]


def follow(settings: Settings, store: Store, pulls: PullsApi, now: datetime) -> list[str]:
    """Step 1: the pull requests rounds opened, their merges, releases and evaluations."""
    return watch_fixes(Watch(store, pulls, now, timedelta(hours=settings.fix_quiet_hours)))


def off_line(settings: Settings, store: Store) -> str | None:
    """Why fix pull requests are off, with how many requests wait; None when they are on."""
    off = fixes_off(settings)
    if off is None:
        return None
    waiting = len(pending_requests(store))
    return f"fix pull requests are off: {off}" + (f"; {waiting} requests wait" if waiting else "")


def asked_for(store: Store, issue: int) -> str:
    """The signature of issue `issue`, for `--issue`; a CommandError when the database has none."""
    signature_id = store.find_signature_id(f"#{issue}")
    if signature_id is None:
        raise CommandError(
            f"--issue {issue}: no signature of the database has issue #{issue}",
            hint="`rounds db status` lists the signatures and their issues",
        )
    return signature_id


def ask(store: Store, issue: int, now: datetime) -> None:
    """Record a request for a fix of issue `issue`'s signature, as `/rounds fix` would."""
    signature_id = asked_for(store, issue)
    with store.transaction():
        record_request(
            store,
            origin=f"cli:{issue}:{now:%Y%m%dT%H%M%S}",
            signature_id=signature_id,
            issue_number=issue,
            by="the command line",
            trigger="cli",
            at=now,
        )


def describe(outcome: FixOutcome) -> str:
    where = f"#{outcome.issue_number} ({outcome.signature_id})"
    if outcome.status in ("proposed", "updated"):
        return f"{where}: draft pull request #{outcome.pr_number} {outcome.status} {outcome.url}".rstrip()
    if outcome.status == "offered":
        return (
            f"{where}: branch {outcome.branch} pushed, pull request left to a person ({outcome.reason}); "
            f"the issue has a link that opens it: {outcome.url}"
        )
    if outcome.status == "waiting":
        return f"{where}: waits for the next run: {outcome.reason}"
    if outcome.status == "blocked":
        return f"{where}: not tried yet, the request waits (no model ran): {outcome.reason}"
    if outcome.status == "skipped":
        return f"{where}: nothing done: {outcome.reason}"
    return f"{where}: no pull request: {outcome.reason}"
