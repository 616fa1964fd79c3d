"""The bot's answer to a comment: posted once, marked with the comment it answers, never a command itself.

Every reply ends with a hidden mark naming the comment it answers. The event log records that a reply was
posted (`CommandReplied`); when the database was lost, the mark on GitHub says the comment was answered.
"""

from __future__ import annotations

import re
from typing import Any

from rounds_bot import controls
from rounds_bot.commands.context import CommandContext
from rounds_bot.events import Fact
from rounds_bot.github.actions import ActionsApi
from rounds_bot.render.markdown import neutralise

_REPLY_MARK = "<!-- rounds:reply {comment_id} -->"
_REPLY_MARK_PATTERN = re.compile(r"<!-- rounds:reply (?P<id>\d+) -->")


def post_reply(ctx: CommandContext, comment_id: int, issue_number: int, reply: str) -> None:
    post_marked_reply(ctx.api, comment_id, issue_number, reply)
    with ctx.store.transaction():
        record_replied(ctx, comment_id)


def post_marked_reply(api: ActionsApi, comment_id: int, issue_number: int, reply: str) -> None:
    """The reply, marked with the comment it answers, without the database (the acknowledging job): a run
    that reads the comment later finds the mark (`reply_on_github`) and records the comment as answered."""
    body = neutralise(reply) + "\n\n" + _REPLY_MARK.format(comment_id=comment_id)
    api.create_comment(issue_number, body)


def record_replied(ctx: CommandContext, comment_id: int) -> None:
    controls.record(ctx.store, Fact.COMMAND_REPLIED, f"replied:{comment_id}", at=ctx.now)


def post_unreplied(ctx: CommandContext) -> int:
    """Replies recorded but never posted (a run died in between): post them now."""
    pending = controls.unreplied(ctx.store)
    for handled in pending:
        post_reply(ctx, handled.comment_id, handled.issue_number, handled.reply)
    return len(pending)


def reply_on_github(ctx: CommandContext, comment_id: int, issue_number: int, since: str | None) -> str | None:
    """The body of the bot's reply to the comment among the issue's comments, or None when there is none."""
    for reply in ctx.api.list_comments(issue_number, since=since):
        if _answers(ctx.api, reply, comment_id):
            return str(reply.get("body") or "")
    return None


def _answers(api: ActionsApi, reply: dict[str, Any], comment_id: int) -> bool:
    match = _REPLY_MARK_PATTERN.search(reply.get("body") or "")
    # rounds' own comment only: anyone (a person, another app) can copy the hidden mark into theirs
    return bool(match and int(match["id"]) == comment_id and api.wrote(reply))
