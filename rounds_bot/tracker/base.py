"""The tracker interface: find, create and update one issue per signature."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import Field

from rounds_bot.errors import TrackerError
from rounds_bot.models import Frozen


class TrackerStopped(TrackerError):
    """The tracker stopped early on purpose (request budget or rate limit spent); nothing was lost.

    The round catches it, defers what is left to the next round, saves what it did, and reports why.
    """


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

    def find(self, signature_id: str, known_ref: str | None = None) -> IssueRef | None:
        """The issue for a signature, if one exists (never decided from search).

        `known_ref` is what the signature database remembers (it may be stale or lost: GitHub wins).
        """
        ...

    def create(self, draft: IssueDraft) -> IssueRef: ...

    def update(
        self, issue: IssueRef, draft: IssueDraft, *, comment: str | None = None, reopen: bool = False
    ) -> IssueRef:
        """Edit the body in place; at most one comment; reopen a regression."""
        ...

    def finish_round(self) -> list[str]:
        """Called once at the end of a round's filing: flush what waits, return notes for the report."""
        ...
