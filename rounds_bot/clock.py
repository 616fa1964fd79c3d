"""How rounds writes moments down: ISO-8601 UTC text, and the five-minute buckets it counts in."""

from __future__ import annotations

from datetime import UTC, datetime

BUCKET_SECONDS = 300


def iso(moment: datetime) -> str:
    """Timestamps are stored as ISO-8601 UTC strings, which sort correctly as text."""
    return moment.astimezone(UTC).isoformat()


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def bucket_of(moment: datetime) -> str:
    """The start of the bucket `moment` falls in."""
    epoch = int(moment.timestamp())
    return iso(datetime.fromtimestamp(epoch - epoch % BUCKET_SECONDS, UTC))


def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
