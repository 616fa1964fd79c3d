"""What carrying out `/rounds` commands works with: a comment as rounds reads it, the run's context, outcomes.

A comment comes from an `issue_comment` event (`comment_from_event`) or from a listing of the repository's
comments (`comment_from_listing`); both read the same `CommentEvent`. `record_command` writes a control
event a comment caused, keyed by the comment and in its author's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from rounds_bot import controls
from rounds_bot.commands.grammar import Author
from rounds_bot.events import Fact
from rounds_bot.github.actions import ActionsApi
from rounds_bot.models import Frozen
from rounds_bot.store import Store

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
    issue_author: str = Field(default="", description="who opened the issue (events only)")
    is_pull_request: bool = False
    closed: bool = Field(default=False, description="the issue or pull request is closed (events only)")
    created_at: str = ""


class Outcome(Frozen):
    comment_id: int
    status: Status
    why: str = ""
    reply: str | None = None
    commands: list[str] = Field(default_factory=list)
    needs_round: bool = False


@dataclass(frozen=True)
class Whose:
    """The signature an issue is, or why it is none (as a reply says it: "it has no rounds marker")."""

    signature_id: str | None
    why_not: str = ""


@dataclass
class CommandContext:
    api: ActionsApi
    store: Store
    now: datetime
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # why `/rounds fix` cannot be carried out with this run's settings; None when it can (fixing/setup.py)
    fixes_off: str | None = "this run was started without the fix settings"
    # why no round diagnoses anything with this run's settings, and how to turn it on; None when it can
    diagnosis_off: str | None = None
    # issue number -> the signature it is, or why none (`issue_signature.whose_issue`), read once per run
    _signatures: dict[int, Whose] = field(default_factory=dict)


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
        issue_author=str((issue.get("user") or {}).get("login") or ""),
        is_pull_request="pull_request" in issue,
        closed=issue.get("state") == "closed",
        created_at=comment.get("created_at") or "",
    )


def comment_from_listing(item: dict[str, Any]) -> CommentEvent | None:
    """A comment of the repository-wide listing; None when it is not on an issue or pull request."""
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


def record_command(ctx: CommandContext, comment: CommentEvent, kind: Fact, key: str, **payload: Any) -> None:
    """A control event a comment caused, keyed by the comment and in its author's name."""
    payload.setdefault("by", comment.author.login)
    controls.record(ctx.store, kind, f"{key}:{comment.comment_id}", at=ctx.now, **payload)
