"""What one round holds in memory before it commits: tallies, issue plans, the signature rows they make."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rounds_bot.config import Settings
from rounds_bot.controls import Controls
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.redact import clean
from rounds_bot.round.diagnosis_step import DiagnosisStep
from rounds_bot.sources.base import Source, Window
from rounds_bot.store import Store, bucket_of, iso
from rounds_bot.tracker.base import IssueRef, Tracker
from rounds_bot.triage import Occurrence

# The start of time, for sources that are read whole the first time (files).
BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)
SAMPLES_PER_SIGNATURE = 5


@dataclass
class Tally:
    """What one round saw of one signature."""

    assignment: Assignment
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    buckets: dict[str, int] = field(default_factory=dict)
    samples: list[ErrorEvent] = field(default_factory=list)
    occurrences: list[tuple[str, str, datetime]] = field(default_factory=list)
    group_ids: set[str] = field(default_factory=set)
    services: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    timeline: list[Occurrence] = field(default_factory=list)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> None:
        self.count += count
        self.first_seen = min(self.first_seen or first, first)
        self.last_seen = max(self.last_seen or last, last)
        self.buckets[bucket_of(last)] = self.buckets.get(bucket_of(last), 0) + count
        self.timeline.append(Occurrence(timestamp=last, count=count, fatal=event.fatal))
        self.services.add(event.service)
        if event.service_version:
            self.versions.add(event.service_version)
        if event.environment:
            self.environments.add(event.environment)
        if event.source_group_id:
            self.group_ids.add(event.source_group_id)
        if len(self.samples) < SAMPLES_PER_SIGNATURE and self._varied(event):
            self.samples.append(event)

    def _varied(self, event: ErrorEvent) -> bool:
        """Keep samples that differ from each other: different service, version, or message."""
        return all(
            (s.service, s.service_version, s.message) != (event.service, event.service_version, event.message)
            for s in self.samples
        )


@dataclass
class IssuePlan:
    signature_id: str
    kind: str  # new | updated | regressed | muted | deferred
    tally: Tally | None
    existing: dict | None
    issue: IssueRef | None = None


@dataclass
class RoundContext:
    settings: Settings
    source: Source
    tracker: Tracker
    store: Store
    now: datetime
    run_id: str
    window: Window
    report_notes: list[str] = field(default_factory=list)
    tier_counts: dict[str, int] = field(default_factory=dict)
    diagnosis_mode: str = "diagnosis off"
    diagnosis: DiagnosisStep = field(default_factory=DiagnosisStep)
    # what people asked with /rounds commands: pause, mutes, merges (controls.py)
    controls: Controls = field(default_factory=Controls)
    lapsed_mutes: list[str] = field(default_factory=list)


def signature_row(
    ctx: RoundContext, engine: GroupingEngine, signature_id: str, tally: Tally | None, existing: dict | None
) -> dict:
    """The signature as it will be after this round (pure: nothing is written here)."""
    if tally is None:
        assert existing is not None
        return existing
    a = tally.assignment
    first = iso(tally.first_seen) if tally.first_seen else iso(ctx.now)
    last = iso(tally.last_seen) if tally.last_seen else iso(ctx.now)
    representative = (
        existing["representative"] if existing and existing.get("representative") else _sample_json(tally)
    )
    return {
        "id": signature_id,
        "service": existing["service"] if existing else sorted(tally.services)[0],
        # redacted once, here: titles reach issues, job summaries and the database artifact
        "title": existing["title"] if existing else clean(a.title),
        "error_type": existing["error_type"]
        if existing
        else (tally.samples[0].error_type or "")
        if tally.samples
        else "",
        "normalized_message": existing["normalized_message"] if existing else clean(a.normalized_message),
        "fingerprint_hash": existing["fingerprint_hash"] if existing else a.fingerprint_hash,
        "fingerprint_version": existing["fingerprint_version"] if existing else a.fingerprint_version,
        "first_tier": existing["first_tier"] if existing else a.tier,
        "explanation": existing["explanation"] if existing else clean(a.explanation),
        "representative": representative,
        "grouping_state": engine.state(signature_id).model_dump_json(),
        "first_seen": min(existing["first_seen"], first) if existing else first,
        "last_seen": max(existing["last_seen"], last) if existing else last,
        "total_count": (existing["total_count"] if existing else 0) + tally.count,
        "services": json.dumps(_merged_list(existing, "services", tally.services)),
        "versions": json.dumps(_merged_list(existing, "versions", tally.versions)),
        "environments": json.dumps(_merged_list(existing, "environments", tally.environments)),
        "related": json.dumps(
            sorted(set(json.loads(existing["related"]) if existing else []) | set(a.related))
        ),
        "issue_ref": existing["issue_ref"] if existing else None,
        "created_run": existing["created_run"] if existing else ctx.run_id,
    }


def _merged_list(existing: dict | None, column: str, new: set[str]) -> list[str]:
    old = json.loads(existing[column]) if existing and existing.get(column) else []
    return sorted(set(old) | new)


def _sample_json(tally: Tally) -> str:
    """The representative occurrence, redacted: the database travels as a build artifact."""
    if tally.samples:
        sample = tally.samples[0]
        redacted = {"message": clean(sample.message)}
        if sample.stacktrace:
            redacted["stacktrace"] = clean(sample.stacktrace)
        return sample.model_copy(update=redacted).model_dump_json()
    return ErrorEvent(event_id="none", timestamp=tally.last_seen or datetime.now(UTC)).model_dump_json()
