"""GitHub's secondary rate limit on content creation, for the fake GitHub.

https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits:
"Create too much content on GitHub in a short amount of time. In general, no more than 80 content-generating
requests per minute and no more than 500 content-generating requests per hour are allowed." The answer is a
403 (or 429) whose message says a secondary rate limit was exceeded; "If the retry-after response header is
present, you should not retry your request until after that many seconds has elapsed." The fake counts every
POST, PATCH and PUT (they create or change content) and, over either limit, answers 403 with `retry-after`:
the seconds until the oldest request of the full window leaves it. A refused request creates nothing and is
not counted.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

CONTENT_METHODS = frozenset({"POST", "PATCH", "PUT"})
MESSAGE = (
    "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. "
    "Please retry your request again later."
)


@dataclass
class ContentLimit:
    """Content-generating requests allowed per minute and per hour, and the moments of those admitted."""

    per_minute: int = 80
    per_hour: int = 500
    admitted: deque[datetime] = field(default_factory=deque)

    def refusal(self, method: str, now: datetime) -> float | None:
        """Seconds to wait before this request is allowed (None: admitted, and counted)."""
        if method not in CONTENT_METHODS:
            return None
        while self.admitted and now - self.admitted[0] >= timedelta(hours=1):
            self.admitted.popleft()
        waits = []
        for limit, window in ((self.per_minute, timedelta(minutes=1)), (self.per_hour, timedelta(hours=1))):
            inside = [moment for moment in self.admitted if now - moment < window]
            if len(inside) >= limit:
                waits.append((inside[len(inside) - limit] + window - now).total_seconds())
        if waits:
            return max(waits)
        self.admitted.append(now)
        return None


def retry_after(seconds: float) -> dict[str, str]:
    return {"retry-after": str(max(math.ceil(seconds), 1))}
