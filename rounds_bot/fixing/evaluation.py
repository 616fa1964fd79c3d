"""The numbers of a shipped fix: how often the problem occurred before the merge, after it, and after the
release that carries it, and the one comment that reports them when the issue is closed as resolved.

Each period is the time rounds has counts for, and its rate is occurrences over that time: the rate before the
merge covers the 7 days before it, or less when rounds has counted the problem for less (it was first seen
later, or the database was rebuilt from the issues later: its counts before that are gone); such a period is
labelled with how long it is and where it starts, never as 7 days.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from rounds_bot.clock import iso, parse_iso
from rounds_bot.fixing.release import Release
from rounds_bot.lifecycle import FixRecord
from rounds_bot.models import Frozen
from rounds_bot.render import markdown as md
from rounds_bot.store import Store
from rounds_bot.versions import ordered

#: the rate before a merge is measured over this much time before it (or since rounds counts the problem)
BEFORE_WINDOW = timedelta(days=7)
EVALUATION_MARK = "<!-- rounds:evaluation {pr} -->"
WAITING_MARK = "<!-- rounds:waiting {pr} -->"


class Period(Frozen):
    start: datetime
    end: datetime
    occurrences: int

    @property
    def hours(self) -> float:
        return max((self.end - self.start).total_seconds() / 3600, 0.0)

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
    """Occurrences and hourly rates over the three periods, from the occurrence buckets, each period cut to
    the time rounds has counts for."""
    counted_from = _counted_from(store, signature_id, merged)
    before = min(max(merged - BEFORE_WINDOW, counted_from), merged)
    return Rates(
        before_period=_period(store, signature_id, before, merged),
        after_merge_period=_period(store, signature_id, max(merged, counted_from), now),
        after_release_period=(
            _period(store, signature_id, max(released, counted_from), now) if released else None
        ),
    )


def _counted_from(store: Store, signature_id: str, merged: datetime) -> datetime:
    """Since when the buckets hold the problem's occurrences: its first occurrence, or the moment a rebuilt
    database took its count over from the issue (the buckets before it are gone)."""
    signature = store.signature(signature_id)
    if signature is None:
        return merged - BEFORE_WINDOW
    return max(signature.first_seen, signature.counted_through or signature.first_seen)


def _period(store: Store, signature_id: str, start: datetime, end: datetime) -> Period:
    end = max(start, end)
    return Period(start=start, end=end, occurrences=store.count_between(signature_id, start, end))


def recorded_before(fix: FixRecord) -> Period | None:
    """The period before the merge as measured when the merge was observed (it outlives the buckets)."""
    if not fix.merged_at or not fix.before_from or fix.before_occurrences is None:
        return None
    return Period(
        start=parse_iso(fix.before_from), end=parse_iso(fix.merged_at), occurrences=fix.before_occurrences
    )


def before_label(period: Period) -> str:
    """`7 days before the merge`, or how long it really is and where it starts."""
    if period.end - period.start >= BEFORE_WINDOW:
        return "7 days before the merge"
    return f"{span(period.hours)} before the merge (counted since {_moment(period.start)})"


def span(hours: float) -> str:
    """`41 minutes`, `2.0 hours`, `3.5 days`."""
    if hours < 1:
        minutes = round(hours * 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    if hours < 48:
        return f"{_number(hours)} hours"
    return f"{_number(hours / 24)} days"


def _number(value: float) -> str:
    """One decimal, without a trailing `.0`."""
    return f"{value:.1f}".removesuffix(".0")


def waiting_comment(
    fix: FixRecord, service: str, release: Release | None, quiet_hours: float, *, reopened: bool
) -> str:
    """Posted once, when the merge is seen: what rounds waits for before it closes the issue."""
    quiet = span(quiet_hours)
    if release is not None:
        then = (
            f"The first release after it, {md.code(release.version)}, was first seen at "
            f"{iso(release.first_seen)}: once the problem has stayed away from it for {quiet}, rounds posts "
            "the evaluation and closes this issue as completed."
        )
    elif fix.versions_before:
        then = (
            "rounds keeps this issue open until the fix is seen running: a `service.version` of "
            f"{md.code(service)} newer than {_versions(fix.versions_before)} in the telemetry it reads "
            "(rounds learns versions from the errors it reads). Once the problem has stayed away from that "
            f"release for {quiet}, rounds posts the evaluation and closes this issue as completed; "
            "occurrences on the versions before it are expected meanwhile, and only noted."
        )
    else:
        then = (
            f"The telemetry of {md.code(service)} carries no `service.version`, so rounds cannot see when "
            "the fix is deployed: it judges from the merge time. If the problem does not occur for "
            f"{quiet} after the merge (and after its last occurrence), rounds posts the evaluation, marked "
            "*no version information*, and closes this issue as completed."
        )
    closed = (
        " GitHub closed this issue when the pull request was merged; rounds reopened it, because a merge is "
        "not yet a fix running in production."
        if reopened
        else ""
    )
    merged = f"The fix in #{fix.pr_number} was merged at {fix.merged_at}.{closed}"
    return "\n\n".join([merged, then, WAITING_MARK.format(pr=fix.pr_number)])


def _versions(versions: list[str]) -> str:
    newest = ordered(versions)[-3:]
    shown = [str(md.code(version)) for version in newest]
    more = len(versions) - len(shown)
    return ", ".join(shown) + (f" (and {more} older)" if more else "")


def evaluation_comment(
    fix: FixRecord,
    rates: Rates,
    quiet_from: datetime,
    now: datetime,
    judged_from: Literal["release", "merge"] = "release",
) -> str:
    """The evaluation posted once, when the issue is closed as resolved."""
    hours = (now - quiet_from).total_seconds() / 3600
    merged = parse_iso(fix.merged_at or iso(now))
    if judged_from == "release" and fix.released_version:
        release = md.code(fix.released_version)
        story = (
            f"The first release after it, {release}, was first seen at {fix.released_at}, and the problem "
            f"has not occurred on it or a later version for {span(hours)}."
        )
        watch = (
            f"If it comes back on {release} or later, rounds reopens this issue with the `regression` label; "
            "occurrences on older versions are only noted."
        )
    else:
        story = (
            "**No version information: judged from the merge time.** The service's telemetry carries no "
            "`service.version`, so rounds cannot see when the fix was deployed; the problem has not occurred "
            f"for {span(hours)} since the merge (or its last occurrence after it)."
        )
        watch = "If it comes back, rounds reopens this issue with the `regression` label."
    before = recorded_before(fix) or rates.before_period
    rows = [
        _row(before_label(before), before),
        _row(_since("the merge", merged, rates.after_merge_period), rates.after_merge_period),
    ]
    if rates.after_release_period is not None and fix.released_version and fix.released_at:
        released = parse_iso(fix.released_at)
        label = _since(f"release {md.code(fix.released_version)}", released, rates.after_release_period)
        rows.append(_row(label, rates.after_release_period))
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
            f"rounds marks the problem resolved and closes this issue as completed ({iso(now)}). {watch}",
            EVALUATION_MARK.format(pr=fix.pr_number),
        ]
    )


def _since(what: str, moment: datetime, period: Period) -> str:
    if period.start <= moment:
        return f"since {what}"
    return f"since {_moment(period.start)} ({what} came before the counts rounds still has)"


def _moment(moment: datetime) -> str:
    return iso(moment)[:16].replace("T", " ") + " UTC"


def _row(label: str, period: Period) -> str:
    rate = period.rate
    return f"| {label} | {period.occurrences} | {'—' if rate is None else f'{rate:.2f}'} |"
