"""Where errors come from. A source is a small class with one method, `poll`."""

from rounds_bot.sources.base import GroupCount, PollResult, SkippedRecord, Source, Window

__all__ = ["GroupCount", "PollResult", "SkippedRecord", "Source", "Window"]
