"""Carrying out the `/rounds` commands of one comment: receipt, authorisation, effects, record, reply.

    acknowledge(api, comment)
      the receipt before any database (the acknowledging job): eyes, then whether the author may give
      commands; one who may not is answered at once, so no run need join the queue for the comment
    handle_comment(ctx, comment)
      1. skip it when it is not for rounds (edited, a bot's, no command line) or was handled before
         (the event log says so; after a lost database, the bot's reply on GitHub says so)
      2. an eyes reaction: the receipt
      3. authorise the author with the collaborator-permission API (write or admin)
      4. carry out each command (`effects`), and record `CommandHandled` with the reply, in ONE transaction
      5. post the reply (never containing a command; `replies`), then record `CommandReplied`

A reply that could not be posted is posted by the next run (`post_unreplied`). Comments whose run never came
(a queued run replaced by a newer one) are found by listing the repository's comments since a watermark
(`catch_up`), so no command is lost to the workflow's concurrency queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import Field

from rounds_bot import controls
from rounds_bot.commands.context import (
    CommandContext,
    CommentEvent,
    Outcome,
    comment_from_event,
    comment_from_listing,
    record_command,
)
from rounds_bot.commands.effects import carry_out
from rounds_bot.commands.grammar import authorise, ignore_reason, parse_comment
from rounds_bot.commands.replies import (
    post_marked_reply,
    post_reply,
    post_unreplied,
    record_replied,
    reply_on_github,
)
from rounds_bot.errors import TrackerError
from rounds_bot.events import Fact
from rounds_bot.github.actions import ActionsApi
from rounds_bot.models import Frozen

__all__ = [
    "Acknowledged",
    "CommandContext",
    "CommentEvent",
    "Outcome",
    "acknowledge",
    "catch_up",
    "comment_from_event",
    "comment_from_listing",
    "github_time",
    "handle_comment",
    "post_unreplied",
]

# Without a watermark (first run, or a database rebuilt from issues), comments this old are still read.
FIRST_LOOKBACK = timedelta(hours=24)


def handle_comment(ctx: CommandContext, comment: CommentEvent) -> Outcome:
    skip = ignore_reason(comment.action, comment.author)
    if skip is not None:
        return Outcome(comment_id=comment.comment_id, status="ignored", why=skip)
    parsed = parse_comment(comment.body)
    if parsed.empty:
        return Outcome(comment_id=comment.comment_id, status="ignored", why="no /rounds command in it")
    if _already_handled(ctx, comment):
        return Outcome(comment_id=comment.comment_id, status="already-handled", why="handled before")
    ctx.api.react(comment.comment_id, "eyes")
    who = comment.author.login
    decision = authorise(who, ctx.api.collaborator_permission)
    if not decision.allowed:
        reply = refusal(who, decision.reason)
        _record_and_reply(ctx, comment, reply, [])
        return Outcome(comment_id=comment.comment_id, status="refused", why=decision.reason, reply=reply)
    with ctx.store.transaction():
        lines, needs_round = carry_out(ctx, comment, parsed)
        reply = f"@{who}:\n\n" + "\n".join(lines)
        names = [c.name for c in parsed.commands]
        _record(ctx, comment, reply, names)
    post_reply(ctx, comment.comment_id, comment.issue_number, reply)
    return Outcome(
        comment_id=comment.comment_id,
        status="handled",
        reply=reply,
        commands=names,
        needs_round=needs_round,
    )


class Acknowledged(Frozen):
    """What the acknowledging job made of the event's comment, before any database or queue."""

    message: str
    authorised: bool = Field(
        default=False, description="it holds commands and its author may give them: a run should handle it"
    )


def acknowledge(api: ActionsApi, comment: CommentEvent) -> Acknowledged:
    """The receipt of a comment, in a job outside the database's concurrency group: eyes on a comment with
    commands, then whether its author may give them (`authorise`). Only then does a run join the queue for
    it, so a stranger's comments cannot fill the queue and cancel the rounds waiting in it. An author who
    may not is answered here at once, as `handle_comment` answers one: the reply carries the comment's mark,
    so a later run's catch-up finds it on GitHub and records the comment as answered, never twice."""
    skip = ignore_reason(comment.action, comment.author)
    if skip is not None:
        return Acknowledged(message=f"comment {comment.comment_id} ignored: {skip}")
    if parse_comment(comment.body).empty:
        return Acknowledged(message=f"comment {comment.comment_id} has no /rounds command")
    api.react(comment.comment_id, "eyes")
    who = comment.author.login
    decision = authorise(who, api.collaborator_permission)
    if decision.allowed:
        said = f"comment {comment.comment_id}: acknowledged with eyes; {decision.reason}"
        return Acknowledged(message=said, authorised=True)
    post_marked_reply(api, comment.comment_id, comment.issue_number, refusal(who, decision.reason))
    return Acknowledged(message=f"comment {comment.comment_id}: acknowledged and refused: {decision.reason}")


def refusal(who: str, reason: str) -> str:
    """The reply to a comment whose author may not give commands."""
    return f"@{who}: nothing was done: {reason}."


def _already_handled(ctx: CommandContext, comment: CommentEvent) -> bool:
    known = controls.handled_comment(ctx.store, comment.comment_id)
    if known is not None:
        if not known.replied:
            post_reply(ctx, comment.comment_id, known.issue_number, known.reply)
        return True
    reply = reply_on_github(ctx, comment.comment_id, comment.issue_number, since=comment.created_at or None)
    if reply is None:
        return False
    # the database was lost or rebuilt since: GitHub remembers that this comment was answered
    with ctx.store.transaction():
        _record(ctx, comment, reply, [])
        record_replied(ctx, comment.comment_id)
    return True


def _record_and_reply(ctx: CommandContext, comment: CommentEvent, reply: str, names: list[str]) -> None:
    with ctx.store.transaction():
        _record(ctx, comment, reply, names)
    post_reply(ctx, comment.comment_id, comment.issue_number, reply)


def _record(ctx: CommandContext, comment: CommentEvent, reply: str, names: Sequence[str]) -> None:
    record_command(
        ctx, comment, Fact.COMMAND_HANDLED, "command", issue=comment.issue_number, commands=names, reply=reply
    )


# --- catching up -------------------------------------------------------------------------------
def catch_up(ctx: CommandContext, *, skip: set[int] | None = None) -> list[Outcome]:
    """Commands in comments no run handled yet (their run was replaced in the queue, or failed)."""
    watermark = controls.command_watermark(ctx.store) or github_time(ctx.now - FIRST_LOOKBACK)
    listed = ctx.api.list_repository_comments(since=watermark)
    outcomes = []
    newest = watermark
    for item in listed:
        comment = comment_from_listing(item)
        if _is_pending(comment, skip or set()):
            assert comment is not None
            try:
                outcomes.append(handle_comment(ctx, comment))
            except TrackerError as exc:
                # listed again next run (`since` is inclusive); the comments after it wait with it. The
                # listing is in order of creation and `since` filters on `updated_at` (REST "List issue
                # comments for a repository"): an older comment edited later may have raised `newest`
                # past this one, so the watermark stops at this comment's own time.
                ctx.warnings.append(
                    f"the commands of comment {comment.comment_id} wait for the next run: {exc}"
                )
                newest = min(newest, item.get("updated_at") or newest)
                break
        newest = max(newest, item.get("updated_at") or "")
    with ctx.store.transaction():
        controls.set_command_watermark(ctx.store, newest)
    return outcomes


def _is_pending(comment: CommentEvent | None, skip: set[int]) -> bool:
    return comment is not None and comment.comment_id not in skip and not parse_comment(comment.body).empty


def github_time(moment: datetime) -> str:
    """GitHub's timestamp format (`since` parameters and `updated_at` fields compare as text)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
