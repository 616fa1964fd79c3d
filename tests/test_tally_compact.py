"""A tally keeps its sets and mappings as nothing, their one item, or their own container, and tells a new
sample from those kept by the first's fields and a digest of the others': what its readers get is what the
plain containers (a set, a dict, the kinds themselves) gave, item for item and in the same order, whatever
occurrences are added."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from signature_samples import an_assignment

from rounds_bot.clock import bucket_of
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.round.spilled import SpilledBlobs
from rounds_bot.tally import SAMPLES_PER_SIGNATURE, Samples, Tally

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
ELSEWHERE = timezone(timedelta(hours=2))


@dataclass
class ContainerTally:
    """The aggregates as a tally kept them in containers of its own from the start: a set, a dict keyed as
    they are read, each running `min` keeping the earlier on a tie; and each sample's kind kept whole."""

    buckets: dict[str, int] = field(default_factory=dict)
    services: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    group_ids: set[str] = field(default_factory=set)
    by_version: dict[str, tuple[datetime, int]] = field(default_factory=dict)
    service_versions: dict[tuple[str, str], datetime] = field(default_factory=dict)
    kinds: list[tuple[str, str | None, str]] = field(default_factory=list)
    samples: list[ErrorEvent] = field(default_factory=list)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> None:
        bucket = bucket_of(last)
        self.buckets[bucket] = self.buckets.get(bucket, 0) + count
        self.services.add(event.service)
        version = event.service_version
        if version:
            before = self.by_version.get(version)
            if before is None:
                self.by_version[version] = (first, count)
            else:
                earliest, seen = before
                self.by_version[version] = (first if first < earliest else earliest, seen + count)
            pair = (event.service, version)
            ran_from = self.service_versions.get(pair)
            if ran_from is None or first < ran_from:
                self.service_versions[pair] = first
        if event.environment:
            self.environments.add(event.environment)
        if event.source_group_id:
            self.group_ids.add(event.source_group_id)
        kind = (event.service, event.service_version, event.message)
        if len(self.kinds) < SAMPLES_PER_SIGNATURE and kind not in self.kinds:
            self.kinds.append(kind)
            self.samples.append(event)


# few values of each, so that a tally sees one of a kind, then more; strings that would run together if
# their fields were joined unmarked, "" beside None, a lone surrogate (JSON may carry one)
_TEXTS = ["a", "ab", "b", "", "\ud800", "dénied ✓", "a\x00", "\x01"]
_occurrence = st.tuples(
    st.sampled_from(["api", "ap", "worker"]),
    st.sampled_from([None, "", "1.0", "1.0a", "2.0"]),
    st.sampled_from([None, "", "prod", "staging"]),
    st.sampled_from([None, "", "g1", "g2"]),
    st.sampled_from(_TEXTS),
    st.integers(0, 3 * 3600),  # seconds after NOW: a few buckets
    st.sampled_from([UTC, ELSEWHERE]),
    st.integers(1, 3),  # the count
    st.integers(0, 2),  # minutes its first occurrence was before its last
)


def _event(number: int, values: tuple[str, str | None, str | None, str | None, str]) -> ErrorEvent:
    service, version, environment, group_id, message = values
    return ErrorEvent(
        event_id=f"e{number}",
        timestamp=NOW,
        service=service,
        service_version=version,
        environment=environment,
        source_group_id=group_id,
        message=message,
    )


def _is_a_set(values: AbstractSet[str]) -> bool:
    """A set `|` takes (what `Signature.absorb` does with a tally's): a set or a frozenset."""
    return isinstance(values, set | frozenset)


@settings(max_examples=300, deadline=None)
@given(st.lists(_occurrence, max_size=30), st.booleans())
def test_a_compact_tally_reads_as_the_one_that_kept_containers_of_its_own(
    occurrences: list[tuple[str, str | None, str | None, str | None, str, int, timezone, int, int]],
    with_a_keeper: bool,
) -> None:
    tally = Tally(
        assignment=an_assignment(), samples=Samples(SpilledBlobs("test-tally-") if with_a_keeper else None)
    )
    plain = ContainerTally()
    for number, (service, version, environment, group_id, message, seconds, zone, count, early) in enumerate(
        occurrences
    ):
        event = _event(number, (service, version, environment, group_id, message))
        last = (NOW + timedelta(seconds=seconds)).astimezone(zone)
        first = last - timedelta(minutes=early)
        tally.add(event, count, first, last)
        plain.add(event, count, first, last)
    assert list(tally.buckets.items()) == list(plain.buckets.items())
    assert list(tally.by_version.items()) == list(plain.by_version.items())
    assert list(tally.service_versions.items()) == list(plain.service_versions.items())
    # the moments kept are the ones given (a tie keeps the earlier one, with its own offset)
    assert [first.tzinfo for first, _ in tally.by_version.values()] == [
        first.tzinfo for first, _ in plain.by_version.values()
    ]
    assert [first.tzinfo for first in tally.service_versions.values()] == [
        first.tzinfo for first in plain.service_versions.values()
    ]
    assert tally.versions == frozenset(plain.by_version)
    for kept, expected in (
        (tally.services, plain.services),
        (tally.environments, plain.environments),
        (tally.group_ids, plain.group_ids),
    ):
        assert kept == expected and _is_a_set(kept) and sorted(kept) == sorted(expected)
        assert frozenset() | kept == expected  # as `Signature.absorb` joins them
    assert len(tally.samples) == len(plain.samples)
    assert list(tally.samples) == plain.samples


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_TEXTS), st.sampled_from([None, *_TEXTS]), st.sampled_from(_TEXTS)))
)
def test_samples_told_apart_by_digest_are_those_told_apart_by_their_kinds(
    kinds: list[tuple[str, str | None, str]],
) -> None:
    samples = Samples()
    plain = ContainerTally()
    for number, (service, version, message) in enumerate(kinds):
        event = ErrorEvent(
            event_id=f"e{number}", timestamp=NOW, service=service, service_version=version, message=message
        )
        samples.offer(event)
        plain.add(event, 1, NOW, NOW)
    assert len(samples) == len(plain.samples)
    assert list(samples) == plain.samples
    assert [(s.service, s.service_version, s.message) for s in samples] == plain.kinds


def test_kinds_whose_fields_would_run_together_are_different_samples() -> None:
    samples = Samples()
    kinds = [("ab", None, "c"), ("a", "b", "c"), ("a", None, "bc"), ("a", "", "bc"), ("a", "bc", "")]
    for number, (service, version, message) in enumerate(kinds):
        samples.offer(
            ErrorEvent(
                event_id=f"e{number}",
                timestamp=NOW,
                service=service,
                service_version=version,
                message=message,
            )
        )
    assert [(s.service, s.service_version, s.message) for s in samples] == kinds


def test_a_tally_of_one_of_each_reads_as_one_item_containers() -> None:
    tally = Tally(assignment=an_assignment())
    assert (tally.buckets, tally.by_version, tally.service_versions) == ({}, {}, {})
    assert (tally.services, tally.environments, tally.group_ids) == (set(), set(), set())
    event = ErrorEvent(
        event_id="e",
        timestamp=NOW,
        service="api",
        service_version="1.0",
        environment="prod",
        source_group_id="g",
    )
    tally.add(event, 2, NOW, NOW)
    tally.add(event, 1, NOW - timedelta(minutes=1), NOW)
    assert tally.buckets == {bucket_of(NOW): 3}
    assert tally.by_version == {"1.0": (NOW - timedelta(minutes=1), 3)}
    assert tally.service_versions == {("api", "1.0"): NOW - timedelta(minutes=1)}
    assert (tally.services, tally.environments, tally.group_ids) == ({"api"}, {"prod"}, {"g"})
    assert len(tally.samples) == 1 and tally.samples[0] is event


_text = st.text(max_size=20)
_assignments = st.builds(
    dict,
    signature_id=_text,
    tier=st.sampled_from(["error_code", "fingerprint", "similarity", "new"]),
    fingerprint_hash=_text,
    fingerprint_version=_text,
    explanation=st.text(max_size=200),
    title=_text,
    normalized_message=_text,
    related=st.lists(_text, max_size=3),
    related_similarity=st.dictionaries(_text, st.floats(allow_nan=False), max_size=3),
    similarity=st.none() | st.floats(allow_nan=False),
)


@settings(max_examples=300, deadline=None)
@given(_assignments, st.sets(st.sampled_from(["related", "related_similarity", "similarity"])))
def test_a_tally_s_assignment_reads_as_the_model_it_was_given(
    values: dict[str, object], left_out: set[str]
) -> None:
    # given every field (as the engine makes one) or only those required (as a merge's or a group's is made)
    given = {name: value for name, value in values.items() if name not in left_out}
    assignment = Assignment.model_validate(given)
    expected = (
        assignment.model_dump_json(),
        assignment.model_dump_json(exclude_unset=True),
        set(assignment.model_fields_set),
        list(assignment.__dict__),
    )
    tally = Tally(assignment)
    for read in (tally.assignment, tally.assignment):
        assert read == assignment and read == Assignment.model_validate(given)
        assert isinstance(read.related, list) and isinstance(read.related_similarity, dict)
        assert (
            read.model_dump_json(),
            read.model_dump_json(exclude_unset=True),
            read.model_fields_set,
            list(read.__dict__),
        ) == expected
        assert read.model_copy(update={"tier": "new"}) == assignment.model_copy(update={"tier": "new"})
