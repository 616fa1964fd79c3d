"""The tracker interface: find, create and update one issue per signature."""

from __future__ import annotations

from dataclasses import dataclass
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


#: why an issue was closed, of GitHub's reasons those rounds tells apart (REST "Issues": `state_reason`)
StateReason = Literal["completed", "not_planned", "reopened"]


@dataclass(frozen=True, slots=True)
class IssueRef:
    """An issue as the tracker knows it. A plain frozen record with slots, not a model: a round keeps one per
    issue it files or finds, to its end (thousands in a first round), and a model's field dictionary was
    most of each; the trackers make it from values they checked (`github.tracker._ref` keeps GitHub's known
    state reasons only, the dry-run tracker reads the marker it wrote)."""

    signature_id: str
    ref: str  # `#123` on GitHub, a file name for the dry-run tracker
    url: str | None = None
    state: Literal["open", "closed"] = "open"
    state_reason: StateReason | None = None


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
