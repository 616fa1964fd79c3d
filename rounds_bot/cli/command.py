"""`rounds command`: the `/rounds` commands of this run's event, and any that earlier runs left behind.

In the workflow, after the database is restored and before the round:

    rounds command                 an issue_comment event: its comment; a workflow_dispatch event: its
                                   `rediagnose` input; then comments no run handled yet (catch-up)
    rounds command --acknowledge   only the eyes reaction on the event's comment (a job without the database,
                                   so the receipt does not wait for a round in progress), and whether its
                                   author may give commands: step output `authorised=true|false`; one who
                                   may not is answered here at once (nothing was done, and why)

The comment text is read from the event file (`$GITHUB_EVENT_PATH`), never from the command line. Sets the
step output `round=true` when a round should follow (always for schedule and dispatch; for comments, after
`rediagnose` (while diagnosis is on) or `resume`).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from rounds_bot.cli.actions_io import add_to_summary, annotate, read_event, set_output
from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.commands.runner import (
    CommandContext,
    Outcome,
    acknowledge,
    catch_up,
    comment_from_event,
    handle_comment,
    post_unreplied,
)
from rounds_bot.controls import REDIAGNOSE, record
from rounds_bot.diagnosis.configured import diagnosis_off
from rounds_bot.errors import CommandError, TrackerError
from rounds_bot.fixing.enabled import requests_off
from rounds_bot.github.actions import ActionsApi, actions_api_from_settings
from rounds_bot.github.marker_sync import sync_markers
from rounds_bot.render.markdown import one_line
from rounds_bot.store import Store


@click.command("command")
@click.option(
    "--event",
    "event_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="The webhook event's JSON (default: $GITHUB_EVENT_PATH).",
)
@click.option("--acknowledge", is_flag=True, help="Only react with eyes to the event's comment; no database.")
@click.option("--no-catch-up", is_flag=True, help="Handle only this event, not comments earlier runs left.")
@env_file_option
@friendly_errors
def command_command(
    event_path: Path | None, acknowledge: bool, no_catch_up: bool, env_file: Path | None
) -> None:
    """Handle `/rounds` commands from issue comments (and the Run workflow button's inputs)."""
    settings = settings_from(env_file)
    event_name, event = read_event(event_path)
    api = actions_api_from_settings(settings)
    if acknowledge:
        click.echo(_acknowledge(api, event_name, event))
        return
    store = Store.open(settings.signatures_db_path)
    try:
        ctx = CommandContext(
            api=api,
            store=store,
            now=datetime.now(UTC),
            fixes_off=requests_off(settings),
            diagnosis_off=diagnosis_off(settings),
        )
        outcomes, wants_round = _handle(ctx, event_name, event, catch_up_too=not no_catch_up)
        # an ignore or unignore reaches the marker now, so a database rebuilt later keeps it
        ctx.notes.extend(sync_markers(store, api))
    finally:
        store.close()
    _report(outcomes, ctx.notes, ctx.warnings)
    set_output("round", "true" if wants_round else "false")


def _acknowledge(api: ActionsApi, event_name: str, event: dict[str, Any]) -> str:
    """The receipt, and the step output `authorised=true` only for a comment with commands whose author may
    give them: the job that handles it (in the database's queue) waits for this one and runs only then."""
    if event_name != "issue_comment" or "comment" not in event:
        set_output("authorised", "false")
        return "nothing to acknowledge: not an issue comment event"
    acknowledged = acknowledge(api, comment_from_event(event))
    set_output("authorised", "true" if acknowledged.authorised else "false")
    return acknowledged.message


def _handle(
    ctx: CommandContext, event_name: str, event: dict[str, Any], *, catch_up_too: bool
) -> tuple[list[Outcome], bool]:
    outcomes: list[Outcome] = []
    reposted = post_unreplied(ctx)
    if reposted:
        ctx.notes.append(f"posted {reposted} replies an earlier run could not post")
    skip: set[int] = set()
    wants_round = event_name != "issue_comment"
    if event_name == "issue_comment" and "comment" in event:
        comment = comment_from_event(event)
        skip.add(comment.comment_id)
        outcome = handle_comment(ctx, comment)
        outcomes.append(outcome)
        wants_round = outcome.needs_round
    elif event_name == "workflow_dispatch":
        _dispatch_rediagnose(ctx, event)
    if catch_up_too:
        try:
            caught = catch_up(ctx, skip=skip)
        except TrackerError as exc:  # the next run catches up; this run's own command and round go on
            ctx.warnings.append(f"comments left by earlier runs were not read: {exc}")
            caught = []
        outcomes.extend(caught)
        wants_round = wants_round or any(o.needs_round for o in caught)
    return outcomes, wants_round


def _dispatch_rediagnose(ctx: CommandContext, event: dict[str, Any]) -> None:
    """The Run workflow button's `rediagnose` input: a signature id or an issue number (#12)."""
    wanted = one_line(str((event.get("inputs") or {}).get("rediagnose") or ""))
    if not wanted:
        return
    who = str((event.get("sender") or {}).get("login") or "unknown")
    signature_id = ctx.store.find_signature_id(wanted)
    if signature_id is None:
        raise CommandError(
            f"rediagnose: no signature {wanted!r} in the database",
            hint="give a signature id (`rounds db status` lists them) or the number of an issue rounds filed",
        )
    with ctx.store.transaction():
        record(
            ctx.store,
            REDIAGNOSE,
            f"rediagnose:dispatch:{os.environ.get('GITHUB_RUN_ID') or ctx.now.isoformat()}",
            at=ctx.now,
            signature_id=signature_id,
            by=who,
            hint=None,
        )
    ctx.notes.append(f"@{who} asked to diagnose {signature_id} again")
    if ctx.diagnosis_off is not None:
        ctx.notes.append(f"diagnosis is off ({ctx.diagnosis_off}): the request waits until it is on")


def _report(outcomes: list[Outcome], notes: list[str], warnings: list[str]) -> None:
    lines = []
    for outcome in outcomes:
        if outcome.status == "ignored":
            click.echo(f"comment {outcome.comment_id}: ignored ({outcome.why})")
            continue
        done = ", ".join(outcome.commands) or "-"
        line = f"comment {outcome.comment_id}: {outcome.status} ({done})"
        if outcome.status == "refused":
            line += f": {outcome.why}"
        click.echo(line)
        lines.append(f"- {line}")
    for note in notes:
        click.echo(note)
        lines.append(f"- {note}")
    for warning in warnings:
        annotate("warning", warning)
        lines.append(f"- {warning}")
    if lines:
        add_to_summary("### /rounds commands\n\n" + "\n".join(lines))
