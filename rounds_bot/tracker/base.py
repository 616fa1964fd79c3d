"""The tracker interface: find, create and update one issue per signature."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import Field

from rounds_bot.models import Frozen


class IssueDraft(Frozen):
    """What the round wants an issue to say; rendered by `tracker.render`."""

    signature_id: str
    title: str
    body: str
    labels: list[str] = Field(default_factory=list)


class IssueRef(Frozen):
    """An issue as the tracker knows it."""

    signature_id: str
    ref: str = Field(description="`#123` on GitHub, a file name for the dry-run tracker")
    url: str | None = None
    state: Literal["open", "closed"] = "open"
    state_reason: Literal["completed", "not_planned", "reopened"] | None = None


class Tracker(Protocol):
    name: str

    def find(self, signature_id: str) -> IssueRef | None:
        """The issue for a signature, if one exists (never decided from search)."""
        ...

    def create(self, draft: IssueDraft) -> IssueRef: ...

    def update(
        self, issue: IssueRef, draft: IssueDraft, *, comment: str | None = None, reopen: bool = False
    ) -> IssueRef:
        """Edit the body in place; at most one comment; reopen a regression."""
        ...
