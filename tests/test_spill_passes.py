"""A pass over an event spill (its events, their keys, a few fields, some of them picked) gives what was
appended, or picked, before it began, as a pass over a list copied then would: however many events are
appended while it runs, whether they stay in memory or fill a chunk written to disk (which then holds some
events the pass must give and some it must not), and with other passes running alongside."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.spill import EventSpill, Picked
from rounds_bot.sources.spill_chunk import fields_of, key_of

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
NAMES = ("message", "service", "event_id")
POOL = [
    ErrorEvent(
        event_id=f"{n:032x}",
        timestamp=NOW + timedelta(seconds=n % 7),
        service=("api", "web")[n % 2],
        message=f"order {n} not found",
        trace_id=None if n % 3 else f"{n:032x}",
    )
    for n in range(160)
]
KINDS = ("events", "keys", "fields", "picked", "picked fields")


@dataclass
class Pass:
    """A pass begun, what it must give, and how far it has been read."""

    items: Iterator[Any]
    expected: list[Any]
    read: int = 0

    def step(self, count: int) -> None:
        for _ in range(min(count, len(self.expected) - self.read)):
            assert next(self.items) == self.expected[self.read], f"item {self.read}"
            self.read += 1

    def finish(self) -> None:
        assert list(self.items) == self.expected[self.read :]


def begun(kind: str, spill: EventSpill, picked: Picked, given: list[ErrorEvent], chosen: list[int]) -> Pass:
    """A pass of `kind` begun now, with what a list of the events given so far says it must give."""
    if kind == "events":
        return Pass(iter(spill), list(given))
    if kind == "keys":
        return Pass(spill.keys(), [key_of(event) for event in given])
    if kind == "fields":
        return Pass(spill.fields(*NAMES), [fields_of(event, NAMES) for event in given])
    if kind == "picked":
        return Pass(iter(picked), [given[index] for index in chosen])
    return Pass(picked.fields(*NAMES), [fields_of(given[index], NAMES) for index in chosen])


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 12)),
        st.tuples(st.just("pick"), st.integers(0, 3)),
        st.tuples(st.just("begin"), st.sampled_from(KINDS)),
        st.tuples(st.just("read"), st.integers(0, 20)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    in_memory=st.sampled_from([0, 1, 4, 10]),
    chunk=st.sampled_from([1, 2, 3, 5, 8]),
    first=st.integers(0, 30),
    steps=STEPS,
    which=st.randoms(use_true_random=False),
)
def test_a_pass_gives_what_was_appended_before_it_began_whatever_is_appended_while_it_runs(
    in_memory: int, chunk: int, first: int, steps: list[tuple[str, Any]], which: Any
) -> None:
    given_events = POOL[:first]
    spill = EventSpill(given_events, in_memory=in_memory, chunk=chunk)
    given_events = list(given_events)
    picked, chosen = Picked(spill), list[int]()
    passes: list[Pass] = []
    for action, value in steps:
        if action == "append":
            for event in POOL[len(given_events) : len(given_events) + value]:
                spill.append(event)
                given_events.append(event)
        elif action == "pick":  # the next event after the last picked, skipping `value` of them
            index = (chosen[-1] + 1 if chosen else 0) + value
            if index < len(given_events):
                picked.append(index)
                chosen.append(index)
        elif action == "begin":
            passes.append(begun(value, spill, picked, given_events, chosen))
        elif passes:
            which.choice(passes).step(value)
    for running in passes:
        running.finish()
    # and a pass begun after all of it gives every event
    assert list(spill) == given_events and len(spill) == len(given_events)
    assert list(picked) == [given_events[index] for index in chosen]
    spill.close()


def test_a_pass_begun_before_a_chunk_is_written_gives_the_events_that_moved_into_it_and_no_more() -> None:
    spill = EventSpill(POOL[:5], in_memory=0, chunk=4)  # one chunk written, one event in memory
    events, keys, values = iter(spill), spill.keys(), spill.fields(*NAMES)
    assert next(events) == POOL[0] and next(keys) == key_of(POOL[0])
    for event in POOL[5:12]:  # the event in memory, with three appended, fills a chunk; then four more
        spill.append(event)
    assert list(events) == POOL[1:5]
    assert list(keys) == [key_of(event) for event in POOL[1:5]]
    assert list(values) == [fields_of(event, NAMES) for event in POOL[:5]]
    assert list(spill) == POOL[:12]
    spill.close()


def test_an_event_replaced_in_the_chunk_a_pass_reads_is_read_even_when_a_chunk_is_written_meanwhile() -> None:
    spill = EventSpill(POOL[:8], in_memory=0, chunk=4)
    events = iter(spill)
    assert next(events) == POOL[0]
    for event in POOL[8:12]:  # a chunk written while the pass reads the first one
        spill.append(event)
    changed = POOL[2].model_copy(update={"message": "hidden"})
    spill.replace(2, changed)
    assert list(events) == [POOL[1], changed, *POOL[3:8]]
    spill.close()
