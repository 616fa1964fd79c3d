"""What an event spill keeps in memory is bounded by what its events take, not only by their count: past
`IN_MEMORY_BYTES` (as `held_bytes` reckons an event) it writes them to its file, and whatever its budget a
spill reads back exactly what a list of the same events gives."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.models import ContextRecord, ErrorEvent
from rounds_bot.sources import spill
from rounds_bot.sources.spill import EVENT_BYTES, PART_BYTES, EventSpill, held_bytes
from rounds_bot.sources.spill_chunk import fields_of, key_of

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def random_event(rng: random.Random, number: int) -> ErrorEvent:
    context = [
        ContextRecord(timestamp=NOW, severity="INFO", body="b" * rng.randrange(0, 300))
        for _ in range(rng.choice([0, 0, 1, 3]))
    ]
    return ErrorEvent(
        event_id=f"{number:032x}",
        timestamp=NOW + timedelta(seconds=rng.randrange(0, 600)),
        service=rng.choice(["api", "web", "caf\u00e9"]),
        kind=rng.choice(["exception", "log", "span_error"]),
        message=f"order {number} " + "x" * rng.randrange(0, 2_000),
        stacktrace=rng.choice([None, "  at frame\n" * rng.randrange(1, 3_000)]),
        trace_id=rng.choice([None, f"{rng.getrandbits(128):032x}"]),
        attributes={
            f"k{n}": rng.choice(["v" * rng.randrange(0, 500), n, 1.5, True])
            for n in range(rng.randrange(0, 12))
        },
        context=context,
    )


def test_an_events_reckoned_size_counts_every_text_it_holds() -> None:
    bare = ErrorEvent(event_id="a", timestamp=NOW, message="")
    assert held_bytes(bare) == EVENT_BYTES
    full = bare.model_copy(
        update={
            "message": "m" * 10,
            "stacktrace": "s" * 100,
            "attributes": {"key": "v" * 1_000, "n": 7},
            "context": [ContextRecord(timestamp=NOW, body="c" * 50)],
        }
    )
    texts = 10 + 100 + len("key") + 1_000 + len("n") + 50
    assert held_bytes(full) == EVENT_BYTES + texts + 3 * PART_BYTES


def test_a_spill_writes_its_events_once_they_take_their_budget_however_few_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spill, "IN_MEMORY_BYTES", 10 * EVENT_BYTES + 300_000)
    long_traces = [
        ErrorEvent(event_id=f"{n:032x}", timestamp=NOW, stacktrace="  at frame\n" * 10_000) for n in range(5)
    ]
    events = EventSpill(long_traces, chunk=2)  # far fewer than `IN_MEMORY` events
    assert events.bytes_on_disk > 0
    assert list(events) == long_traces
    small = EventSpill(long_traces[:2], chunk=2)
    assert small.bytes_on_disk == 0 and list(small) == long_traces[:2]


@pytest.mark.parametrize("seed", range(6))
def test_a_spill_reads_back_what_a_list_gives_whatever_its_budget(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    given = [random_event(rng, number) for number in range(rng.randrange(1, 120))]
    budget = rng.choice([0, 1, EVENT_BYTES * 5, sum(map(held_bytes, given)), spill.IN_MEMORY_BYTES])
    monkeypatch.setattr(spill, "IN_MEMORY_BYTES", budget)
    events = EventSpill(
        in_memory=rng.choice([0, 10, len(given), spill.IN_MEMORY]), chunk=rng.choice([1, 7, 500])
    )
    for event in given:
        events.append(event)
    names = ("message", "stacktrace", "attributes", "context")
    assert list(events) == given
    assert list(events.keys()) == [key_of(event) for event in given]
    assert list(events.fields(*names)) == [fields_of(event, names) for event in given]
    index = rng.randrange(len(given))
    assert events[index] == given[index]
    changed = given[index].model_copy(update={"message": "changed"})
    events.replace(index, changed)
    assert list(events) == [*given[:index], changed, *given[index + 1 :]]
