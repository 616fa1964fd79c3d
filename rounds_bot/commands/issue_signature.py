"""Which signature an issue is: the rounds marker in its body (GitHub is the record of facts), or the
database when it knows the issue; a pull request is never one."""

from __future__ import annotations

from rounds_bot.commands.context import CommandContext, CommentEvent
from rounds_bot.commands.grammar import Command
from rounds_bot.marker import read_marker


def own_signature(ctx: CommandContext, comment: CommentEvent, command: Command) -> tuple[str | None, str]:
    if comment.is_pull_request:
        return None, f"not done: `{command.name}` works on issues rounds filed, not on pull requests"
    signature_id = signature_of(ctx, comment)
    if signature_id is None:
        return (
            None,
            f"not done: `{command.name}` works only on issues rounds filed (this one has no rounds marker)",
        )
    return signature_id, ""


def signature_of(ctx: CommandContext, comment: CommentEvent) -> str | None:
    if comment.is_pull_request:
        return None
    return signature_of_issue(ctx, comment.issue_number, comment.issue_body)


def signature_of_issue(ctx: CommandContext, number: int, body: str | None) -> str | None:
    """The marker in the issue (GitHub is the record of facts); the database when it knows the issue."""
    if number in ctx._signatures:
        return ctx._signatures[number]
    if body is None:
        known = ctx.store.find_signature_id(f"#{number}")
        if known is not None:
            ctx._signatures[number] = known
            return known
        issue = ctx.api.get_issue(number)
        body = "" if issue is None or "pull_request" in issue else issue.get("body") or ""
    marker = read_marker(body)
    ctx._signatures[number] = marker.signature_id if marker else None
    return ctx._signatures[number]


def issue_of(ctx: CommandContext, signature_id: str) -> str:
    """The signature's issue (`#12`), or the signature id when it has none."""
    signature = ctx.store.signature(signature_id)
    return signature.issue_ref if signature and signature.issue_ref else signature_id
