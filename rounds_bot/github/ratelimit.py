"""How the GitHub tracker spends its request budget and waits out rate limits.

GitHub's rules (a GITHUB_TOKEN gets 1,000 requests an hour per repository):

- a 403 or 429 with `retry-after`: wait that many seconds;
- with `x-ratelimit-remaining: 0`: wait until `x-ratelimit-reset` (epoch seconds);
- any other rate-limit answer (a secondary limit without headers): wait at least a minute, backing off;
- writes go out one at a time, at least a second apart (PyGithub's `seconds_between_writes`).

A wait longer than `max_wait_seconds` is not worth blocking a scheduled run for: the tracker stops cleanly
instead (`TrackerStopped`), the round saves what it did, and its report says why. The same happens when the
round's own call budget is spent, or when GitHub says fewer than `reserve` requests are left this hour.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from rounds_bot.tracker.base import TrackerStopped

SECONDARY_LIMIT_WAIT = 60.0


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    for key, value in headers.items():
        if key.lower() == name:
            return str(value)
    return None


def rate_limit_wait(headers: Mapping[str, str] | None, attempt: int, now: float) -> float:
    """Seconds to wait before trying again, from a rate-limited answer's headers."""
    retry_after = _header(headers, "retry-after")
    if retry_after is not None:
        try:
            return max(float(retry_after), 0.0)
        except ValueError:
            pass  # an HTTP date is allowed too, but GitHub sends seconds; fall through to the other rules
    if _header(headers, "x-ratelimit-remaining") == "0":
        reset = _header(headers, "x-ratelimit-reset")
        if reset is not None:
            try:
                return max(float(reset) - now, 0.0) + 1.0  # +1: the reset second itself may still be limited
            except ValueError:
                pass
    return SECONDARY_LIMIT_WAIT * 2.0**attempt


def is_rate_limited(status: int, headers: Mapping[str, str] | None, message: str) -> bool:
    """A 429, or a 403 that is about rate limits rather than permissions."""
    if status == 429:
        return True
    if status != 403:
        return False
    lowered = message.lower()
    return (
        _header(headers, "retry-after") is not None
        or _header(headers, "x-ratelimit-remaining") == "0"
        or "rate limit" in lowered
    )


@dataclass
class CallBudget:
    """Requests this round may still make: the round's own cap, and what GitHub says is left this hour."""

    max_requests: int
    reserve: int = 20
    used: int = 0
    github_remaining: int | None = None
    github_reset: float | None = None

    def spend(self, what: str) -> None:
        """Account for one request about to be sent; stop cleanly when nothing is left."""
        if self.used >= self.max_requests:
            raise TrackerStopped(
                f"the round's GitHub request budget ({self.max_requests}) is spent before {what}",
                hint="the rest is done next round; raise the budget if this happens every round",
            )
        self.used += 1

    def nearly_spent(self) -> bool:
        """GitHub says no more than `reserve` requests are left this hour."""
        return self.github_remaining is not None and self.github_remaining <= self.reserve

    def observe(self, remaining: int | None, reset: float | None) -> None:
        """What GitHub's `x-ratelimit-*` headers said on the last answer."""
        if remaining is not None and remaining >= 0:
            self.github_remaining = remaining
        if reset:
            self.github_reset = reset


@dataclass
class Waiter:
    """Sleeps for rate limits and retries, unless the wait is too long to be worth it."""

    max_wait_seconds: float = 120.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    waited: float = 0.0

    def wait_out_rate_limit(self, headers: Mapping[str, str] | None, attempt: int, what: str) -> None:
        seconds = rate_limit_wait(headers, attempt, self.clock())
        if seconds > self.max_wait_seconds:
            raise TrackerStopped(
                f"GitHub rate-limited {what} for {seconds:.0f} s, longer than the "
                f"{self.max_wait_seconds:.0f} s this round may wait",
                hint="nothing was lost: the rest is done next round",
            )
        self.pause(seconds)

    def wait_for_reset(self, budget: CallBudget, what: str) -> None:
        """Fewer than the reserve left this hour: wait for the reset if it is near, else stop cleanly."""
        seconds = max((budget.github_reset or 0) - self.clock(), 0.0) + 1.0
        if seconds > self.max_wait_seconds:
            resets = "soon"
            if budget.github_reset:
                resets = datetime.fromtimestamp(budget.github_reset, UTC).strftime("%H:%M UTC")
            raise TrackerStopped(
                f"GitHub's hourly rate limit is nearly spent ({budget.github_remaining} requests left) "
                f"before {what}",
                hint=f"the limit resets at {resets}; the rest is done next round",
            )
        self.pause(seconds)
        budget.github_remaining = None

    def pause(self, seconds: float) -> None:
        if seconds > 0:
            self.sleep(seconds)
            self.waited += seconds
