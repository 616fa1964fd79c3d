"""The numbers of a shipped fix: how often the problem occurred before the merge, after it, and after the
release that carries it, and the one comment that reports them when the issue is closed as resolved."""

from __future__ import annotations

from datetime import datetime, timedelta

from rounds_bot.clock import iso
from rounds_bot.lifecycle import FixRecord
from rounds_bot.models import Frozen
from rounds_bot.render import markdown as md
from rounds_bot.store import Store

#: the rate before a merge is measured over this much time before it (or since the problem began)
BEFORE_WINDOW = timedelta(days=7)
EVALUATION_MARK = "<!-- rounds:evaluation {pr} -->"


class Period(Frozen):
    occurrences: int
    hours: float

    @property
    def rate(self) -> float | None:
        return round(self.occurrences / self.hours, 4) if self.hours > 0 else None


class Rates(Frozen):
    before_period: Period
    after_merge_period: Period
    after_release_period: Period | None = None

    @property
    def before(self) -> float | None:
        return self.before_period.rate

    @property
    def after_merge(self) -> float | None:
        return self.after_merge_period.rate

    @property
    def after_release(self) -> float | None:
        return self.after_release_period.rate if self.after_release_period else None


def measure(
    store: Store, signature_id: str, *, merged: datetime, released: datetime | None, now: datetime
) -> Rates:
    """Occurrences and hourly rates over the three periods, from the occurrence buckets."""
    signature = store.signature(signature_id)
    began = signature.first_seen if signature is not None else merged - BEFORE_WINDOW
    start = max(merged - BEFORE_WINDOW, min(began, merged))
    return Rates(
        before_period=_period(store, signature_id, start, merged),
        after_merge_period=_period(store, signature_id, merged, now),
        after_release_period=_period(store, signature_id, released, now) if released else None,
    )


def _period(store: Store, signature_id: str, start: datetime, end: datetime) -> Period:
    hours = max((end - start).total_seconds() / 3600, 0.0)
    return Period(occurrences=store.count_between(signature_id, start, end), hours=hours)


def evaluation_comment(fix: FixRecord, rates: Rates, quiet_from: datetime, now: datetime) -> str:
    """The evaluation posted once, when the issue is closed as resolved."""
    hours = (now - quiet_from).total_seconds() / 3600
    if fix.released_version:
        release = md.code(fix.released_version)
        story = (
            f"The first release after it, {release}, was first seen at {fix.released_at}, and the problem "
            f"has not occurred on it or a later version for {hours:.0f} hours."
        )
        watch = (
            f"If it comes back on {release} or later, rounds reopens this issue with the `regression` label"
        )
    else:
        story = (
            "No newer version of the service was seen since (its telemetry may not carry `service.version`); "
            f"the problem has not occurred for {hours:.0f} hours."
        )
        watch = "If it comes back, rounds reopens this issue with the `regression` label"
    rows = [
        _row("7 days before the merge", rates.before_period),
        _row("since the merge", rates.after_merge_period),
    ]
    if rates.after_release_period is not None and fix.released_version:
        rows.append(_row(f"since release {md.code(fix.released_version)}", rates.after_release_period))
    return "\n".join(
        [
            "### Fix evaluation",
            "",
            f"The fix in #{fix.pr_number} was merged at {fix.merged_at}. {story}",
            "",
            "| period | occurrences | per hour |",
            "|---|---:|---:|",
            *rows,
            "",
            f"rounds marks the problem resolved and closes this issue as completed ({iso(now)}). {watch}; "
            "occurrences on older versions are only noted.",
            EVALUATION_MARK.format(pr=fix.pr_number),
        ]
    )


def _row(label: str, period: Period) -> str:
    rate = period.rate
    return f"| {label} | {period.occurrences} | {'—' if rate is None else f'{rate:.2f}'} |"
