"""Where issues go: a dry-run folder of Markdown drafts, or GitHub. Both behind `Tracker`."""

from rounds_bot.tracker.base import IssueDraft, IssueRef, Tracker

__all__ = ["IssueDraft", "IssueRef", "Tracker"]
