"""Carrying out the `/rounds` commands of one comment: receipt, authorisation, effects, record, reply.

    handle_comment(ctx, comment)
      1. skip it when it is not for rounds (edited, a bot's, no command line) or was handled before
         (the event log says so; after a lost database, the bot's reply on GitHub says so)
      2. an eyes reaction: the receipt
      3. authorise the author with the collaborator-permission API (write or admin)
      4. carry out each command, and record `CommandHandled` with the reply, in ONE transaction
      5. post the reply (never containing a command), then record `CommandReplied`

A reply that could not be posted is posted by the next run (`post_unreplied`). Comments whose run never came
(a queued run replaced by a newer one) are found by listing the repository's comments since a watermark
(`catch_up`), so no command is lost to the workflow's concurrency queue.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from rounds_bot import controls
from rounds_bot.errors import TrackerError
from rounds_bot.github.actions import ActionsApi
from rounds_bot.github.commands.grammar import (
    Author,
    Command,
    Parsed,
    authorise,
    help_text,
    ignore_reason,
    inline_code,
    neutralise,
    parse_comment,
)
from rounds_bot.models import Frozen
from rounds_bot.render.marker import read_marker
from rounds_bot.store import Store

# Without a watermark (first run, or a database rebuilt from issues), comments this old are still read.
FIRST_LOOKBACK = timedelta(hours=24)
# Commands that should be followed by a round in the same run.
ROUND_AFTER = frozenset({"rediagnose", "resume"})
_REPLY_MARK = "<!-- rounds:reply {comment_id} -->"
_REPLY_MARK_PATTERN = re.compile(r"<!-- rounds:reply (?P<id>\d+) -->")
_ISSUE_NUMBER = re.compile(r"/issues/(?P<number>\d+)$")

Status = Literal["ignored", "handled", "refused", "already-handled"]


class CommentEvent(Frozen):
    """A comment as rounds reads it, from an `issue_comment` event or from a listing."""

    comment_id: int
    action: str = "created"
    body: str
    author: Author
    issue_number: int
    issue_body: str | None = None
    is_pull_request: bool = False
    created_at: str = ""


class Outcome(Frozen):
    comment_id: int
    status: Status
    why: str = ""
    reply: str | None = None
    commands: list[str] = Field(default_factory=list)
    needs_round: bool = False


@dataclass
class CommandContext:
    api: ActionsApi
    store: Store
    now: datetime
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # issue number -> signature id, read once per run
    _signatures: dict[int, str | None] = field(default_factory=dict)


# --- reading comments ----------------------------------------------------------------------------
def comment_from_event(event: dict[str, Any]) -> CommentEvent:
    """The comment of an `issue_comment` webhook payload (GITHUB_EVENT_PATH)."""
    comment, issue = event["comment"], event["issue"]
    user = comment.get("user") or {}
    return CommentEvent(
        comment_id=int(comment["id"]),
        action=str(event.get("action", "created")),
        body=comment.get("body") or "",
        author=Author(login=user.get("login", "ghost"), type=user.get("type", "User")),
        issue_number=int(issue["number"]),
        issue_body=issue.get("body") or "",
        is_pull_request="pull_request" in issue,
        created_at=comment.get("created_at") or "",
    )


def comment_from_listing(item: dict[str, Any]) -> CommentEvent | None:
    match = _ISSUE_NUMBER.search(item.get("issue_url") or "")
    if match is None:
        return None
    user = item.get("user") or {}
    created, updated = item.get("created_at") or "", item.get("updated_at") or ""
    return CommentEvent(
        comment_id=int(item["id"]),
        action="created" if created == updated else "edited",
        body=item.get("body") or "",
        author=Author(login=user.get("login", "ghost"), type=user.get("type", "User")),
        issue_number=int(match["number"]),
        is_pull_request="/pull/" in (item.get("html_url") or ""),
        created_at=created,
    )


# --- one comment -------------------------------------------------------------------------------
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
        reply = f"@{who}: nothing was done: {decision.reason}."
        _record_and_reply(ctx, comment, reply, [])
        return Outcome(comment_id=comment.comment_id, status="refused", why=decision.reason, reply=reply)
    with ctx.store.transaction():
        lines, needs_round = _carry_out(ctx, comment, parsed)
        reply = f"@{who}:\n\n" + "\n".join(lines)
        names = [c.name for c in parsed.commands]
        _record(ctx, comment, reply, names)
    _reply(ctx, comment.comment_id, comment.issue_number, reply)
    return Outcome(
        comment_id=comment.comment_id,
        status="handled",
        reply=reply,
        commands=names,
        needs_round=needs_round,
    )


def _already_handled(ctx: CommandContext, comment: CommentEvent) -> bool:
    known = controls.handled_comment(ctx.store, comment.comment_id)
    if known is not None:
        if not known.replied:
            _reply(ctx, comment.comment_id, known.issue_number, known.reply)
        return True
    since = comment.created_at or None
    for reply in ctx.api.list_comments(comment.issue_number, since=since):
        match = _REPLY_MARK_PATTERN.search(reply.get("body") or "")
        by_a_bot = (reply.get("user") or {}).get("type") == "Bot"  # a person cannot fake an answer
        if match and by_a_bot and int(match["id"]) == comment.comment_id:
            # the database was lost or rebuilt since: GitHub remembers that this comment was answered
            with ctx.store.transaction():
                _record(ctx, comment, reply.get("body") or "", [])
                controls.record(ctx.store, controls.REPLIED, f"replied:{comment.comment_id}", at=ctx.now)
            return True
    return False


def _record_and_reply(ctx: CommandContext, comment: CommentEvent, reply: str, names: list[str]) -> None:
    with ctx.store.transaction():
        _record(ctx, comment, reply, names)
    _reply(ctx, comment.comment_id, comment.issue_number, reply)


def _record(ctx: CommandContext, comment: CommentEvent, reply: str, names: list[str]) -> None:
    _record_command(
        ctx, comment, controls.HANDLED, "command", issue=comment.issue_number, commands=names, reply=reply
    )


def _record_command(ctx: CommandContext, comment: CommentEvent, kind: str, key: str, **payload: Any) -> None:
    """A control event a comment caused, keyed by the comment and in its author's name."""
    payload.setdefault("by", comment.author.login)
    controls.record(ctx.store, kind, f"{key}:{comment.comment_id}", at=ctx.now, **payload)


def _reply(ctx: CommandContext, comment_id: int, issue_number: int, reply: str) -> None:
    body = neutralise(reply) + "\n\n" + _REPLY_MARK.format(comment_id=comment_id)
    ctx.api.create_comment(issue_number, body)
    with ctx.store.transaction():
        controls.record(ctx.store, controls.REPLIED, f"replied:{comment_id}", at=ctx.now)


def post_unreplied(ctx: CommandContext) -> int:
    """Replies recorded but never posted (a run died in between): post them now."""
    pending = controls.unreplied(ctx.store)
    for handled in pending:
        _reply(ctx, handled.comment_id, handled.issue_number, handled.reply)
    return len(pending)


# --- the commands ------------------------------------------------------------------------------
def _carry_out(ctx: CommandContext, comment: CommentEvent, parsed: Parsed) -> tuple[list[str], bool]:
    lines: list[str] = []
    needs_round = False
    for command in parsed.commands:
        try:
            text = ACTIONS[command.name](ctx, comment, command)
        except TrackerError as exc:
            text = f"GitHub refused part of it: {exc}"
        lines.append(f"- {inline_code(command.line)}: {text}")
        needs_round = needs_round or command.name in ROUND_AFTER
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
    signature_id = _signature_of(ctx, comment)
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
        last = f"the last round ran at {runs[-1]['started_at']}" if runs else "no round has run yet"
        parts.append(f"rounds is running; {last}")
    return "; ".join(parts)


def _signature_status(ctx: CommandContext, signature_id: str, state: controls.Controls) -> str:
    row = ctx.store.signature(signature_id)
    status = ctx.store.status(signature_id)
    mute = state.mutes.get(signature_id)
    facts = [f"signature `{signature_id}` is {mute.describe() if mute else status}"]
    if row is not None:
        recent = ctx.store.count_since(signature_id, ctx.now - timedelta(hours=24))
        facts.append(
            f"{row['total_count']} occurrences ({recent} in the last 24 hours), "
            f"first seen {row['first_seen']}, last seen {row['last_seen']}"
        )
    target = state.target_of(signature_id)
    if target != signature_id:
        facts.append(f"merged into {_issue_of(ctx, target)}")
    sources = state.merged_into(signature_id)
    if sources:
        facts.append("merged here: " + ", ".join(_issue_of(ctx, s) for s in sources))
    return "; ".join(facts)


def _pause(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    state = controls.load_controls(ctx.store)
    if state.pause is not None:
        return f"already paused by @{state.pause.by} since {state.pause.since}"
    _record_command(ctx, comment, controls.PAUSED, "pause", where=f"#{comment.issue_number}")
    return (
        "paused: from the next round on, rounds files, updates and comments on nothing and runs no diagnosis "
        "(occurrences are still counted) until someone comments `resume`"
    )


def _resume(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    state = controls.load_controls(ctx.store)
    if state.pause is None:
        return "rounds was not paused; nothing to resume"
    _record_command(ctx, comment, controls.RESUMED, "resume")
    return f"resumed (it was paused by @{state.pause.by} since {state.pause.since}); a round runs now"


def _ignore(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = _own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    state = controls.load_controls(ctx.store)
    target = state.target_of(signature_id)
    if target != signature_id:
        return f"not done: this issue is merged into {_issue_of(ctx, target)}; ignore that one instead"
    row = ctx.store.signature(signature_id)
    payload = controls.mute_payload(
        comment.author.login,
        now=ctx.now,
        duration=command.duration,
        occurrences=command.occurrences,
        count_at=int(row["total_count"]) if row else 0,
    )
    _record_command(ctx, comment, controls.MUTED, "ignore", signature_id=signature_id, **payload)
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
    signature_id, refusal = _own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    mute = controls.load_controls(ctx.store).mutes.get(signature_id)
    if mute is None:
        return (
            "this signature was not ignored with a command; nothing to undo (an issue closed as not planned "
            "stays quiet until it is reopened)"
        )
    _record_command(
        ctx, comment, controls.UNMUTED, "unignore", signature_id=signature_id, source=controls.COMMAND_SOURCE
    )
    return f"no longer ignored (it was {mute.describe()})"


def _rediagnose(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = _own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    _record_command(
        ctx, comment, controls.REDIAGNOSE, "rediagnose", signature_id=signature_id, hint=command.hint
    )
    with_hint = f", with the hint {inline_code(command.hint)}" if command.hint else ""
    return f"queued: the next round that runs diagnoses diagnoses this signature again{with_hint}"


def _merge(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = _own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    assert command.target is not None
    if command.target == comment.issue_number:
        return "not done: an issue cannot be merged into itself"
    target_id = _signature_of_issue(ctx, command.target, None)
    if target_id is None:
        return f"not done: #{command.target} is not an issue rounds filed (it carries no rounds marker)"
    state = controls.load_controls(ctx.store)
    already = state.merges.get(signature_id)
    if already is not None:
        where = _issue_of(ctx, already)
        return f"not done: this issue is already merged into {where}; `split` it first"
    final = state.target_of(target_id)
    if final == signature_id:
        return (
            f"not done: #{command.target} is already merged into this issue; merging back would make a loop"
        )
    _record_command(
        ctx,
        comment,
        controls.MERGED,
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
    follows = f" (which is merged into {_issue_of(ctx, final)})" if final != target_id else ""
    return (
        f"merged into #{command.target}{follows}: this signature's occurrences are counted there from the "
        f"next round on, {closed}; `split` undoes it"
    )


def _split(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    signature_id, refusal = _own_signature(ctx, comment, command)
    if signature_id is None:
        return refusal
    state = controls.load_controls(ctx.store)
    target = state.merges.get(signature_id)
    if target is None:
        sources = state.merged_into(signature_id)
        if sources:
            listed = ", ".join(_issue_of(ctx, s) for s in sources)
            return (
                f"nothing to split here: {listed} merged into this issue; comment `split` on the one to undo"
            )
        return "nothing to split: this issue was not merged into another"
    _record_command(ctx, comment, controls.SPLIT, "split", signature_id=signature_id, was=target)
    reopened = ""
    try:
        issue = ctx.api.get_issue(comment.issue_number)
        if issue is not None and issue.get("state") == "closed" and issue.get("state_reason") == "duplicate":
            ctx.api.set_issue_state(comment.issue_number, "open", "reopened")
            reopened = " and this issue is reopened"
    except TrackerError as exc:
        reopened = f"; this issue could not be reopened ({exc})"
    return (
        f"split from {_issue_of(ctx, target)}: this signature's occurrences are counted here again "
        f"from the next round on{reopened}"
    )


def _fix(ctx: CommandContext, comment: CommentEvent, command: Command) -> str:
    return "fix pull requests are not enabled yet in this version of rounds; nothing was done"


ACTIONS: dict[str, Callable[[CommandContext, CommentEvent, Command], str]] = {
    "help": _help,
    "status": _status,
    "rediagnose": _rediagnose,
    "ignore": _ignore,
    "unignore": _unignore,
    "merge": _merge,
    "split": _split,
    "fix": _fix,
    "pause": _pause,
    "resume": _resume,
}


# --- which signature an issue is -----------------------------------------------------------------
def _own_signature(ctx: CommandContext, comment: CommentEvent, command: Command) -> tuple[str | None, str]:
    if comment.is_pull_request:
        return None, f"not done: `{command.name}` works on issues rounds filed, not on pull requests"
    signature_id = _signature_of(ctx, comment)
    if signature_id is None:
        return (
            None,
            f"not done: `{command.name}` works only on issues rounds filed (this one has no rounds marker)",
        )
    return signature_id, ""


def _signature_of(ctx: CommandContext, comment: CommentEvent) -> str | None:
    if comment.is_pull_request:
        return None
    return _signature_of_issue(ctx, comment.issue_number, comment.issue_body)


def _signature_of_issue(ctx: CommandContext, number: int, body: str | None) -> str | None:
    """The marker in the issue (GitHub is the record of facts); the database when it knows the issue."""
    if number in ctx._signatures:
        return ctx._signatures[number]
    if body is None:
        row = ctx.store.db.execute("select id from signatures where issue_ref = ?", [f"#{number}"]).fetchone()
        if row is not None:
            ctx._signatures[number] = str(row[0])
            return ctx._signatures[number]
        issue = ctx.api.get_issue(number)
        body = "" if issue is None or "pull_request" in issue else issue.get("body") or ""
    marker = read_marker(body)
    ctx._signatures[number] = marker.signature_id if marker else None
    return ctx._signatures[number]


def _issue_of(ctx: CommandContext, signature_id: str) -> str:
    """The signature's issue (`#12`), or the signature id when it has none."""
    row = ctx.store.signature(signature_id)
    return row["issue_ref"] if row and row.get("issue_ref") else signature_id


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
                # listed again next run (`since` is inclusive); the comments after it wait with it
                ctx.warnings.append(
                    f"the commands of comment {comment.comment_id} wait for the next run: {exc}"
                )
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
