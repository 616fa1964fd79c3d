"""A chunk of the event spill, written as columns and read back, gives each event exactly as it was (as
pickling the event itself gives it back): every field's value and type, in the model's order, with the
fields it was given; its keys (id, time, trace id) read alone are the event's. Odd events too: fields left
at None, text beyond UTF-8 (lone surrogates, NUL), huge traces, attributes of every type, times in other
zones or without one, neighbouring records, events changed after they were made."""

from __future__ import annotations

import pickle
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import TypeAdapter

from rounds_bot.models import ContextRecord, ErrorEvent
from rounds_bot.sources import spill_chunk as chunk
from rounds_bot.sources.spill import EventSpill, Picked, fields_in

MOMENT = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)


def odd_events() -> list[ErrorEvent]:
    parsed = TypeAdapter(datetime).validate_python("2026-03-01T12:30:15Z")  # pydantic's own UTC zone
    return [
        ErrorEvent(event_id="a" * 32, timestamp=MOMENT),
        ErrorEvent(
            event_id="b" * 32,
            timestamp=MOMENT + timedelta(microseconds=1),
            service="caf\u00e9",
            error_type="Ошибка",
            message="lone \ud800 surrogate \u0000 and \U0001f600",
            stacktrace='Traceback (most recent call last):\n  File "x.py", line 1\n' * 20_000,
            error_code="E-1",
            trace_id="0af7651916cd43dd8448eb211c80319c",
            span_id="b7ad6b7169203331",
            parent_span_id="00f067aa0ba902b7",
            span_kind="server",
            service_version="1.0",
            environment="production",
            attributes={"s": "x", "i": 2**70, "n": -1, "f": float("nan"), "inf": float("-inf"), "b": True},
        ),
        ErrorEvent(event_id="c", timestamp=datetime(2026, 3, 1, 7, tzinfo=timezone(timedelta(hours=-5)))),
        ErrorEvent(event_id="d", timestamp=parsed, kind="log", severity="FATAL", fatal=True, count=7),
        ErrorEvent(event_id="e", timestamp=datetime(2026, 3, 1, 12), source_group_id="g", source_url="u"),
        ErrorEvent(event_id="f", timestamp=MOMENT.replace(fold=1), kind="span_error", message="m"),
        ErrorEvent(
            event_id="g",
            timestamp=MOMENT,
            kind="log",
            context=[ContextRecord(timestamp=MOMENT, severity="INFO", body="before \ud83d")],
        ),
        ErrorEvent(event_id="h", timestamp=MOMENT, service="caf\u00e9").model_copy(
            update={"message": "changed", "service": "other"}
        ),
        ErrorEvent.of_typed(event_id="i", timestamp=MOMENT, error_type="KeyError", attributes={"k": 1.5}),
    ]


def exactly(event: ErrorEvent) -> list[tuple[str, type, str]]:
    """Each field, in order, with its value's type and repr (so NaN equals itself, and 1 is not 1.0)."""
    return [(name, type(value), repr(value)) for name, value in event.__dict__.items()] + [
        ("fields set", set, repr(sorted(event.model_fields_set))),
        ("zone", type(event.timestamp.tzinfo), repr((event.timestamp.tzinfo, event.timestamp.fold))),
    ]


@pytest.mark.parametrize("events", [odd_events(), odd_events()[:1], odd_events()[::-1] * 3])
def test_a_chunk_read_back_is_its_events_as_pickling_gives_them_back(events: list[ErrorEvent]) -> None:
    keys, rest = chunk.written(events)
    read = chunk.read_events(keys, rest)
    pickled = [pickle.loads(pickle.dumps(event)) for event in events]
    assert [exactly(event) for event in read] == [exactly(event) for event in pickled]
    assert [exactly(event) for event in read] == [exactly(event) for event in events]
    assert chunk.read_keys(keys) == [chunk.key_of(event) for event in events]


def test_events_read_back_are_new_objects_that_share_no_mutable_value() -> None:
    events = odd_events()
    read = chunk.read_events(*chunk.written(events))
    for before, after in zip(events, read, strict=True):
        assert after is not before and after.attributes is not before.attributes
        assert after.model_fields_set is not before.model_fields_set
    assert len({id(event.model_fields_set) for event in read}) == len(read)


def test_a_spill_on_disk_gives_back_odd_events_in_order_by_pass_and_by_index() -> None:
    events = [event for event in odd_events() if event.timestamp.tzinfo is not None] * 3  # times compared
    spill = EventSpill(events, in_memory=2, chunk=4)
    assert spill.bytes_on_disk > 0
    assert [exactly(event) for event in spill] == [exactly(event) for event in events]
    assert [exactly(spill[index]) for index in range(len(events))] == [exactly(event) for event in events]
    assert list(spill.keys()) == [chunk.key_of(event) for event in events]


def test_a_few_fields_of_each_event_read_alone_are_the_events_own() -> None:
    events = [event for event in odd_events() if event.timestamp.tzinfo is not None] * 3
    names = ("message", "timestamp", "attributes", "stacktrace", "service", "context")
    spill = EventSpill(events, in_memory=2, chunk=4)
    changed = events[5].model_copy(update={"message": "[REDACTED:private_key]"})
    spill.replace(5, changed)
    expected = [
        tuple(getattr(event, name) for name in names) for event in [*events[:5], changed, *events[6:]]
    ]
    assert spill.bytes_on_disk > 0 and repr(list(spill.fields(*names))) == repr(expected)  # NaN too
    assert repr(list(fields_in(list(spill), *names))) == repr(expected)
    picked = Picked(spill, [1, 5, 8, len(events) - 1])
    assert repr(list(fields_in(picked, *names))) == repr([expected[i] for i in (1, 5, 8, len(events) - 1)])
    keys, rest = chunk.written(events)
    assert chunk.read_fields(keys, rest, ("event_id",)) == [(event.event_id,) for event in events]
    with pytest.raises(ValueError, match="no field mesage"):
        list(spill.fields("mesage"))


@pytest.mark.parametrize(
    "indexes",
    [
        lambda size: range(size),  # every event: the pass over the spill itself
        lambda size: range(1, size),
        lambda size: range(size - 1),
        lambda size: [0, size - 1],
        lambda size: [size - 1],
        lambda size: range(0, size, 2),
    ],
)
def test_the_events_picked_are_read_as_picking_them_one_by_one_gives(indexes: object) -> None:
    events = [event for event in odd_events() if event.timestamp.tzinfo is not None] * 3
    spill = EventSpill(events, in_memory=2, chunk=4)
    wanted = list(indexes(len(events)))  # type: ignore[operator]
    picked = Picked(spill, wanted)
    names = ("message", "timestamp", "attributes", "service")
    assert repr(list(picked)) == repr([events[index] for index in wanted])  # NaN too
    assert repr(list(picked.fields(*names))) == repr(
        [tuple(getattr(events[i], n) for n in names) for i in wanted]
    )
    spill.append(events[0])  # the spill grows after the picking: the events picked are the same
    assert repr(list(picked)) == repr([events[index] for index in wanted])
    assert len(list(picked.fields(*names))) == len(wanted)


@pytest.mark.parametrize("seed", range(6))
def test_a_spill_with_events_replaced_is_read_as_a_list_with_them_replaced(seed: int) -> None:
    rng = random.Random(seed)
    events = [event for event in odd_events() if event.timestamp.tzinfo is not None] * 4
    spill = EventSpill(events, in_memory=rng.choice([0, 3]), chunk=rng.choice([1, 4, 5]))
    expected = list(events)
    names = ("event_id", "message", "attributes")
    for _ in range(rng.randrange(4)):  # none at all too: the pass without a look-up per event
        index = rng.randrange(len(events))
        expected[index] = events[index].model_copy(update={"message": f"changed {index}"})
        spill.replace(index, expected[index])
    assert repr(list(spill)) == repr(expected)  # NaN too
    assert list(spill.keys()) == [chunk.key_of(event) for event in expected]
    assert repr(list(spill.fields(*names))) == repr([chunk.fields_of(event, names) for event in expected])
    # a pass, and another in step with it (as the grouping step reads its events): a replacement made
    # while they read its chunk is read by both, as one made before they began
    first, second = iter(spill), iter(Picked(spill, range(len(spill))))
    for index in range(len(events)):
        if rng.random() < 0.3 and index + 1 < len(events):
            ahead = index + rng.randrange(1, min(3, len(events) - index))
            expected[ahead] = events[ahead].model_copy(update={"message": f"now {ahead}"})
            spill.replace(ahead, expected[ahead])
        assert repr((next(first), next(second))) == repr((expected[index], expected[index]))
    assert repr(list(spill)) == repr(expected)
    spill.close()


def traced_or_blank_events(rng: random.Random, count: int) -> list[ErrorEvent]:
    """Events whose traces are absent, empty, white space of every kind, or there to read."""
    traces = [None, "", " ", "\n", " \t\r\n ", "\u2003", "x", " x ", "Traceback (most recent call last):\n x"]
    return [
        ErrorEvent(
            event_id=f"{index:032x}",
            timestamp=MOMENT + timedelta(seconds=index),
            message=f"m{index % 3}",
            stacktrace=rng.choice(traces),
            attributes={"i": index} if rng.random() < 0.3 else {},
        )
        for index in range(count)
    ]


def blank_of(event: ErrorEvent) -> str | bool | None:
    trace = event.stacktrace
    return False if trace and not trace.isspace() else trace


@pytest.mark.parametrize("seed", range(6))
def test_whether_a_trace_is_there_to_read_is_read_without_the_traces_as_the_events_say(seed: int) -> None:
    rng = random.Random(seed)
    events = traced_or_blank_events(rng, rng.randrange(1, 40)) + odd_events()
    rng.shuffle(events)
    events = [event for event in events if event.timestamp.tzinfo is not None]
    names = ("message", chunk.BLANK_TRACE, "attributes")
    expected = [(event.message, blank_of(event), event.attributes) for event in events]
    keys, rest = chunk.written(events)
    assert repr(chunk.read_fields(keys, rest, names)) == repr(expected)  # NaN too
    assert repr([chunk.fields_of(event, names) for event in events]) == repr(expected)
    assert chunk.read_fields(keys, rest, ("stacktrace", chunk.BLANK_TRACE)) == [
        (event.stacktrace, blank_of(event)) for event in events
    ]
    spill = EventSpill(events, in_memory=rng.choice([0, 3]), chunk=rng.choice([1, 4, 7]))
    index = rng.randrange(len(events))
    changed = events[index].model_copy(update={"stacktrace": rng.choice([None, " ", "now one"])})
    spill.replace(index, changed)
    expected[index] = (changed.message, blank_of(changed), changed.attributes)
    assert repr(list(spill.fields(*names))) == repr(expected)
    wanted = sorted(rng.sample(range(len(events)), rng.randrange(1, len(events) + 1)))
    assert repr(list(Picked(spill, wanted).fields(*names))) == repr([expected[i] for i in wanted])
    assert [exactly(event) for event in spill] == [
        exactly(event) for event in [*events[:index], changed, *events[index + 1 :]]
    ]
