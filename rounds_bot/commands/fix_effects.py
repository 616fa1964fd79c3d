"""`/rounds fix`: on an issue rounds filed it queues a fix; on one of rounds' own draft pull requests it
asks for a revision of it. Which pull request that is, and its signature and issue, come from the event
log (the `FixProposed` facts rounds recorded), never from the comment. A person's instructions are shown
back escaped (`render.markdown.escape`), pinging, linking and hiding nothing.
"""

from __future__ import annotations

import re

from rounds_bot.commands.context import CommandContext, CommentEvent, record_command
from rounds_bot.commands.grammar import Command
from rounds_bot.commands.issue_signature import own_signature
from rounds_bot.events import Fact
from rounds_bot.fixing.blocked import waiting_because
from rounds_bot.fixing.branches import branch_prefix
from rounds_bot.fixing.requests import MAX_INSTRUCTIONS_CHARS, pending_for
from rounds_bot.lifecycle import FixRecord
from rounds_bot.render.markdown import code, escape

_ISSUE_REF = re.compile(r"#(\d+)")


def fix(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    pull = _fix_pull(ctx, comment.issue_number)
    if pull is not None:
        return _revise(ctx, comment, command, pull)
    if comment.is_pull_request:
        return (
            "not done: on a pull request, `fix` works only on the draft pull requests rounds opened (from "
            "its `rounds/fix-*` branches); on an issue rounds filed it asks for a fix"
        )
    signature_id, refusal = own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    if ctx.fixes_off is not None:
        return f"not done: fix pull requests are off here: {ctx.fixes_off}"
    busy = _already_queued(ctx, signature_id, command)
    if busy is not None:
        return busy
    _record_fix(ctx, comment, command, signature_id, comment.issue_number, None)
    said = _instructions_said(command)
    open_pulls = [f for f in ctx.store.fix_records(signature_id) if f.status == "proposed"]
    if open_pulls:
        return (
            f"queued{said}: rounds adds a commit to its draft pull request #{open_pulls[-1].pr_number} if "
            "the repository's tests pass with the new change, and says here what happened"
        )
    return (
        f"queued{said}: rounds tries a fix in a worktree and opens a DRAFT pull request if the repository's "
        "tests pass with it; either way it says here what happened. It never merges anything"
    )


def _revise(ctx: CommandContext, comment: CommentEvent, command: Command, pull: FixRecord) -> str:
    """`fix` on a pull request rounds opened: a new commit on its branch, with the person's instructions."""
    if ctx.fixes_off is not None:
        return f"not done: fix pull requests are off here: {ctx.fixes_off}"
    issue = _issue_number(ctx, pull)
    where = f"#{issue}" if issue else "the issue"
    if pull.status != "proposed" or comment.closed:
        state = "closed" if pull.status in ("proposed", "abandoned") else "merged"
        return (
            f"not done: this pull request is {state}, and rounds revises only an open one; `/rounds fix` on "
            f"{where} asks for a new fix"
        )
    busy = _already_queued(ctx, pull.signature_id, command)
    if busy is not None:
        return busy
    _record_fix(ctx, comment, command, pull.signature_id, issue, pull)
    return (
        f"queued{_instructions_said(command)}: rounds revises this draft pull request. It adds a commit to "
        f"its branch {code(pull.branch)} if the repository's tests pass with the new change, rewrites this "
        f"description to cover the whole pull request, and says on {where} what happened. It never merges "
        "anything"
    )


def _already_queued(ctx: CommandContext, signature_id: str, command: Command) -> str | None:
    pending = pending_for(ctx.store, signature_id)
    if pending is None:
        return None
    queued = f"a fix for this signature is already queued ({pending.asked_by()})"
    if command.instructions:
        queued += "; your instructions were not recorded: ask again once it has run"
    held = waiting_because(ctx.store, pending)
    return f"{queued}; it waits: {escape(held)}" if held is not None else f"{queued}; it runs once"


def _record_fix(
    ctx: CommandContext,
    comment: CommentEvent,
    command: Command,
    signature_id: str,
    issue: int,
    pull: FixRecord | None,
) -> None:
    extra: dict[str, object] = {}
    if command.instructions:
        extra["instructions"] = command.instructions
    if pull is not None:
        extra.update(pull=pull.pr_number, branch=pull.branch)
    record_command(
        ctx,
        comment,
        Fact.FIX_REQUESTED,
        "fix",
        signature_id=signature_id,
        issue=issue,
        trigger="command",
        **extra,
    )


def _instructions_said(command: Command) -> str:
    """The person's instructions as the reply shows them: escaped, and whether they were cut."""
    if not command.instructions:
        return ""
    said = f", with your instructions: “{escape(command.instructions)}”"
    if command.cut_from is not None:
        said += (
            f" (cut from {command.cut_from:,} characters: instructions are kept up to "
            f"{MAX_INSTRUCTIONS_CHARS:,})"
        )
    return said


def _fix_pull(ctx: CommandContext, number: int) -> FixRecord | None:
    """The fix pull request rounds recorded under this number (its `FixProposed` facts), or None."""
    for record in ctx.store.fix_records():
        if record.pr_number == number and record.branch.startswith(branch_prefix(record.signature_id)):
            return record
    return None


def _issue_number(ctx: CommandContext, pull: FixRecord) -> int:
    """The issue a fix pull request is for, as rounds recorded it (0 when it knows none)."""
    match = _ISSUE_REF.fullmatch(pull.issue)
    if match is None:
        signature = ctx.store.signature(pull.signature_id)
        match = _ISSUE_REF.fullmatch(signature.issue_ref or "") if signature is not None else None
    return int(match[1]) if match is not None else 0
