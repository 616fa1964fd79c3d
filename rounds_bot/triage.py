"""Which signatures deserve a diagnosis this round, and why the others wait.

Pure functions over plain inputs: the round gathers each signature's activity, `triage` returns
one decision per signature, with a reason written for the round report. The triggers, in the
order they are checked:

1. rediagnose: someone asked for it explicitly;
2. regression: the signature was resolved and occurred again afterwards;
3. new: never diagnosed, and past the threshold (default 10 occurrences within 5 minutes), or
   any fatal occurrence;
4. spike: the current rate is a multiple of the signature's own baseline rate;
5. periodic review: the last diagnosis is older than the review interval and it still occurs.

Everything else waits. A diagnosis cached for the current code revision also waits (unless
asked for or regressed): the answer would be the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Literal, Protocol, runtime_checkable

from pydantic import ConfigDict, Field

from rounds_bot.models import Frozen

Trigger = Literal["rediagnose", "regression", "new", "spike", "periodic_review"]


class Occurrence(Frozen):
    """Occurrences seen at one moment (a count > 1 stands for a batch or an aggregate)."""

    timestamp: datetime
    count: int = Field(default=1, ge=1)
    fatal: bool = False


@runtime_checkable
class OccurrenceFigures(Protocol):
    """What triage reads of a signature's occurrences, for a holder that answers without building an
    `Occurrence` per entry (a round's compact timeline): each answer what `ListedFigures` gives."""

    def total(self) -> int: ...
    def any_fatal(self) -> bool: ...
    def peak_count(self, window: timedelta) -> int: ...
    def count_after(self, moment: datetime) -> int: ...


class ListedFigures:
    """`OccurrenceFigures` of a list of occurrences (how triage reads `SignatureActivity.occurrences`)."""

    def __init__(self, occurrences: Sequence[Occurrence]) -> None:
        self._occurrences = occurrences

    def total(self) -> int:
        return sum(occurrence.count for occurrence in self._occurrences)

    def any_fatal(self) -> bool:
        return any(occurrence.fatal for occurrence in self._occurrences)

    def peak_count(self, window: timedelta) -> int:
        return peak_count(self._occurrences, window)

    def count_after(self, moment: datetime) -> int:
        return sum(o.count for o in self._occurrences if o.timestamp > moment)


class SignatureActivity(Frozen):
    """What triage needs to know about one signature."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    signature_id: str
    occurrences: list[Occurrence] = Field(default_factory=list, description="this round's occurrences")
    figures: OccurrenceFigures | None = Field(
        default=None,
        description="this round's occurrences as figures, read instead of `occurrences` when given",
    )
    baseline_per_hour: float | None = Field(
        default=None, ge=0, description="the signature's usual rate; None when not yet known"
    )
    window_hours: float = Field(default=1.0, gt=0, description="length of this round's window")
    last_diagnosed_at: datetime | None = None
    diagnosed_revision: str | None = Field(default=None, description="code revision of the last diagnosis")
    resolved_at: datetime | None = Field(
        default=None, description="when its issue was closed as fixed; None if open"
    )
    rediagnose_requested: bool = False
    rediagnose_reason: str | None = None


class TriagePolicy(Frozen):
    new_threshold_count: int = Field(default=10, ge=1)
    new_threshold_window: timedelta = timedelta(minutes=5)
    spike_factor: float = Field(default=5.0, gt=1)
    spike_min_count: int = Field(default=20, ge=1)
    review_interval: timedelta = timedelta(days=7)


class TriageDecision(Frozen):
    signature_id: str
    diagnose: bool
    trigger: Trigger | None = None
    reason: str


def triage(
    activities: Iterable[SignatureActivity],
    *,
    now: datetime,
    code_revision: str,
    policy: TriagePolicy | None = None,
) -> list[TriageDecision]:
    """One decision per signature, in input order."""
    policy = policy or TriagePolicy()
    return [decide(activity, now=now, code_revision=code_revision, policy=policy) for activity in activities]


def decide(
    activity: SignatureActivity, *, now: datetime, code_revision: str, policy: TriagePolicy
) -> TriageDecision:
    """The decision for one signature: the first trigger that fires, or why it waits."""
    figures = figures_of(activity)
    total = figures.total()
    if activity.rediagnose_requested:
        why = f": {activity.rediagnose_reason}" if activity.rediagnose_reason else ""
        return _act(activity, "rediagnose", f"a new diagnosis was requested{why}")
    if activity.resolved_at is not None:
        count = figures.count_after(activity.resolved_at)
        if count:  # each occurrence counts at least 1: some came after it was resolved
            return _act(
                activity,
                "regression",
                f"regressed: {count} occurrence(s) after it was resolved on "
                f"{activity.resolved_at.isoformat()}",
            )
    if total == 0:
        return _wait(activity, "no occurrences this round")
    if activity.diagnosed_revision == code_revision:
        return _wait(
            activity, f"already diagnosed at revision {code_revision}; {total} occurrence(s) this round"
        )
    if activity.last_diagnosed_at is None:
        return _decide_new(activity, figures, policy)
    return _decide_known(activity, activity.last_diagnosed_at, total, now=now, policy=policy)


def figures_of(activity: SignatureActivity) -> OccurrenceFigures:
    """The figures triage reads: the activity's own when given, else those of its occurrences."""
    return activity.figures if activity.figures is not None else ListedFigures(activity.occurrences)


def _decide_new(
    activity: SignatureActivity, figures: OccurrenceFigures, policy: TriagePolicy
) -> TriageDecision:
    """A signature never diagnosed: any fatal occurrence, or enough of them within the window."""
    if figures.any_fatal():
        return _act(activity, "new", "new signature with a fatal occurrence")
    peak = figures.peak_count(policy.new_threshold_window)
    minutes = policy.new_threshold_window.total_seconds() / 60
    if peak >= policy.new_threshold_count:
        return _act(
            activity,
            "new",
            f"new signature: {peak} occurrences within {minutes:g} minutes "
            f"(threshold {policy.new_threshold_count})",
        )
    return _wait(
        activity,
        f"new signature below the threshold: at most {peak} occurrence(s) within "
        f"{minutes:g} minutes, {policy.new_threshold_count} needed",
    )


def _decide_known(
    activity: SignatureActivity,
    last_diagnosed_at: datetime,
    total: int,
    *,
    now: datetime,
    policy: TriagePolicy,
) -> TriageDecision:
    """A signature diagnosed before: a spike against its baseline, or a review that is due."""
    rate = total / activity.window_hours
    baseline = activity.baseline_per_hour
    if (
        baseline is not None
        and total >= policy.spike_min_count
        and rate >= policy.spike_factor * max(baseline, 1e-9)
    ):
        return _act(
            activity,
            "spike",
            f"spike: {rate:.1f}/h against a baseline of {baseline:.1f}/h (factor {policy.spike_factor:g})",
        )
    if now - last_diagnosed_at >= policy.review_interval:
        days = (now - last_diagnosed_at).days
        return _act(
            activity, "periodic_review", f"periodic review: last diagnosed {days} days ago, still occurring"
        )
    baseline_text = f"baseline {baseline:.1f}/h" if baseline is not None else "no baseline yet"
    return _wait(activity, f"known signature, no trigger: {rate:.1f}/h ({baseline_text})")


def _act(activity: SignatureActivity, trigger: Trigger, reason: str) -> TriageDecision:
    return TriageDecision(signature_id=activity.signature_id, diagnose=True, trigger=trigger, reason=reason)


def _wait(activity: SignatureActivity, reason: str) -> TriageDecision:
    return TriageDecision(signature_id=activity.signature_id, diagnose=False, reason=reason)


def peak_count(occurrences: Iterable[Occurrence], window: timedelta) -> int:
    """The most occurrences inside any window of length `window` (inclusive at both ends)."""
    ordered = sorted(occurrences, key=lambda o: o.timestamp)
    best = 0
    running = 0
    start = 0
    for occurrence in ordered:
        running += occurrence.count
        while occurrence.timestamp - ordered[start].timestamp > window:
            running -= ordered[start].count
            start += 1
        best = max(best, running)
    return best
