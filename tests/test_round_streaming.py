"""A round's memory does not grow with its records: the events it reads are kept on disk past a few thousand
(`EventSpill`), what a tally keeps of each occurrence is a few bytes (`Timeline`), the ids to remember and
the errors a cascade needs go to a temporary file (`Counted`) or database (`TraceErrors`), and a round that
keeps them so gives the same report, database and issues as one that keeps everything in memory."""

from __future__ import annotations

import re
import sys
import tracemalloc
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from signature_samples import an_assignment

from rounds_bot.clock import bucket_of
from rounds_bot.models import ContextRecord, ErrorEvent
from rounds_bot.redact import Redactor, redact_poll
from rounds_bot.round import cascade
from rounds_bot.round.cascade import correlate_traces
from rounds_bot.round.counted import Counted
from rounds_bot.round.occurrences import _not_counted
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources import spill
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.spill import EventSpill, Picked
from rounds_bot.store import Store
from rounds_bot.tally import SAMPLES_PER_SIGNATURE, Tally
from rounds_bot.tracker.dryrun import DryRunTracker
from rounds_bot.triage import Occurrence
from tests.test_issue_bodies import cascade_plans

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from scale_data import write_otlp

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def event(number: int, **fields: object) -> ErrorEvent:
    values: dict[str, object] = {
        "event_id": f"{number:032x}",
        "timestamp": NOW + timedelta(seconds=number % 7),
        "service": "api",
        "kind": "log",
        "message": f"order {number} not found",
        **fields,
    }
    return ErrorEvent.model_validate(values)


def test_a_spill_gives_back_what_it_was_given_in_order_however_often_it_is_read() -> None:
    events = [event(n) for n in range(23)]
    events[6] = event(6, context=[ContextRecord(timestamp=NOW, severity="INFO", body="retrying")], fatal=True)
    events[7] = event(7, attributes={"a": 1, "b": 1.0, "c": True, "d": "x"}, trace_id="ab" * 16)
    kept = EventSpill(events, in_memory=4, chunk=5)
    assert len(kept) == 23
    assert list(kept) == events and list(kept) == events  # read twice
    assert kept == events and kept[0] == events[0] and kept[-1] == events[-1] and kept[7:9] == events[7:9]
    assert kept.newest == max(e.timestamp for e in events)
    # read back from disk as they were made: the same fields given, the same values, the same types
    assert [e.model_fields_set for e in kept] == [e.model_fields_set for e in events]
    given = [e.model_dump(exclude_unset=True) for e in events]
    assert [e.model_dump(exclude_unset=True) for e in kept] == given
    assert all(type(e) is ErrorEvent and e.model_extra is None for e in kept)
    changed = events[3].model_copy(update={"message": "hidden"})
    kept.replace(3, changed)
    kept.replace(22, changed)  # one not yet written
    assert kept[3] == changed and list(kept)[3] == changed and list(kept)[22] == changed
    renamed = events[4].model_copy(update={"event_id": "f" * 32, "trace_id": "t"})
    kept.replace(4, renamed)
    assert list(kept.keys()) == [(e.event_id, e.timestamp, e.trace_id) for e in kept]
    assert list(kept.keys())[4] == ("f" * 32, events[4].timestamp, "t")
    with pytest.raises(IndexError):
        kept[23]
    kept.close()


def test_events_picked_from_a_spill_are_read_in_its_order_without_a_copy() -> None:
    events = [event(n) for n in range(23)]
    kept = EventSpill(events, in_memory=4, chunk=5)
    wanted = [0, 3, 4, 5, 11, 17, 22]
    picked = Picked(kept)
    for index in wanted:
        picked.append(index)
    assert len(picked) == len(wanted) and kept._written == 20  # nothing written again
    chosen = [events[index] for index in wanted]
    assert list(picked) == chosen and list(picked) == chosen  # read twice
    assert (
        picked == chosen
        and picked[1] == events[3]
        and picked[-1] == events[22]
        and picked[2:4] == chosen[2:4]
    )
    assert list(zip(picked, picked, strict=True)) == list(
        zip(chosen, chosen, strict=True)
    )  # two passes at once
    assert list(Picked(kept)) == [] and list(Picked(events, [2, 9])) == [events[2], events[9]]
    with pytest.raises(ValueError, match="order"):
        picked.append(22)
    with pytest.raises(IndexError):
        picked[len(wanted)]


def test_the_events_not_counted_are_the_same_when_the_poll_is_on_disk() -> None:
    store = Store.memory()
    store.mark_seen([(f"{n:032x}", "sig_1", NOW) for n in (2, 5)])
    window = Window(start=NOW + timedelta(seconds=1), end=NOW + timedelta(hours=1))
    events = [event(n, trace_id=f"{n % 3:032x}" if n % 2 else None) for n in range(14)]
    events += [events[4], events[7]]  # read twice
    found = [
        _not_counted(store, window, PollResult(events=polled, already_counted=3))
        for polled in (events, EventSpill(events, in_memory=2, chunk=3))
    ]
    (in_memory, counted, others), (on_disk, counted_on_disk, others_on_disk) = (
        (picked.to_group, picked.already_counted, picked.others) for picked in found
    )
    assert list(on_disk) == list(in_memory) and counted_on_disk == counted and others_on_disk == others
    assert [list(picked.enclosed) for picked in found] == [[], []]
    assert [e.event_id for e in in_memory] == [
        f"{n:032x}" for n in range(14) if n not in (2, 5) and (NOW + timedelta(seconds=n % 7)) >= window.start
    ]
    assert counted == 3 + 3 + 2 + 1  # the source's, before the window (7 twice), seen before, read twice
    assert [e.event_id for e in others] == [f"{n:032x}" for n in (7, 7)]


def test_a_split_secret_is_hidden_the_same_when_the_events_are_on_disk() -> None:
    lines = [
        "key follows",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
        "-----END RSA PRIVATE KEY-----",
        "the db password was",
        "Zq8vR2mT4xLp",
        "all done",
    ]
    events = [event(n, message=text, timestamp=NOW + timedelta(seconds=n)) for n, text in enumerate(lines)]
    first, second = Redactor(), Redactor()
    in_memory = redact_poll(first, PollResult(events=events))
    on_disk = redact_poll(second, PollResult(events=EventSpill(events, in_memory=1, chunk=2)))
    assert list(on_disk.events) == list(in_memory.events)
    assert [e.message for e in on_disk.events][2:7] == [
        "[REDACTED:private_key]",
        "[REDACTED:private_key]",
        "[REDACTED:private_key]",
        "the db password was",
        "[REDACTED:key_value_secret]",
    ]
    assert second.counts == first.counts and list(second.counts) == list(first.counts)


def _empty_tally() -> Tally:
    """A tally of one new signature, with nothing counted yet."""
    return Tally(assignment=an_assignment())


def test_a_tally_keeps_each_occurrence_s_moment_compactly_and_gives_it_back_as_it_was_given() -> None:
    tally = _empty_tally()
    elsewhere = timezone(timedelta(hours=2))
    given = [
        ("0123456789abcdef0123456789abcdef", NOW, False),
        ("sha256:0123456789abcdef0123456789abcdef", NOW + timedelta(microseconds=1), True),
        ("0123456789ABCDEF0123456789ABCDEF", datetime(2026, 11, 1, 14, 0, tzinfo=elsewhere), False),
    ]
    for event_id, moment, fatal in given:
        one = event(0, event_id=event_id, timestamp=moment, fatal=fatal)
        tally.add(one, 2, moment, moment)
    assert list(tally.timeline) == [Occurrence(timestamp=m, count=2, fatal=f) for _, m, f in given]
    assert tally.timeline[2].timestamp.tzinfo == elsewhere and tally.timeline[-1] == tally.timeline[2]
    assert len(tally.timeline) == 3
    mixed = _empty_tally()  # records of one occurrence each, then one that stands for three
    for count in (1, 1, 3, 1):
        mixed.add(event(0), count, NOW, NOW)
    assert [o.count for o in mixed.timeline] == [1, 1, 3, 1] and mixed.count == 6


def test_a_timeline_entry_is_the_occurrence_model_construct_makes_of_it() -> None:
    tally = _empty_tally()
    elsewhere = datetime(2026, 11, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    for moment, count, fatal in ((NOW, 1, False), (elsewhere, 3, True)):
        tally.add(event(0, fatal=fatal), count, moment, moment)
    made = [
        Occurrence.model_construct(timestamp=NOW, count=1, fatal=False),
        Occurrence.model_construct(timestamp=elsewhere, count=3, fatal=True),
    ]
    for read in (list(tally.timeline), [tally.timeline[0], tally.timeline[1]]):
        assert read == made
        for entry, model in zip(read, made, strict=True):
            assert type(entry) is Occurrence
            assert list(entry.__dict__.items()) == list(model.__dict__.items())
            assert entry.model_fields_set == model.model_fields_set
            assert (entry.model_extra, entry.__pydantic_private__) == (model.model_extra, None)
            assert entry.model_dump() == model.model_dump()
    assert read[0].model_fields_set is not read[1].model_fields_set  # each its own, as each model's is


def _seen_rows(store: Store) -> list[tuple[object, ...]]:
    return sorted(store.db.execute("select event_id, seen_at from seen_events").fetchall(), key=repr)


def test_the_occurrences_counted_are_remembered_as_a_list_of_them_was_wherever_they_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    elsewhere = timezone(timedelta(hours=2))
    given = [(f"{n:032x}", f"sig_{n % 3}", NOW + timedelta(microseconds=7 * n)) for n in range(40)]
    given += [
        ("sha256:0123456789abcdef", "sig_0", NOW),
        ("0123456789ABCDEF0123456789ABCDEF", "sig_1", datetime(2026, 11, 1, 14, 0, 0, 5, tzinfo=elsewhere)),
        ("span-7", "sig_2", datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)),
    ]
    as_list = Store.memory()
    as_list.mark_seen(given)  # what the round wrote when each tally kept its occurrences in a list
    kept: list[Counted] = []
    for in_memory in (Counted.IN_MEMORY, 7):  # all in memory; most in the temporary database
        monkeypatch.setattr(Counted, "IN_MEMORY", in_memory)
        counted = Counted()
        for event_id, signature_id, moment in given:
            counted.append(event_id, signature_id, moment)
        kept.append(counted)
        store = Store.memory()
        store.mark_seen(counted)
        assert _seen_rows(store) == _seen_rows(as_list) and len(_seen_rows(store)) == len(given)
        assert list(counted) == [(e, s, m.astimezone(UTC)) for e, s, m in given] == list(counted)
        assert len(counted) == len(given)
        assert counted.signature_of() == {event_id: signature_id for event_id, signature_id, _ in given}
    assert list(kept[0]) == list(kept[1])


def test_a_round_keeps_what_it_counted_in_memory_that_does_not_grow_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Counted, "IN_MEMORY", 1_000)
    counted = Counted()
    tracemalloc.start()
    try:
        for n in range(30_000):
            counted.append(f"{n:032x}", "sig_1", NOW)
            if n == 2_000:
                early = tracemalloc.get_traced_memory()[0]
        late = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert late - early < 200_000  # 28,000 occurrences more: not a few bytes each
    assert len(counted) == 30_000 and next(iter(counted)) == (f"{0:032x}", "sig_1", NOW)
    counted.close()


def test_a_tally_keeps_the_samples_a_list_of_varied_events_kept_and_gives_them_back_as_given() -> None:
    offered = [
        event(n, service=f"svc{n % 3}", service_version=["1.0", None][n % 2], message=f"failed {n % 4}")
        for n in range(24)
    ]
    offered.insert(3, event(99, service="svc0", message="set here", attributes={"k": "v"}))
    expected: list[ErrorEvent] = []  # what a plain list of samples kept: room left and none like it
    for one in offered:
        kind = (one.service, one.service_version, one.message)
        if len(expected) < SAMPLES_PER_SIGNATURE and all(
            (s.service, s.service_version, s.message) != kind for s in expected
        ):
            expected.append(one)
    tally, partial = _empty_tally(), _empty_tally()
    for one in offered:
        tally.add(one, 1, one.timestamp, one.timestamp)
    for one in offered[:3]:
        partial.add(one, 1, one.timestamp, one.timestamp)
    assert len(tally.samples) == SAMPLES_PER_SIGNATURE and tally.samples == expected
    assert list(partial.samples) == expected[:3] and partial.samples[1:] == expected[1:3]
    assert tally.samples[0] is offered[0]  # the representative, as it was given
    assert [s.model_fields_set for s in tally.samples] == [s.model_fields_set for s in expected]
    assert [s.event_id for s in tally.samples[-2:]] == [s.event_id for s in expected[-2:]]
    assert list(_empty_tally().samples) == [] and _empty_tally().samples == []


def test_a_tally_counts_each_occurrence_in_the_clock_s_bucket_of_its_moment() -> None:
    tally = _empty_tally()
    moments = [NOW + timedelta(seconds=97 * n) for n in range(40)]
    moments += [datetime(1969, 12, 31, 23, 58, tzinfo=UTC), NOW.astimezone(timezone(timedelta(hours=-5)))]
    for moment in moments:
        tally.add(event(0, timestamp=moment), 2, moment, moment)
    expected: dict[str, int] = {}
    for moment in moments:
        expected[bucket_of(moment)] = expected.get(bucket_of(moment), 0) + 2
    assert tally.buckets == expected and len(expected) > 10


def test_cascades_are_the_same_when_their_errors_are_kept_in_a_temporary_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cause, effect, events, counted_in = cascade_plans()
    after = {cause.signature_id: cause.signature, effect.signature_id: effect.signature}
    in_memory = correlate_traces(events, counted_in, after)
    monkeypatch.setattr(cascade.TraceErrors, "IN_MEMORY", 1)
    assert correlate_traces(events, counted_in, after) == in_memory
    assert in_memory[effect.signature_id].caused_by == {cause.signature_id: 3}


def a_round(folder: Path, data: Path) -> tuple[dict[str, object], list[tuple[str, int]], dict[str, str]]:
    """The round's report (less its random run id), each signature's count and each issue, as filed."""
    store = Store.memory()
    report = run_round(
        load_settings(), OtlpFileSource(data), DryRunTracker(folder), store, now=NOW, reads_whole_history=True
    )
    run_id = re.compile(re.escape(report.run_id))
    counts = sorted((s.id, s.total_count) for s in store.signatures())
    issues = {path.name: run_id.sub("", path.read_text()) for path in sorted(folder.glob("*.md"))}
    return report.model_dump(exclude={"run_id"}), counts, issues


def test_a_round_whose_events_are_on_disk_gives_the_same_report_database_and_issues(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 400, 60, NOW - timedelta(minutes=5))
    (tmp_path / "memory").mkdir()
    (tmp_path / "disk").mkdir()
    in_memory = a_round(tmp_path / "memory", data)
    monkeypatch.setattr(spill, "IN_MEMORY", 10)
    monkeypatch.setattr(spill, "CHUNK", 7)
    monkeypatch.setattr(cascade.TraceErrors, "IN_MEMORY", 5)
    monkeypatch.setattr(Counted, "IN_MEMORY", 5)
    on_disk = a_round(tmp_path / "disk", data)
    assert on_disk == in_memory
    assert in_memory[0]["events_read"] == 400 and in_memory[2]
