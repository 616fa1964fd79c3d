"""Where a round reads from, and where the next round will start."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from rounds_bot.models import ErrorEvent
from rounds_bot.settings import Settings
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.spill import EventSpill

# The start of time, for sources that are read whole the first time (files).
BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)
# Data younger than this may still be arriving at the backend (SigNoz clamps queries the same way).
INGEST_DELAY = timedelta(seconds=30)


def plan_window(settings: Settings, cursor: datetime | None, now: datetime, *, whole_history: bool) -> Window:
    """[cursor - overlap, now - ingest delay]; the first round reaches back the lookback (files: all)."""
    end = now - INGEST_DELAY
    if cursor is not None:
        start = cursor - timedelta(seconds=settings.cursor_overlap_seconds)
    elif whole_history:
        start = BEGINNING
    else:
        start = end - timedelta(minutes=settings.error_lookback_minutes)
    return Window(start=min(start, end), end=end, resume_from=cursor)


def next_cursor(window: Window, polled: PollResult) -> datetime:
    """Up to the window's end; for historic data (files) the newest occurrence read, so nothing is skipped."""
    read = [t for t in (_newest(polled.events), polled.newest_counted) if t is not None]
    newest = max(read, default=None)
    if window.start == BEGINNING or (newest and newest < window.start):
        candidates = [t for t in (newest, window.resume_from) if t is not None]
        return max(candidates) if candidates else window.start
    if polled.read_until is not None:
        return min(window.end, polled.read_until)
    return window.end


def _newest(events: Sequence[ErrorEvent]) -> datetime | None:
    """The latest time among the events read (a spill knows it without reading them again)."""
    if isinstance(events, EventSpill):
        return events.newest
    return max((event.timestamp for event in events), default=None)


def read_window(window: Window, polled: PollResult) -> Window:
    """The window the source really read: from where it began when that was earlier (a source that
    re-reads whole minutes and counts only what it had not counted), so its events count as new."""
    if polled.read_from is None or polled.read_from >= window.start:
        return window
    return window.model_copy(update={"start": polled.read_from})
