"""Signature: one distinct problem, the domain object a round builds, files, stores and rebuilds.

A round sees occurrences (a `Tally` per signature) and turns them into the signature as it will be after the
round: `Signature.first(tally, ...)` for a problem never seen before, `known.absorb(tally, ...)` for one
already known. The issue carries it in its hidden marker (`to_marker`) and a lost database reads it back from
the issue (`github/rebuild.py`). Only `store.py` knows how a signature is laid out in the database.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import Field, field_validator

from rounds_bot.clock import iso
from rounds_bot.grouping.skeletons import render as render_template
from rounds_bot.grouping.state import SignatureState
from rounds_bot.headline import headline
from rounds_bot.marker import MarkerMemory, MarkerState
from rounds_bot.models import ErrorEvent, Frozen, sharing_fields_set
from rounds_bot.tally import Tally

# The total counts at which a signature's severity rises; fatal problems are critical at once.
HIGH_AT, MEDIUM_AT = 1_000, 100

#: each distinct set of names `shared_set` hands out, once; past the cap a signature keeps its own (the
#: table holds at most this many small sets for the process's life: a megabyte or so)
_SHARED_SETS: dict[frozenset[str], frozenset[str]] = {}
MAX_SHARED_SETS = 4_096


def shared_set(values: frozenset[str]) -> frozenset[str]:
    """`values`, or an equal set handed out before. A frozenset is a hash table of at least eight slots, 216
    bytes even empty or with one item (CPython's `setobject.c`, `PySet_MINSIZE`; and since Python 3.10 an
    empty frozenset is no longer one shared object), a signature holds four (services, versions,
    environments, related ids), and a round keeps one signature per problem it saw, to its end: their sets
    mostly repeat (one service, one environment, no related ids). Sharing one is safe: a frozenset never
    changes, and equal sets compare and hash alike (the order one is iterated in already varies with the
    process's string hashes, so what is shown or stored is sorted)."""
    shared = _SHARED_SETS.get(values)
    if shared is None:
        if len(_SHARED_SETS) >= MAX_SHARED_SETS:
            return values
        shared = _SHARED_SETS[values] = values
    return shared


class Signature(Frozen):
    """One distinct problem as rounds knows it: identity, grouping state, counts, where it was seen."""

    id: str
    service: str
    title: str = Field(
        description="the headline of the first occurrence, redacted, a log or span error's from its template "
        "(`headline.py`)"
    )
    error_type: str = ""
    normalized_message: str = ""
    fingerprint_hash: str = ""
    fingerprint_version: str = ""
    first_tier: str = Field(default="", description="the dedup tier that created it")
    explanation: str = Field(default="", description='the "why grouped" component tree, as text')
    representative: ErrorEvent = Field(description="one redacted occurrence, shown in the issue")
    grouping_state: SignatureState | None = Field(
        default=None, description="what a fresh grouping engine needs to group as the last one did"
    )
    first_seen: datetime
    last_seen: datetime
    total_count: int = 0
    services: frozenset[str] = frozenset()
    versions: frozenset[str] = frozenset()
    environments: frozenset[str] = frozenset()
    related: frozenset[str] = Field(default=frozenset(), description="possibly related signature ids")
    issue_ref: str | None = Field(default=None, description="the tracker's reference, e.g. #12")
    created_run: str = ""
    counted_through: datetime | None = Field(
        default=None,
        description="rebuilt from an issue: occurrences up to this moment are in total_count already",
    )

    @field_validator("services", "versions", "environments", "related", mode="after")
    @classmethod
    def _share_set(cls, values: frozenset[str]) -> frozenset[str]:
        return shared_set(values)

    @classmethod
    def first(cls, tally: Tally, grouping_state: SignatureState, *, run_id: str, now: datetime) -> Signature:
        """A signature never seen before, from the occurrences of its first round."""
        a = tally.assignment
        sample = tally.samples[0] if tally.samples else None
        # a round keeps one per signature it saw, to its end: the set of given fields is shared
        return sharing_fields_set(
            cls(
                id=a.signature_id,
                service=sorted(tally.services)[0],
                # from occurrences redacted at ingestion (`redact.boundary.redact_poll`): never redacted again
                title=(
                    headline(sample, template=_template(grouping_state, a.normalized_message))
                    if sample
                    else a.title
                ),
                error_type=(sample.error_type or "") if sample else "",
                normalized_message=a.normalized_message,
                fingerprint_hash=a.fingerprint_hash,
                fingerprint_version=a.fingerprint_version,
                first_tier=a.tier,
                explanation=a.explanation,
                representative=_representative(tally),
                grouping_state=grouping_state,
                first_seen=tally.first_seen or now,
                last_seen=tally.last_seen or now,
                total_count=tally.count,
                services=frozenset(tally.services),
                versions=frozenset(tally.versions),
                environments=frozenset(tally.environments),
                related=frozenset(a.related),
                created_run=run_id,
            )
        )

    def absorb(self, tally: Tally, grouping_state: SignatureState | None, *, now: datetime) -> Signature:
        """This signature after a round that saw `tally` more of it; its identity never changes."""
        absorbed = self.model_copy(
            update={
                "grouping_state": grouping_state,
                "first_seen": min(self.first_seen, tally.first_seen or now),
                "last_seen": max(self.last_seen, tally.last_seen or now),
                "total_count": self.total_count + tally.count,
                # (a copy is not validated: its sets are shared here, as `_share_set` shares a new one's)
                "services": shared_set(self.services | tally.services),
                "versions": shared_set(self.versions | tally.versions),
                "environments": shared_set(self.environments | tally.environments),
                "related": shared_set(self.related | set(tally.assignment.related)),
            }
        )
        return sharing_fields_set(absorbed)

    def filed_as(self, issue_ref: str) -> Signature:
        return sharing_fields_set(self.model_copy(update={"issue_ref": issue_ref}))

    @property
    def severity(self) -> str:
        """Stable: fatal problems are critical, the rest grows with the total count (a label changes only
        when a threshold is crossed, never churns between rounds)."""
        if self.representative.fatal:
            return "critical"
        return "high" if self.total_count >= HIGH_AT else "medium" if self.total_count >= MEDIUM_AT else "low"

    def to_marker(self, memory: MarkerMemory | None = None) -> MarkerState:
        """What the issue's hidden marker carries, so the database can be rebuilt from the issue; `memory`,
        its diagnosis and spending, so a rebuilt database neither pays again nor drops the diagnosis, and its
        fixes and ignore, so it still follows the one and keeps the other, and its cascade links, so it still
        names the cascade (`marker_memory.py`)."""
        memory = memory or MarkerMemory()
        state = MarkerState(
            signature_id=self.id,
            service=self.service,
            fingerprint_hash=self.fingerprint_hash,
            fingerprint_version=self.fingerprint_version,
            first_seen=iso(self.first_seen),
            last_seen=iso(self.last_seen),
            total_count=self.total_count,
            grouping_state=self.grouping_state.model_dump(mode="json") if self.grouping_state else {},
            title=self.title,
            error_type=self.error_type,
            normalized_message=self.normalized_message,
            first_tier=self.first_tier,
            services=remembered(self.services),
            versions=remembered(self.versions),
            environments=remembered(self.environments),
            related=sorted(self.related),
            diagnosis=memory.diagnosis,
            spend=memory.spend,
            cascade=memory.cascade,
        )
        return state.remembering(memory)


#: what the marker keeps of a signature's services, versions and environments: an app's clients can send
#: any version or environment (a browser's or a phone's SDK sets them), and the marker must leave the issue
#: within GitHub's limit on its body whatever they sent
REMEMBERED_VALUES = 100
REMEMBERED_CHARS = 200


def remembered(values: frozenset[str]) -> list[str]:
    """The values a marker carries: in order, the first `REMEMBERED_VALUES` of those no longer than
    `REMEMBERED_CHARS` (a rebuilt database lacks the rest; the next occurrence of one adds it again)."""
    return sorted(value for value in values if len(value) <= REMEMBERED_CHARS)[:REMEMBERED_VALUES]


def _template(state: SignatureState | None, normalized_message: str) -> str:
    """The problem's message with parameters as placeholders: the template the grouping engine mined (as "why
    grouped" shows it), else the normalised message."""
    mined = [t for t in (state.templates if state else []) if not t.exact]
    return render_template(mined[0].tokens) if mined else normalized_message


def _representative(tally: Tally) -> ErrorEvent:
    """The first sample (redacted at ingestion, like every occurrence)."""
    if not tally.samples:
        return ErrorEvent(event_id="none", timestamp=tally.last_seen or datetime.now(UTC))
    return tally.samples[0]


__all__ = ["Signature"]
