"""The already-counted rule for SigNoz: every row counted once, late rows included.

SigNoz answers counts, not rows (the aggregation stays in ClickHouse), so rows cannot be told apart
by id. Counts per group and minute can: each round re-reads the minutes of its overlap whole and
counts only what a minute holds beyond what was counted of it before. A late row (a long span is
stored at its start, a pipeline delivers late) raises its minute's count and is counted then; a
row read twice raises nothing.

The rule holds because every read of a minute covers the same stretch of it: reads start on a
minute boundary (`read_start`) or at the stream's floor (where it started reading, ever), and a
minute's stored count is pruned only once no later read starts before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import GroupCount
from rounds_bot.sources.signoz.collector import Bucket, Collector, FoundGroup, group_event_id
from rounds_bot.sources.signoz.queries import BUCKET_NS, BUCKET_SECONDS
from rounds_bot.sources.signoz.times import NS_PER_S, ns_to_datetime

STATE_VERSION = 1


class StreamState(BaseModel):
    """One stream's position: read up to `cursor_ns`, never before `floor_ns`, and how many rows of
    each group's minutes near the cursor were counted (`group@minute` -> count)."""

    cursor_ns: int
    floor_ns: int
    counted: dict[str, int] = Field(default_factory=dict)


class SignozState(BaseModel):
    version: int = STATE_VERSION
    streams: dict[str, StreamState] = Field(default_factory=dict)

    @classmethod
    def of(cls, raw: dict[str, object] | None) -> SignozState:
        """The state the last round kept; an unreadable or foreign one starts afresh."""
        if not raw:
            return cls()
        try:
            state = cls.model_validate(raw)
        except ValidationError:
            return cls()
        return state if state.version == STATE_VERSION else cls()


def read_start(state: StreamState, overlap_ns: int) -> int:
    """Where a stream reads from: the minute that holds `cursor - overlap`, not before its floor."""
    minute = (state.cursor_ns - overlap_ns) // BUCKET_NS * BUCKET_NS
    return max(minute, state.floor_ns)


def _key(group_id: str, bucket: Bucket) -> str:
    return f"{group_id}@{bucket.start_s}@{bucket.environment}"


@dataclass
class Counted:
    """What a stream counts this round: new groups' events, known groups' counts, late rows among
    them, and the counts to keep for the minutes the next round re-reads."""

    events: list[ErrorEvent] = field(default_factory=list)
    known: list[GroupCount] = field(default_factory=list)
    late: int = 0
    counted: dict[str, int] = field(default_factory=dict)


# The most new (group, minute) points a stream turns into events in one poll. Each point becomes an event
# or a count the round keeps in memory; beyond this, a group's minutes are merged into longer runs (2, 4,
# 8 ... minutes) so a first round over thousands of busy groups stays small, and the report says so.
MAX_POINTS = 5_000


def count_new_rows(
    collector: Collector, previous: dict[str, int], keep_from_ns: int, cursor_ns: int | None = None
) -> Counted:
    """Each group's minutes, less what `previous` counted of them; counts kept from `keep_from_ns`.
    Rows new in a minute that starts before `cursor_ns` (read before) arrived late. Consumes the
    collector's minutes: a first round's tens of thousands are freed once merged into runs."""
    out = Counted()
    keep_from_s = keep_from_ns // NS_PER_S
    fresh: list[tuple[FoundGroup, Bucket, int]] = []
    for group in collector.groups.values():
        for bucket in sorted(group.span.buckets.values(), key=lambda b: b.key):
            key = _key(group.span.group_id, bucket)
            before = previous.get(key, 0)
            if bucket.start_s + BUCKET_SECONDS > keep_from_s:
                out.counted[key] = max(before, bucket.count)
            if bucket.count <= before:
                continue
            if cursor_ns is not None and bucket.start_s * NS_PER_S < cursor_ns:
                out.late += bucket.count - before
            fresh.append((group, bucket, before))
        group.span.buckets = {}
    minutes = _run_length(fresh)
    if minutes > 1:
        collector.note(
            f"{len(fresh)} group-minutes were new this round, more than {MAX_POINTS}: their occurrences are "
            f"placed per {minutes} minutes, not per minute (triage's 'within 5 minutes' is approximate)"
        )
    events: dict[str, ErrorEvent] = {}
    runs = _runs(fresh, minutes)
    del fresh  # a first round's every group-minute: not kept past the runs made of it
    # merged runs are placed approximately already: only a group's last one is split (its last seen)
    latest = _latest_runs(runs) if minutes > 1 else set(range(len(runs)))
    for index, (group, bucket, before) in enumerate(runs):
        group_id = group.span.group_id
        if collector.is_known(group_id):
            out.known.append(_known(group, bucket, before))
            continue
        if group_id not in events:
            events[group_id] = group.event()
        out.events.extend(_events(events[group_id], group, bucket, before, last=index in latest))
    return out


def _latest_runs(runs: list[tuple[FoundGroup, Bucket, int]]) -> set[int]:
    """The index of each group's run that holds its last occurrence of the poll."""
    latest: dict[str, int] = {}
    for index, (group, bucket, _) in enumerate(runs):
        known = latest.get(group.span.group_id)
        if known is None or bucket.last_ns > runs[known][1].last_ns:
            latest[group.span.group_id] = index
    return set(latest.values())


def _run_length(fresh: list[tuple[FoundGroup, Bucket, int]]) -> int:
    """Minutes per point so that at most MAX_POINTS points remain (1: every minute its own)."""
    minutes = 1
    while len(
        {(g.span.group_id, b.environment, b.start_s // (BUCKET_SECONDS * minutes)) for g, b, _ in fresh}
    ) > (MAX_POINTS):
        minutes *= 2
    return minutes


def _runs(fresh: list[tuple[FoundGroup, Bucket, int]], minutes: int) -> list[tuple[FoundGroup, Bucket, int]]:
    """The fresh minutes merged into runs of `minutes` (as they are when `minutes` is 1)."""
    if minutes == 1:
        return fresh
    runs: dict[tuple[str, str, int], tuple[FoundGroup, Bucket, int]] = {}
    for group, bucket, before in fresh:
        key = (group.span.group_id, bucket.environment, bucket.start_s // (BUCKET_SECONDS * minutes))
        if key in runs:
            _, run, counted = runs[key]
            runs[key] = (group, run.merged(bucket), counted + before)
        else:
            start = key[2] * BUCKET_SECONDS * minutes
            runs[key] = (
                group,
                Bucket(start, bucket.count, bucket.first_ns, bucket.last_ns, bucket.environment),
                before,
            )
    return list(runs.values())


def _known(group: FoundGroup, bucket: Bucket, before: int) -> GroupCount:
    first = bucket.first_ns if not before else bucket.last_ns
    return GroupCount(
        source_group_id=group.span.group_id,
        service=group.span.service,
        count=bucket.count - before,
        first_seen=ns_to_datetime(first),
        last_seen=ns_to_datetime(bucket.last_ns),
    )


def _events(
    event: ErrorEvent, group: FoundGroup, bucket: Bucket, before: int, *, last: bool
) -> list[ErrorEvent]:
    """The minute's rows not counted before, as events at their first and last occurrence (`last`), so
    the round's first and last seen and triage's peaks are SigNoz's to the minute; late rows stand at
    the minute's last occurrence. Runs of merged minutes (a first round over many busy groups) are one
    event each at their first occurrence, only a group's last run split, so memory follows the cap."""
    base = group_event_id(group.span.group_id, bucket.start_s * NS_PER_S) + (
        f"@{bucket.environment}" if bucket.environment else ""
    )
    if bucket.environment:
        event = event.model_copy(update={"environment": bucket.environment})
    fresh = bucket.count - before
    if before or fresh == 1 or bucket.first_ns == bucket.last_ns or not last:
        return [_at(event, f"{base}+{before}", bucket.last_ns if before else bucket.first_ns, fresh)]
    return [
        _at(event, f"{base}+{before}", bucket.first_ns, fresh - 1),
        _at(event, f"{base}+{before}.last", bucket.last_ns, 1),
    ]


def _at(event: ErrorEvent, event_id: str, at_ns: int, count: int) -> ErrorEvent:
    return event.model_copy(update={"event_id": event_id, "timestamp": ns_to_datetime(at_ns), "count": count})
