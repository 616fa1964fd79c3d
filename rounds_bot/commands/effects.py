"""What each `/rounds` command does, and which signature the issue it was asked on is.

`carry_out` runs the commands of one comment (the caller holds the transaction) and answers one reply line
per command, malformed line and dropped surplus. Each command records its control event in the author's
name (`record_command`) and answers the sentence the reply shows; GitHub refusing part of it is said in
that sentence rather than failing the comment.

`fix` lives in `fix_effects.py`; which signature an issue is, in `issue_signature.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

from rounds_bot import controls
from rounds_bot.clock import iso
from rounds_bot.commands.context import CommandContext, CommentEvent, record_command
from rounds_bot.commands.fix_effects import fix
from rounds_bot.commands.grammar import (
    Command,
    Parsed,
    help_text,
    inline_code,
)
from rounds_bot.commands.issue_signature import issue_of, own_signature, signature_of, whose_issue
from rounds_bot.errors import TrackerError
from rounds_bot.events import Fact
from rounds_bot.render.markdown import escape

# Commands that should be followed by a round in the same run.
ROUND_AFTER = frozenset({"rediagnose", "resume"})
_ISSUE_REF = re.compile(r"#(\d+)")


def carry_out(ctx: CommandContext, comment: CommentEvent, parsed: Parsed) -> tuple[list[str], bool]:
    """The reply's lines for the comment's commands, and whether a round should follow in this run."""
    lines: list[str] = []
    needs_round = False
    for command in parsed.commands:
        try:
            text = ACTIONS[command.name](ctx, comment, command)
        except TrackerError as exc:
            text = f"GitHub refused part of it: {exc}"
        lines.append(f"- {inline_code(command.line)}: {text}")
        waits = command.name == "rediagnose" and ctx.diagnosis_off is not None  # a round would not diagnose
        needs_round = needs_round or (command.name in ROUND_AFTER and not waits)
    for bad in parsed.malformed:
        lines.append(f"- {inline_code(bad.line)}: not done: {bad.problem}")
    if parsed.dropped:
        lines.append(f"- {parsed.dropped} more command lines were not read: at most 10 per comment")
    return lines, needs_round


def _help(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    return "here is what rounds understands.\n\n" + help_text()


def _status(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    state = controls.load_controls(ctx.store)
    parts = []
    signature_id = signature_of(ctx, comment)
    if signature_id is not None:
        parts.append(_signature_status(ctx, signature_id, state))
    else:
        parts.append("this is not an issue rounds filed, so there is no signature to report")
    if state.pause is not None:
        parts.append(
            f"rounds is **paused** (by @{state.pause.by} since {state.pause.since}): `resume` restarts it"
        )
    else:
        runs = ctx.store.runs()
        last = f"the last round ran at {runs[-1].started_at}" if runs else "no round has run yet"
        parts.append(f"rounds is running; {last}")
    return "; ".join(parts)


def _signature_status(ctx: CommandContext, signature_id: str, state: controls.Controls) -> str:
    signature = ctx.store.signature(signature_id)
    status = ctx.store.status(signature_id)
    mute = state.mutes.get(signature_id)
    facts = [f"signature `{signature_id}` is {mute.describe() if mute else status}"]
    if signature is not None:
        recent = ctx.store.count_since(signature_id, ctx.now - timedelta(hours=24))
        facts.append(
            f"{signature.total_count} occurrences ({recent} in the last 24 hours), "
            f"first seen {iso(signature.first_seen)}, last seen {iso(signature.last_seen)}"
        )
    target = state.target_of(signature_id)
    if target != signature_id:
        facts.append(f"merged into {issue_of(ctx, target)}")
    sources = state.merged_into(signature_id)
    if sources:
        facts.append("merged here: " + ", ".join(issue_of(ctx, s) for s in sources))
    return "; ".join(facts)


def _pause(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    state = controls.load_controls(ctx.store)
    if state.pause is not None:
        return f"already paused by @{state.pause.by} since {state.pause.since}"
    record_command(ctx, comment, Fact.ROUNDS_PAUSED, "pause", where=f"#{comment.issue_number}")
    return (
        "paused: from the next round on, rounds files, updates and comments on nothing and runs no diagnosis "
        "(occurrences are still counted) until someone comments `resume`"
    )


def _resume(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    state = controls.load_controls(ctx.store)
    if state.pause is None:
        return "rounds was not paused; nothing to resume"
    record_command(ctx, comment, Fact.ROUNDS_RESUMED, "resume")
    return f"resumed (it was paused by @{state.pause.by} since {state.pause.since}); a round runs now"


def _ignore(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    state = controls.load_controls(ctx.store)
    target = state.target_of(signature_id)
    if target != signature_id:
        return f"not done: this issue is merged into {issue_of(ctx, target)}; ignore that one instead"
    signature = ctx.store.signature(signature_id)
    payload = controls.mute_payload(
        comment.author.login,
        now=ctx.now,
        duration=command.duration,
        occurrences=command.occurrences,
        count_at=signature.total_count if signature else 0,
    )
    record_command(ctx, comment, Fact.INCIDENT_SUPPRESSED, "ignore", signature_id=signature_id, **payload)
    if command.duration is not None:
        until = f"until {payload['until']}"
    elif command.occurrences is not None:
        until = f"for the next {command.occurrences} occurrences"
    else:
        until = "until someone comments `unignore`"
    return (
        f"ignored {until}: rounds keeps counting in the issue body, but will not comment, reopen or notify "
        "about it"
    )


def _unignore(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    mute = controls.load_controls(ctx.store).mutes.get(signature_id)
    if mute is None:
        return (
            "this signature was not ignored with a command; nothing to undo (an issue closed as not planned "
            "stays quiet until it is reopened)"
        )
    record_command(
        ctx,
        comment,
        Fact.INCIDENT_UNSUPPRESSED,
        "unignore",
        signature_id=signature_id,
        source=controls.COMMAND_SOURCE,
    )
    return f"no longer ignored (it was {mute.describe()})"


def _rediagnose(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    record_command(
        ctx, comment, Fact.REDIAGNOSE_REQUESTED, "rediagnose", signature_id=signature_id, hint=command.hint
    )
    with_hint = f", with the hint {inline_code(command.hint)}" if command.hint else ""
    if ctx.diagnosis_off is not None:
        return (
            f"recorded{with_hint}, but diagnosis is off here: {escape(ctx.diagnosis_off)}. No round "
            "diagnoses anything until it is on; the request stays recorded, and the first round with "
            "diagnosis on diagnoses this signature again"
        )
    return f"queued: the next round diagnoses this signature again{with_hint}"


def _merge(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    assert command.target is not None
    if command.target == comment.issue_number:
        return "not done: an issue cannot be merged into itself"
    target = whose_issue(ctx, command.target)
    if target.signature_id is None:
        return f"not done: #{command.target} is not an issue rounds filed: {target.why_not}"
    target_id = target.signature_id
    state = controls.load_controls(ctx.store)
    already = state.merges.get(signature_id)
    if already is not None:
        where = issue_of(ctx, already)
        return f"not done: this issue is already merged into {where}; `split` it first"
    final = state.target_of(target_id)
    if final == signature_id:
        return (
            f"not done: #{command.target} is already merged into this issue; merging back would make a loop"
        )
    record_command(
        ctx,
        comment,
        Fact.SIGNATURE_MERGED,
        "merge",
        signature_id=signature_id,
        into=target_id,
        into_issue=f"#{command.target}",
    )
    try:
        ctx.api.set_issue_state(comment.issue_number, "closed", "duplicate")
        closed = "and this issue is closed as a duplicate"
    except TrackerError as exc:
        closed = f"but this issue could not be closed ({exc})"
    follows = f" (which is merged into {issue_of(ctx, final)})" if final != target_id else ""
    return (
        f"merged into #{command.target}{follows}: this signature's occurrences are counted there from the "
        f"next round on, {closed}; `split` undoes it"
    )


def _split(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    state = controls.load_controls(ctx.store)
    target = state.merges.get(signature_id)
    if target is None:
        sources = state.merged_into(signature_id)
        if sources:
            listed = ", ".join(issue_of(ctx, s) for s in sources)
            return (
                f"nothing to split here: {listed} merged into this issue; comment `split` on the one to undo"
            )
        return "nothing to split: this issue was not merged into another"
    record_command(ctx, comment, Fact.SIGNATURE_SPLIT, "split", signature_id=signature_id, was=target)
    reopened = ""
    try:
        issue = ctx.api.get_issue(comment.issue_number)
        if issue is not None and issue.get("state") == "closed" and issue.get("state_reason") == "duplicate":
            ctx.api.set_issue_state(comment.issue_number, "open", "reopened")
            reopened = " and this issue is reopened"
    except TrackerError as exc:
        reopened = f"; this issue could not be reopened ({exc})"
    return (
        f"split from {issue_of(ctx, target)}: this signature's occurrences are counted here again "
        f"from the next round on{reopened}"
    )


ACTIONS: dict[str, Callable[[CommandContext, CommentEvent, Command], str]] = {
    "help": _help,
    "status": _status,
    "rediagnose": _rediagnose,
    "ignore": _ignore,
    "unignore": _unignore,
    "merge": _merge,
    "split": _split,
    "fix": fix,
    "pause": _pause,
    "resume": _resume,
}
