"""The grouping step gives the engine's counting pass the fields it reads of the events it counts, read from
the spill without the traces (`occurrences._message_facts`): the placements and the engine's states are
those the events themselves give, whatever the events' traces (absent, blank, there to read)."""

from __future__ import annotations

import random

import pytest
from test_grouping_corpus import EVENTS

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.placement import MessageFacts
from rounds_bot.models import ErrorEvent
from rounds_bot.round.occurrences import _message_facts
from rounds_bot.sources.spill import EventSpill, Picked

#: blank traces the counting pass tells apart from none, and one there to read
TRACES = [None, "", " ", "\n\t "]


def with_traces(rng: random.Random, events: list[ErrorEvent]) -> list[ErrorEvent]:
    """The events, some of those without a trace given a blank one (the others keep theirs)."""
    return [
        event.model_copy(update={"stacktrace": rng.choice(TRACES)})
        if not event.stacktrace and rng.random() < 0.3
        else event
        for event in events
    ]


@pytest.mark.parametrize("seed", range(4))
def test_the_counting_pass_given_the_facts_of_untraced_events_places_as_the_events_do(seed: int) -> None:
    rng = random.Random(seed)
    events = with_traces(rng, EVENTS + EVENTS)
    rng.shuffle(events)
    spill = EventSpill(events, in_memory=rng.choice([0, 50, len(events)]), chunk=rng.choice([7, 64]))
    wanted = sorted(rng.sample(range(len(events)), len(events) * 3 // 4)) if seed % 2 else range(len(events))
    picked = Picked(spill, wanted)
    chosen = [events[index] for index in wanted]
    facts = list(_message_facts(picked))
    untraced = [e for e in chosen if not e.stacktrace or e.stacktrace.isspace()]
    assert facts == [MessageFacts._make(getattr(e, name) for name in MessageFacts._fields) for e in untraced]
    by_events, by_facts = GroupingEngine(), GroupingEngine()
    assert list(by_events.place_each(chosen, {})) == list(by_facts.place_each(picked, {}, facts))
    states = {s: by_events.state(s) for s in by_events.signature_ids()}
    assert states == {s: by_facts.state(s) for s in by_facts.signature_ids()}
    assert len(untraced) < len(chosen) and any(fact.stacktrace is not None for fact in facts)
