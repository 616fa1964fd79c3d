"""What one poll gathers, and the rule that turns a backend group into an event or a count.

A stream's readers put each group they find here with its minutes (`Bucket`); `counting.py` then
turns what was not counted before into events (new groups) and counts (groups already mapped to a
signature, which cost nothing more).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import SkippedRecord
from rounds_bot.sources.signoz.queries import BUCKET_NS, BUCKET_SECONDS, NORMALISATION_RULES
from rounds_bot.sources.signoz.times import NS_PER_S

# re.ASCII: ClickHouse's RE2 reads \d and \b as ASCII-only, and both sides must mask alike
_COMPILED_RULES = tuple((re.compile(pattern, re.ASCII), repl) for pattern, repl in NORMALISATION_RULES)


def normalise_message(text: str) -> str:
    """The Python twin of the SQL `normalised()` expression, for rows grouped in rounds."""
    for pattern, replacement in _COMPILED_RULES:
        text = pattern.sub(replacement, text)
    return text


def derived_group_id(kind: str, *parts: str) -> str:
    """A stable group id for groups SigNoz has no id for (error spans, error logs)."""
    digest = hashlib.md5("\x1f".join(parts).encode(), usedforsecurity=False).hexdigest()
    return f"{kind}:{digest}"


def group_event_id(group_id: str, first_seen_ns: int) -> str:
    """Same group, same first occurrence in the window: the same event on every re-read."""
    prefix = "" if group_id.startswith("signoz-") else "signoz:"
    return f"{prefix}{group_id}@{first_seen_ns}"


AttributeValue = str | int | float | bool
EXCEPTION_KEYS = frozenset(
    {"exception.type", "exception.message", "exception.stacktrace", "exception.escaped"}
)


def attributes_of(
    resources: dict[str, str],
    strings: dict[str, str],
    numbers: dict[str, float],
    bools: dict[str, bool],
) -> dict[str, AttributeValue]:
    """A row's resource and own attributes as the OTLP reader merges them (own over resource), so
    the same telemetry gives the same event from SigNoz and from a file. SigNoz keeps every number
    as Float64: whole ones go back to ints (a status code 502, not 502.0)."""
    merged: dict[str, AttributeValue] = dict(resources)
    merged.update(strings)
    for key, number in numbers.items():
        merged[key] = int(number) if float(number).is_integer() else number
    merged.update(bools)
    return {key: value for key, value in merged.items() if key not in EXCEPTION_KEYS}


def environment_of(resources: dict[str, str]) -> str | None:
    """`deployment.environment.name` (semantic conventions 1.27+), else the older key."""
    return resources.get("deployment.environment.name") or resources.get("deployment.environment") or None


def text_of(attributes: dict[str, AttributeValue], key: str) -> str | None:
    value = attributes.get(key)
    return None if value is None or value == "" else str(value)


@dataclass(slots=True)
class Bucket:
    """A group's occurrences in one minute (`queries.BUCKET_SECONDS`): how many, first and last.
    Slotted: a first round holds one per group and minute (tens of thousands)."""

    start_s: int
    count: int
    first_ns: int
    last_ns: int
    environment: str = ""

    @property
    def key(self) -> BucketKey:
        return (self.start_s, self.environment)

    def merged(self, other: Bucket) -> Bucket:
        """The same minute read in two disjoint chunks."""
        return Bucket(
            self.start_s,
            self.count + other.count,
            min(self.first_ns, other.first_ns),
            max(self.last_ns, other.last_ns),
            self.environment,
        )


BucketKey = tuple[int, str]


def parse_buckets(text: str) -> dict[BucketKey, Bucket]:
    """`start:count:first:last:hex(environment),...` as the grouped queries spell a group's minutes.

    Raises ValueError naming the part that is not four integers and a hex string."""
    buckets: dict[BucketKey, Bucket] = {}
    for part in filter(None, text.split(",")):
        try:
            start, count, first, last, environment = part.split(":")
            # interned: the same few environments repeat in every minute of every group
            name = sys.intern(bytes.fromhex(environment).decode())
            bucket = Bucket(int(start), int(count), int(first), int(last), name)
        except ValueError:
            raise ValueError(f"bucket {part!r} is not start:count:first:last:hex(environment)") from None
        add_bucket(buckets, bucket)
    return buckets


def add_bucket(buckets: dict[BucketKey, Bucket], bucket: Bucket) -> None:
    key = bucket.key
    buckets[key] = buckets[key].merged(bucket) if key in buckets else bucket


def format_buckets(buckets: dict[BucketKey, Bucket]) -> str:
    return ",".join(
        f"{b.start_s}:{b.count}:{b.first_ns}:{b.last_ns}:{b.environment.encode().hex()}"
        for b in buckets.values()
    )


@dataclass
class GroupSpan:
    """A group's occurrences in the window, minute by minute."""

    group_id: str
    service: str
    count: int
    first_seen_ns: int
    last_seen_ns: int
    buckets: dict[BucketKey, Bucket] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.buckets:
            # a source without minutes (listErrors): the whole count as one span from first to last
            whole = Bucket(self.first_seen_ns // NS_PER_S, self.count, self.first_seen_ns, self.last_seen_ns)
            self.buckets = {whole.key: whole}


@dataclass
class FoundGroup:
    """A group a stream found, with what makes its event (built only for groups not known yet)."""

    span: GroupSpan
    event: Callable[[], ErrorEvent]

    def merged(self, other: FoundGroup) -> FoundGroup:
        buckets = dict(self.span.buckets)
        for bucket in other.span.buckets.values():
            add_bucket(buckets, bucket)
        span = GroupSpan(
            self.span.group_id,
            self.span.service,
            self.span.count + other.span.count,
            min(self.span.first_seen_ns, other.span.first_seen_ns),
            max(self.span.last_seen_ns, other.span.last_seen_ns),
            buckets,
        )
        # the first occurrence stands for the group (`queries._sample_columns`), across chunks too
        older = other if other.span.first_seen_ns < self.span.first_seen_ns else self
        return FoundGroup(span, older.event)


@dataclass
class Collector:
    """What one stream found: its groups (merged over chunks), skipped records and notes."""

    known_group_ids: frozenset[str]
    groups: dict[str, FoundGroup] = field(default_factory=dict)
    skipped: list[SkippedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def is_known(self, group_id: str) -> bool:
        return group_id in self.known_group_ids

    def found(self, group: FoundGroup) -> None:
        group_id = group.span.group_id
        self.groups[group_id] = self.groups[group_id].merged(group) if group_id in self.groups else group

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append(SkippedRecord(where=where, reason=reason))

    def skip_invalid(self, where: str, what: str, error: ValueError) -> None:
        """A row that could not be read, skipped alone: a validation error names the row's first bad field."""
        if isinstance(error, ValidationError):
            first = error.errors()[0]
            location = ".".join(str(part) for part in first["loc"])
            self.skip(where, f"{what} field {location}: {first['msg']}")
        else:
            self.skip(where, str(error))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def occurrences(self) -> int:
        return sum(group.span.count for group in self.groups.values())


@dataclass
class RowTally:
    """Occurrences of one group counted in rounds (the raw-row fallback), newest kept as sample."""

    count: int = 0
    first_seen_ns: int = 0
    last_seen_ns: int = 0
    sample: dict[str, object] = field(default_factory=dict)
    buckets: dict[BucketKey, Bucket] = field(default_factory=dict)

    def add(self, timestamp_ns: int, row: dict[str, object], environment: str = "") -> None:
        if self.count == 0 or timestamp_ns < self.first_seen_ns:
            self.first_seen_ns = timestamp_ns
        if self.count == 0 or timestamp_ns >= self.last_seen_ns:
            self.last_seen_ns = timestamp_ns
            self.sample = row
        self.count += 1
        add_bucket(
            self.buckets,
            Bucket(timestamp_ns // BUCKET_NS * BUCKET_SECONDS, 1, timestamp_ns, timestamp_ns, environment),
        )


# The collector writes `kind_string` as pdata's SpanKind.String() (signoz-otel-collector
# exporter/clickhousetracesexporter; pdata ptrace SpanKind.String): "Server", "Client", ...;
# "Unspecified" (and anything unknown) says nothing, as an absent kind does in the OTLP reader.
_SPAN_KINDS = frozenset(("internal", "server", "client", "producer", "consumer"))


def span_kind(kind_string: str) -> str | None:
    """The event's `span_kind` (lower case, as the OTLP reader has it) from SigNoz's `kind_string`."""
    kind = kind_string.strip().lower()
    return kind if kind in _SPAN_KINDS else None
