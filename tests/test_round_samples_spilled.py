"""A round's samples past each signature's first wait in a temporary file (`SpilledBlobs`, `tally.Samples`
given a keeper): they are read back as the samples kept in memory are, whatever events are offered, and the
representative is the event given, its set of given fields shared."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.models import ContextRecord, ErrorEvent
from rounds_bot.round.spilled import SpilledBlobs
from rounds_bot.tally import SAMPLES_PER_SIGNATURE, Samples

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def _event(number: int, service: str, version: str | None, message: str, extra: int) -> ErrorEvent:
    values: dict[str, object] = {
        "event_id": f"{number:032x}",
        "timestamp": NOW + timedelta(seconds=number),
        "service": service,
        "message": message,
    }
    if version is not None:
        values["service_version"] = version
    if extra % 3 == 1:  # some given more fields than others: their sets of given fields differ
        values["attributes"] = {"k": "v", "n": extra}
        values["stacktrace"] = f"Traceback (most recent call last):\n  line {extra}\nValueError: x"
    if extra % 5 == 2:
        values["context"] = [ContextRecord(timestamp=NOW, severity="INFO", body=f"step {extra}")]
    return ErrorEvent.model_validate(values)


_offered = st.lists(
    st.tuples(
        st.sampled_from(["api", "worker", "web"]),
        st.sampled_from([None, "1.0", "2.0"]),
        st.sampled_from(["timeout", "not found", "", "dénied ✓"]),
        st.integers(0, 30),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(_offered)
def test_samples_kept_in_a_file_are_read_back_as_samples_kept_in_memory(
    offered: list[tuple[str, str | None, str, int]],
) -> None:
    events = [_event(n, *fields) for n, fields in enumerate(offered)]
    in_memory, in_file = Samples(), Samples(SpilledBlobs("test-samples-"))
    for one in events:
        in_memory.offer(one)
        in_file.offer(one)
    assert len(in_file) == len(in_memory) <= SAMPLES_PER_SIGNATURE
    assert list(in_file) == list(in_memory) and in_file == in_memory
    assert [s.model_fields_set for s in in_file] == [s.model_fields_set for s in in_memory]
    assert [s.model_dump_json() for s in in_file] == [s.model_dump_json() for s in in_memory]
    for index in range(-len(in_memory), len(in_memory)):
        assert in_file[index] == in_memory[index]
    assert in_file[1:] == in_memory[1:]
    if events:
        assert in_file[0] is events[0] and in_memory[0] is events[0]  # the representative, as given


def test_the_representatives_of_many_signatures_share_one_set_of_given_fields() -> None:
    kept = SpilledBlobs("test-samples-")
    representatives = []
    for number in range(20):
        samples = Samples(kept)
        samples.offer(_event(number, "api", "1.0", "timeout", 0))
        representatives.append(samples[0])
    assert len({id(event.model_fields_set) for event in representatives}) == 1
    assert representatives[0].model_fields_set == {
        "event_id",
        "timestamp",
        "service",
        "message",
        "service_version",
    }


def test_many_signatures_share_one_file_and_each_reads_its_own_samples() -> None:
    kept = SpilledBlobs("test-samples-")
    rng = random.Random(7)
    signatures = [Samples(kept) for _ in range(50)]
    given: list[list[ErrorEvent]] = [[] for _ in signatures]
    for number in range(2_000):  # offered interleaved, as a round counts its signatures' occurrences
        which = rng.randrange(len(signatures))
        one = _event(
            number, rng.choice(["api", "web"]), rng.choice(["1", "2"]), f"m{rng.randrange(4)}", number
        )
        signatures[which].offer(one)
        kind = (one.service, one.service_version, one.message)
        if len(given[which]) < SAMPLES_PER_SIGNATURE and all(
            (s.service, s.service_version, s.message) != kind for s in given[which]
        ):
            given[which].append(one)
        if number % 97 == 0:  # read while others are still being kept
            assert list(signatures[which]) == given[which]
    assert [list(samples) for samples in signatures] == given
    assert len(kept) == sum(max(len(events) - 1, 0) for events in given)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=30), st.randoms(use_true_random=False))
def test_a_blob_put_is_read_back_by_its_number_in_any_order(blobs: list[bytes], rng: random.Random) -> None:
    kept = SpilledBlobs("test-blobs-")
    numbers: list[int] = []
    for blob in blobs:
        numbers.append(kept.put(blob))
        probe = rng.randrange(len(numbers))  # reads between writes: a write still goes after the last blob
        assert kept.get(numbers[probe]) == blobs[probe]
    assert numbers == list(range(len(blobs))) and len(kept) == len(blobs)
    order = list(range(len(blobs)))
    rng.shuffle(order)
    assert [kept.get(numbers[i]) for i in order] == [blobs[i] for i in order]
    kept.close()


def test_a_number_never_given_is_refused() -> None:
    kept = SpilledBlobs("test-blobs-")
    kept.put(b"one")
    for wrong in (-1, 1):
        try:
            kept.get(wrong)
        except IndexError:
            continue
        raise AssertionError(f"blob {wrong} was read")
