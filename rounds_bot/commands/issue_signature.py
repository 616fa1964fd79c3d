"""Which signature an issue is: the database's record of the issues rounds filed first; otherwise the rounds
marker in its body, trusted only when rounds itself opened the issue (a marker is text anyone can copy into
an issue of their own, invisible once rendered); a pull request is never one."""

from __future__ import annotations

from rounds_bot.commands.context import CommandContext, CommentEvent, Whose
from rounds_bot.commands.grammar import Command
from rounds_bot.marker import read_marker
from rounds_bot.render.markdown import code


def own_signature(ctx: CommandContext, comment: CommentEvent, command: Command) -> tuple[str | None, str]:
    if comment.is_pull_request:
        return None, f"not done: `{command.name}` works on issues rounds filed, not on pull requests"
    whose = whose_issue(ctx, comment.issue_number, comment.issue_body, comment.issue_author)
    if whose.signature_id is None:
        return (
            None,
            f"not done: `{command.name}` works only on issues rounds filed, and this one is not: "
            f"{whose.why_not}",
        )
    return whose.signature_id, ""


def signature_of(ctx: CommandContext, comment: CommentEvent) -> str | None:
    if comment.is_pull_request:
        return None
    return whose_issue(ctx, comment.issue_number, comment.issue_body, comment.issue_author).signature_id


def whose_issue(ctx: CommandContext, number: int, body: str | None = None, author: str = "") -> Whose:
    """Issue `number`'s signature (read once per run): the database's when it filed the issue; otherwise the
    marker in the body, when the issue's author is rounds' own account (`GitHubApi.wrote`). `body` and
    `author` are the event's, when it gave them; without them the issue is read from GitHub."""
    if number not in ctx._signatures:
        ctx._signatures[number] = _whose(ctx, number, body, author)
    return ctx._signatures[number]


def _whose(ctx: CommandContext, number: int, body: str | None, author: str) -> Whose:
    known = ctx.store.find_signature_id(f"#{number}")
    if known is not None:
        return Whose(known)
    if body is None or not author:
        issue = ctx.api.get_issue(number)
        if issue is None:
            return Whose(None, "there is no such issue")
        if "pull_request" in issue:
            return Whose(None, "it is a pull request")
        body = issue.get("body") or ""
        author = str((issue.get("user") or {}).get("login") or "")
    marker = read_marker(body)
    if marker is None:
        return Whose(None, "it has no rounds marker")
    if not ctx.api.wrote({"user": {"login": author}}):
        by = f"by {code(author)}" if author else "by someone"
        return Whose(
            None,
            f"it was opened {by}, not by rounds: a rounds marker is trusted only in an issue "
            "rounds opened itself",
        )
    return Whose(marker.signature_id)


def issue_of(ctx: CommandContext, signature_id: str) -> str:
    """The signature's issue (`#12`), or the signature id when it has none."""
    signature = ctx.store.signature(signature_id)
    return signature.issue_ref if signature and signature.issue_ref else signature_id
