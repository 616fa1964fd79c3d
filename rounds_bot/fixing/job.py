"""One run of `rounds fix` (the workflow's fix job, after the round):

    1. watch     the pull requests rounds opened (merged? closed?) and evaluate the fixes that shipped
    2. ask       `--issue N` asks for a fix like `/rounds fix` would; ROUNDS_FIX_AUTO picks a few by itself
    3. propose   every pending request: a draft pull request, or a report on the issue saying why not

Returns the lines the terminal and the job summary show.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from rounds_bot.config import Settings
from rounds_bot.errors import CommandError
from rounds_bot.fixing.auto import request_automatic_fixes
from rounds_bot.fixing.enabled import fixes_off
from rounds_bot.fixing.proposals import FixOutcome, propose_fixes
from rounds_bot.fixing.requests import pending_requests, record_request
from rounds_bot.fixing.setup import fix_run
from rounds_bot.fixing.watch import Watch, watch_fixes
from rounds_bot.github.pulls import PullsApi
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
    lines = watch_fixes(Watch(store, pulls, now, timedelta(hours=settings.fix_quiet_hours)))
    if watch_only:
        return lines
    off = fixes_off(settings)
    if off is not None:
        waiting = len(pending_requests(store))
        return [
            *lines,
            f"fix pull requests are off: {off}" + (f"; {waiting} requests wait" if waiting else ""),
        ]
    if issue is not None:
        _ask(store, issue, now)
    lines += [f"{sid}: chosen for an automatic fix" for sid in request_automatic_fixes(store, settings, now)]
    run = fix_run(settings, store, now, pulls)
    outcomes = propose_fixes(run)
    if not outcomes:
        lines.append("no fix was asked for")
    return [*lines, *(describe(outcome) for outcome in outcomes), *run.notes]


def _ask(store: Store, issue: int, now: datetime) -> None:
    signature_id = store.find_signature_id(f"#{issue}")
    if signature_id is None:
        raise CommandError(
            f"--issue {issue}: no signature of the database has issue #{issue}",
            hint="`rounds db status` lists the signatures and their issues",
        )
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
    return f"{where}: no pull request: {outcome.reason}"
