"""What a round keeps of each occurrence it counts (its tally, the ids to remember, the errors a cascade
reads) is kept in the cheapest form that gives back exactly what the plain form gave: a tally as a plain
aggregate of every occurrence added one by one, the buckets of the clock, the ids as `Store.mark_seen`
writes them, each error's moment as it was."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from signature_samples import an_assignment

from rounds_bot.clock import bucket_of, iso
from rounds_bot.models import ErrorEvent
from rounds_bot.round import cascade, trace_filter
from rounds_bot.round.cascade import TraceErrors
from rounds_bot.round.counted import Counted
from rounds_bot.round.run import run_round
from rounds_bot.round.trace_filter import SharedTraceFilter
from rounds_bot.settings import load_settings
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.store.batches import write_many
from rounds_bot.tally import SAMPLES_PER_SIGNATURE, Tally
from rounds_bot.tracker.dryrun import DryRunTracker
from rounds_bot.triage import Occurrence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from scale_data import write_otlp

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
EVERYTHING = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
ELSEWHERE = timezone(timedelta(hours=2))


@dataclass
class PlainTally:
    """A tally as the plainest code keeps it: every aggregate updated with `min`, `max` and `get`, the bucket
    named by the clock, every occurrence and sample in a list."""

    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    buckets: dict[str, int] = field(default_factory=dict)
    samples: list[ErrorEvent] = field(default_factory=list)
    group_ids: set[str] = field(default_factory=set)
    services: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    timeline: list[Occurrence] = field(default_factory=list)
    by_version: dict[str, tuple[datetime, int]] = field(default_factory=dict)
    service_versions: dict[tuple[str, str], datetime] = field(default_factory=dict)

    def add(self, event: ErrorEvent, count: int, first: datetime, last: datetime) -> None:
        self.count += count
        self.first_seen = min(self.first_seen or first, first)
        self.last_seen = max(self.last_seen or last, last)
        bucket = bucket_of(last)
        self.buckets[bucket] = self.buckets.get(bucket, 0) + count
        self.timeline.append(Occurrence(timestamp=last, count=count, fatal=event.fatal))
        self.services.add(event.service)
        if event.service_version:
            self.versions.add(event.service_version)
            earliest, seen = self.by_version.get(event.service_version, (first, 0))
            self.by_version[event.service_version] = (min(earliest, first), seen + count)
            pair = (event.service, event.service_version)
            self.service_versions[pair] = min(self.service_versions.get(pair, first), first)
        if event.environment:
            self.environments.add(event.environment)
        if event.source_group_id:
            self.group_ids.add(event.source_group_id)
        kind = (event.service, event.service_version, event.message)
        if len(self.samples) < SAMPLES_PER_SIGNATURE and all(
            (s.service, s.service_version, s.message) != kind for s in self.samples
        ):
            self.samples.append(event)


def _occurrences(folder: Path) -> list[tuple[ErrorEvent, int, datetime, datetime]]:
    """The events of a synthetic round (services, versions, environments, traces), with a few moments moved
    to another offset, before the epoch or past 2242, counts above one and aggregates spanning a while."""
    data = write_otlp(folder / "telemetry.jsonl", 1_500, 60, end=NOW)
    events = list(OtlpFileSource(data).poll(EVERYTHING).events)
    added: list[tuple[ErrorEvent, int, datetime, datetime]] = []
    for n, event in enumerate(events):
        moment = event.timestamp
        if n % 11 == 3:
            moment = moment.astimezone(ELSEWHERE)
        elif n % 53 == 5:
            moment = datetime(1969, 12, 31, 23, 58, 59, 999_999, tzinfo=UTC) - timedelta(minutes=n)
        elif n % 61 == 7:
            moment = datetime(2300, 1, 1, 0, 4, 59, 999_999, tzinfo=UTC) + timedelta(seconds=n)
        one = event.model_copy(update={"timestamp": moment, "fatal": n % 17 == 0})
        count = 1 if n % 13 else 4
        first = moment - timedelta(minutes=n % 5) if n % 29 == 1 else moment
        added.append((one, count, first, moment))
    assert len(events) > 1_000
    assert {bool(e.service_version) for e, _, _, _ in added} == {True, False} or all(
        e.service_version for e, _, _, _ in added
    )
    return added


def test_a_tally_holds_what_a_plain_aggregate_of_the_same_occurrences_holds(tmp_path: Path) -> None:
    tallies: dict[str, Tally] = {}
    plain: dict[str, PlainTally] = {}
    for event, count, first, last in _occurrences(tmp_path):
        signature_id = f"sig_{event.service}_{len(event.message or '') % 4}"
        tallies.setdefault(signature_id, Tally(assignment=an_assignment(signature_id))).add(
            event, count, first, last
        )
        plain.setdefault(signature_id, PlainTally()).add(event, count, first, last)
    assert len(tallies) > 10
    for signature_id, tally in tallies.items():
        expected = plain[signature_id]
        assert (tally.count, tally.first_seen, tally.last_seen) == (
            expected.count,
            expected.first_seen,
            expected.last_seen,
        )
        assert tally.first_seen is not None and expected.first_seen is not None
        assert tally.first_seen.tzinfo == expected.first_seen.tzinfo
        assert list(tally.buckets.items()) == list(expected.buckets.items())  # in the same order
        assert (tally.services, tally.versions, tally.environments, tally.group_ids) == (
            expected.services,
            expected.versions,
            expected.environments,
            expected.group_ids,
        )
        assert list(tally.by_version.items()) == list(expected.by_version.items())
        assert list(tally.service_versions.items()) == list(expected.service_versions.items())
        assert list(tally.timeline) == expected.timeline
        assert [o.timestamp.tzinfo for o in tally.timeline] == [o.timestamp.tzinfo for o in expected.timeline]
        assert list(tally.samples) == expected.samples


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)))
def test_an_occurrence_is_counted_in_the_clock_s_bucket_of_its_moment_whenever_it_happened(
    moment: datetime,
) -> None:
    tally = Tally(assignment=an_assignment("sig_1"))
    tally.add(ErrorEvent(event_id="e", timestamp=moment), 1, moment, moment)
    assert tally.buckets == {bucket_of(moment): 1}


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 1, 12, 4, 59, 999_999, tzinfo=UTC),
        datetime(2026, 11, 1, 12, 5, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2242, 3, 16, 12, 56, 31, 999_999, tzinfo=UTC),  # about 2**33 seconds
        datetime(2242, 3, 16, 12, 56, 32, tzinfo=UTC),
        datetime(5000, 1, 1, 0, 4, 59, 999_999, tzinfo=UTC),  # its float timestamp rounds up a second
        datetime(2026, 11, 1, 14, 4, 59, 999_999, tzinfo=ELSEWHERE),
    ],
)
def test_an_occurrence_at_a_bucket_s_edge_is_counted_where_the_clock_puts_it(moment: datetime) -> None:
    tally = Tally(assignment=an_assignment("sig_1"))
    tally.add(ErrorEvent(event_id="e", timestamp=moment), 1, moment, moment)
    assert tally.buckets == {bucket_of(moment): 1}


def test_a_timeline_read_in_turn_gives_what_each_index_gives() -> None:
    tally = Tally(assignment=an_assignment("sig_1"))
    moments = [NOW, NOW.astimezone(ELSEWHERE), NOW + timedelta(microseconds=1), NOW - timedelta(days=30_000)]
    for n, moment in enumerate(moments * 3):
        tally.add(ErrorEvent(event_id=f"e{n}", timestamp=moment, fatal=n % 2 == 0), 1 + n % 3, moment, moment)
    timeline = tally.timeline
    assert list(timeline) == [timeline[i] for i in range(len(timeline))] == timeline[:]
    assert [o.timestamp.tzinfo for o in timeline] == [
        timeline[i].timestamp.tzinfo for i in range(len(timeline))
    ]


@pytest.mark.parametrize(
    "moment",
    [
        NOW,
        NOW.astimezone(ELSEWHERE),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(5000, 1, 1, 0, 4, 59, 999_999, tzinfo=UTC),
    ],
)
def test_the_moment_a_tally_gives_back_keeps_the_ids_counted_and_the_traces_as_the_moment_itself_does(
    moment: datetime,
) -> None:
    """A round works an occurrence's moment out once, as its tally keeps it, and hands it on (`_grouped`):
    the ids counted and the errors a cascade reads are kept as they were from the moment itself."""
    event = ErrorEvent(event_id=f"{7:032x}", timestamp=moment, trace_id="t1", span_id="s1", service="a")
    micros = Tally(assignment=an_assignment("sig_1")).add(event, 1, moment, moment)
    assert (micros is None) == (moment.tzinfo is not UTC)
    by_moment, by_micros = Counted(), Counted()
    by_moment.append(event.event_id, "sig_1", moment)
    if micros is None:
        by_micros.append(event.event_id, "sig_1", moment)
    else:
        by_micros.append_at(event.event_id, "sig_1", micros)
    assert list(by_micros.stored()) == list(by_moment.stored()) and list(by_micros) == list(by_moment)
    errors_by_moment, errors_by_micros = TraceErrors(), TraceErrors()
    errors_by_moment.add(event, "sig_1")
    errors_by_micros.add(event, "sig_1", micros)
    errors_by_moment.add(event.model_copy(update={"service": "b"}), "sig_2")
    errors_by_micros.add(event.model_copy(update={"service": "b"}), "sig_2", micros)
    assert list(errors_by_micros.shared()) == list(errors_by_moment.shared())


def _seen_rows(store: Store) -> list[tuple[object, ...]]:
    return sorted(store.db.execute("select event_id, seen_at from seen_events").fetchall(), key=repr)


@pytest.mark.parametrize("in_memory", [Counted.IN_MEMORY, 7])
def test_the_occurrences_counted_are_written_as_mark_seen_writes_them_in_their_stored_form(
    in_memory: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = [(f"{n:032x}", f"sig_{n % 3}", NOW + timedelta(microseconds=7 * n)) for n in range(40)]
    given += [
        ("sha256:0123456789abcdef", "sig_0", NOW),
        ("0123456789ABCDEF0123456789ABCDEF", "sig_1", datetime(2026, 11, 1, 14, 0, 0, 5, tzinfo=ELSEWHERE)),
        ("0123456789abcdef", "sig_1", NOW),
        ("span-7", "sig_2", datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)),
        ("", "sig_2", NOW),
    ]
    monkeypatch.setattr(Counted, "IN_MEMORY", in_memory)
    counted = Counted()
    for event_id, signature_id, moment in given:
        counted.append(event_id, signature_id, moment)
    as_before, stored = Store.memory(), Store.memory()
    as_before.mark_seen(given)
    stored.mark_seen_stored(counted.stored())
    assert _seen_rows(stored) == _seen_rows(as_before) and len(_seen_rows(stored)) == len(given)
    assert list(counted) == [(e, s, m.astimezone(UTC)) for e, s, m in given]
    counted.close()


@given(
    offsets=st.lists(st.integers(min_value=-5_000_000, max_value=5_000_000), max_size=60),
    cutoff=st.integers(min_value=-6_000_000, max_value=6_000_000),
    in_memory=st.sampled_from([Counted.IN_MEMORY, 1, 7]),
)
def test_occurrences_the_commit_forgets_are_not_written_and_the_rows_left_are_the_same(
    offsets: list[int], cutoff: int, in_memory: int
) -> None:
    """A round counts each id once: writing only those at or after the forgetting's moment leaves the rows
    that writing all of them and then forgetting the older ones leaves (a cut inside a batch, a batch
    wholly before it or wholly after it, the cut on an occurrence's own microsecond)."""
    given = [
        (f"{n:016x}" if n % 3 else f"span-{n}", f"sig_{n % 4}", NOW + timedelta(microseconds=offset))
        for n, offset in enumerate(offsets)
    ]
    forget_before = NOW + timedelta(microseconds=cutoff)
    previous = Counted.IN_MEMORY
    Counted.IN_MEMORY = in_memory  # hypothesis runs the body many times: a fixture's patch would stay one
    try:
        counted = Counted()
        for event_id, signature_id, moment in given:
            counted.append(event_id, signature_id, moment)
    finally:
        Counted.IN_MEMORY = previous
    all_of_them, only_kept = Store.memory(), Store.memory()
    all_of_them.mark_seen_stored(counted.stored())
    only_kept.mark_seen_stored(counted.stored(since=forget_before))
    written = len(_seen_rows(only_kept))
    for store in (all_of_them, only_kept):
        store.forget_seen_before(forget_before)
    assert _seen_rows(only_kept) == _seen_rows(all_of_them)
    assert written == sum(1 for _, _, moment in given if moment >= forget_before)
    assert list(counted.stored(since=None)) == list(counted.stored())
    counted.close()


@pytest.mark.parametrize("in_memory", [TraceErrors.IN_MEMORY, 1])
def test_an_error_of_a_shared_trace_comes_back_at_the_moment_it_happened_in_its_own_offset(
    in_memory: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cascade.TraceErrors, "IN_MEMORY", in_memory)
    moments = [
        NOW,
        NOW.astimezone(ELSEWHERE),
        NOW + timedelta(microseconds=1),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ]
    errors = TraceErrors()
    events = [
        ErrorEvent(event_id=f"e{n}", timestamp=moment, service=f"svc{n}", trace_id="ab" * 16, span_id=f"s{n}")
        for n, moment in enumerate(moments)
    ]
    for n, event in enumerate(events):
        errors.add(event, f"sig_{n}")
    ((trace_id, shared),) = list(errors.shared())
    assert trace_id == "ab" * 16
    assert [(e.event_id, e.timestamp, e.timestamp.tzinfo, sid) for e, sid in shared] == [
        (e.event_id, e.timestamp, e.timestamp.tzinfo, f"sig_{n}") for n, e in enumerate(events)
    ]


_TRACE_ERRORS = st.lists(
    st.tuples(
        st.integers(0, 12),  # the trace (a few: traces shared and not)
        st.integers(0, 4),  # the signature
        st.integers(0, 3),  # the service
        st.integers(-5, 5),  # seconds from NOW
        st.booleans(),  # in UTC, or in another offset
    ),
    max_size=60,
)


def _trace_errors(given: list[tuple[int, int, int, int, bool]]) -> list[tuple[ErrorEvent, str]]:
    errors = []
    for n, (trace, signature, service, seconds, utc) in enumerate(given):
        moment = NOW + timedelta(seconds=seconds)
        event = ErrorEvent(
            event_id=f"e{n}",
            timestamp=moment if utc else moment.astimezone(ELSEWHERE),
            service=f"svc{service}",
            trace_id=f"{trace:032x}",
            span_id=f"s{n}",
            parent_span_id=f"s{n - 1}" if n % 3 else None,
        )
        errors.append((event, f"sig_{signature}"))
    return errors


def _shared(errors: list[tuple[ErrorEvent, str]]) -> list[tuple[str, list[tuple[ErrorEvent, str]]]]:
    traces = TraceErrors()
    for event, signature_id in errors:
        traces.add(event, signature_id)
    return list(traces.shared())


@given(_TRACE_ERRORS, st.sampled_from([1, 3, 7]), st.sampled_from([1, 2, 8, 1 << 20]))
def test_the_shared_traces_kept_past_memory_are_those_kept_in_memory(
    given: list[tuple[int, int, int, int, bool]], in_memory: int, slots: int
) -> None:
    """Spilled and filtered (with a filter of few slots, so traces collide in it), the shared traces and their
    errors are those every error kept in memory gives, in the same order."""
    errors = _trace_errors(given)
    kept_in_memory = _shared(errors)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cascade.TraceErrors, "IN_MEMORY", in_memory)
        patch.setattr(trace_filter, "SLOTS", slots)
        assert _shared(errors) == kept_in_memory


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3)), max_size=80), st.sampled_from([1, 4, 64]))
def test_the_trace_filter_never_misses_a_trace_noted_with_two_signatures(
    notes: list[tuple[int, int]], slots: int
) -> None:
    seen = SharedTraceFilter(slots)
    for trace, signature in notes:
        seen.note(f"t{trace}", f"sig_{signature}")
    signatures: dict[str, set[str]] = {}
    for trace, signature in notes:
        signatures.setdefault(f"t{trace}", set()).add(f"sig_{signature}")
    assert all(seen.may_share(trace) for trace, noted in signatures.items() if len(noted) >= 2)
    alone = SharedTraceFilter(1)  # one slot: shared from the second signature on, whatever the trace
    alone.note("a", "sig_0")
    alone.note("b", "sig_0")
    assert not alone.may_share("c")
    alone.note("c", "sig_1")
    assert alone.may_share("a") and alone.may_share("d")


def _every_row(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows in the order they were written (by rowid where the table has one)."""
    tables = [name for (name,) in store.db.execute("select name from sqlite_master where type = 'table'")]
    rows: dict[str, list[tuple[object, ...]]] = {}
    for table in tables:
        without_rowid = (
            "without rowid"
            in store.db.execute("select lower(sql) from sqlite_master where name = ?", [table]).fetchone()[0]
        )
        order = "" if without_rowid else " order by rowid"
        rows[table] = store.db.execute(f"select * from {table}{order}").fetchall()
    return rows


@pytest.mark.parametrize("batch", [500, 3])  # all in one batch; a few at a time (memory stays flat)
def test_signatures_saved_together_leave_the_rows_saving_each_in_turn_leaves(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, batch: int
) -> None:
    import rounds_bot.store

    clean_env.setattr(rounds_bot.store, "SAVE_BATCH", batch)
    data = write_otlp(tmp_path / "telemetry.jsonl", 400, 60, NOW - timedelta(minutes=5))
    rounded = Store.memory()
    run_round(
        load_settings(),
        OtlpFileSource(data),
        DryRunTracker(tmp_path),
        rounded,
        now=NOW,
        reads_whole_history=True,
    )
    signatures = rounded.signatures()
    assert len(signatures) > 10 and any(s.grouping_state and s.grouping_state.similarity for s in signatures)
    assert any(s.grouping_state and s.grouping_state.templates for s in signatures)
    # one saved again later with another title and no state: its keys and vector go, its row stays first
    signatures.append(signatures[2].model_copy(update={"title": "renamed", "grouping_state": None}))
    one_by_one, together = Store.memory(), Store.memory()
    with one_by_one.transaction():
        for signature in signatures:
            one_by_one.save(signature)
    with together.transaction():
        together.save_many(signatures)
    assert _every_row(together) == _every_row(one_by_one)
    assert _every_row(together)["grouping_keys"] and _every_row(together)["grouping_vectors"]


def test_rows_written_together_outside_a_transaction_are_committed_as_one_statement_would_be(
    tmp_path: Path,
) -> None:
    store = Store.open(tmp_path / "signatures.db")
    store.add_occurrences("sig_1", {bucket_of(NOW): 3, bucket_of(NOW + timedelta(minutes=5)): 1})
    store.note_versions({("api", "1.2.0"): NOW})
    assert not store.db.conn.in_transaction
    other = Store.open(tmp_path / "signatures.db")
    assert other.occurrence_counts("sig_1") == {NOW: 3, NOW + timedelta(minutes=5): 1}
    assert other.versions_seen("api") == {"1.2.0": NOW}
    twice = [("web", "2.0.0", iso(NOW)), ("web", "2.0.0", iso(NOW))]  # the second breaks the primary key
    with pytest.raises(sqlite3.IntegrityError):
        write_many(
            store.db, "insert into versions_seen (service, version, first_seen) values (?, ?, ?)", twice
        )
    assert not store.db.conn.in_transaction and other.versions_seen("web") == {}  # the first rolled back

    def failing() -> Iterator[tuple[str, str, str]]:
        yield ("web", "2.1.0", iso(NOW))
        raise ValueError("a row that cannot be made")

    with pytest.raises(ValueError, match="cannot be made"):
        write_many(
            store.db, "insert into versions_seen (service, version, first_seen) values (?, ?, ?)", failing()
        )
    assert not store.db.conn.in_transaction and other.versions_seen("web") == {}  # nothing left open
    store.close()
    other.close()


@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # the tally
            st.sampled_from(["api", "worker"]),
            st.sampled_from([None, "", "1.0", "1.1"]),
            st.sampled_from([None, "", "prod", "staging"]),
            st.sampled_from([None, "", "g1", "g2"]),
        ),
        max_size=12,
    )
)
def test_tallies_of_few_group_ids_versions_or_environments_hold_what_plain_ones_do_and_share_none(
    added: list[tuple[int, str, str | None, str | None, str | None]],
) -> None:
    # a tally's sets are made as their first item is added (until then one shared empty set stands in)
    tallies = [Tally(assignment=an_assignment(f"sig_{n}")) for n in range(3)]
    plain = [PlainTally() for _ in range(3)]
    for n, (which, service, version, environment, group_id) in enumerate(added):
        event = ErrorEvent(
            event_id=f"e{n}",
            timestamp=NOW + timedelta(seconds=n),
            service=service,
            service_version=version,
            environment=environment,
            source_group_id=group_id,
            message=f"m{n % 3}",
        )
        tallies[which].add(event, 1, event.timestamp, event.timestamp)
        plain[which].add(event, 1, event.timestamp, event.timestamp)
    for tally, expected in zip(tallies, plain, strict=True):
        assert (tally.services, tally.versions, tally.environments, tally.group_ids) == (
            expected.services,
            expected.versions,
            expected.environments,
            expected.group_ids,
        )
        assert list(tally.samples) == expected.samples
        assert list(tally.timeline) == expected.timeline
