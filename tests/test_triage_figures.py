"""Triage reads a round's compact timeline (`tally.Timeline`) through its figures, and decides exactly as it
does over the same occurrences listed as objects."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from rounds_bot.tally import Timeline
from rounds_bot.triage import ListedFigures, Occurrence, SignatureActivity, TriagePolicy, decide

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ELSEWHERE = timezone(timedelta(hours=2))


def random_timeline(rng: random.Random, *, aside: bool) -> Timeline:
    """Moments within an hour, many equal or exactly a window apart; counts > 1 and fatal entries at times;
    moments in another zone than UTC when `aside`."""
    timeline = Timeline()
    steps = [0, 1, 30, 60, 299, 300, 301]
    moment = NOW - timedelta(minutes=60)
    for _ in range(rng.randrange(0, 60)):
        moment += timedelta(seconds=rng.choice(steps), microseconds=rng.choice([0, 0, 1]))
        if rng.random() < 0.2:
            moment -= timedelta(seconds=rng.randrange(400))  # out of order
        count = rng.choice([1, 1, 1, 2, 7]) if rng.random() < 0.5 else 1
        shown = moment.astimezone(ELSEWHERE) if aside and rng.random() < 0.3 else moment
        timeline.note(shown, count, rng.random() < 0.03)
    return timeline


def activities(rng: random.Random, timeline: Timeline) -> list[tuple[SignatureActivity, SignatureActivity]]:
    """The same activity twice, with its occurrences listed and with the timeline's figures."""
    entries = list(timeline)
    moments = [entry.timestamp for entry in entries] or [NOW]
    resolved = [None, rng.choice(moments), rng.choice(moments) - timedelta(seconds=1), moments[0]]
    pairs = []
    for resolved_at in resolved:
        for diagnosed in [None, NOW - timedelta(days=rng.choice([1, 8]))]:
            common = {
                "signature_id": "s",
                "resolved_at": resolved_at,
                "last_diagnosed_at": diagnosed,
                "diagnosed_revision": "old" if diagnosed else None,
                "baseline_per_hour": rng.choice([None, 0.0, 3.0]),
                "window_hours": rng.choice([1.0, 0.5]),
            }
            pairs.append(
                (
                    SignatureActivity(occurrences=entries, **common),
                    SignatureActivity(figures=timeline, **common),
                )
            )
    return pairs


@pytest.mark.parametrize("aside", [False, True])
def test_a_timelines_figures_decide_as_its_listed_occurrences(aside: bool) -> None:
    rng = random.Random(26)
    for _ in range(300):
        timeline = random_timeline(rng, aside=aside)
        policy = TriagePolicy(
            new_threshold_count=rng.choice([1, 3, 10]),
            new_threshold_window=timedelta(seconds=rng.choice([0, 1, 60, 300])),
            spike_min_count=rng.choice([1, 20]),
        )
        for listed, figured in activities(rng, timeline):
            slow = decide(listed, now=NOW, code_revision="new", policy=policy)
            assert decide(figured, now=NOW, code_revision="new", policy=policy) == slow


def test_each_figure_is_the_listed_one_on_random_timelines() -> None:
    rng = random.Random(7)
    for _ in range(300):
        timeline = random_timeline(rng, aside=rng.random() < 0.3)
        listed = ListedFigures(list(timeline))
        assert timeline.total() == listed.total()
        assert timeline.any_fatal() == listed.any_fatal()
        for seconds in (0, 1, 59, 60, 300, 301):
            window = timedelta(seconds=seconds)
            assert timeline.peak_count(window) == listed.peak_count(window)
        for entry in list(timeline)[:5]:
            for moment in (entry.timestamp, entry.timestamp - timedelta(microseconds=1)):
                assert timeline.count_after(moment) == listed.count_after(moment)
                assert timeline.count_after(moment.astimezone(ELSEWHERE)) == listed.count_after(moment)


def test_equal_moments_and_a_window_edge_count_inclusively() -> None:
    timeline = Timeline()
    for moment, count in [
        (NOW, 2),
        (NOW, 3),
        (NOW + timedelta(minutes=5), 1),
        (NOW + timedelta(minutes=5, microseconds=1), 4),
    ]:
        timeline.note(moment, count, False)
    assert (
        timeline.peak_count(timedelta(minutes=5))
        == 6  # 2 + 3 + 1: the edge at 5 minutes is inside, a microsecond past it is not
        == ListedFigures(list(timeline)).peak_count(timedelta(minutes=5))
    )
    assert timeline.count_after(NOW) == 5


def test_a_naive_moment_is_compared_as_the_listed_occurrences_compare_it() -> None:
    timeline = Timeline()
    timeline.note(NOW, 1, False)
    timeline.note(NOW.replace(tzinfo=None), 1, False)  # kept aside, as it was given
    listed = ListedFigures(list(timeline))
    with pytest.raises(TypeError):
        listed.peak_count(timedelta(minutes=5))
    with pytest.raises(TypeError):
        timeline.peak_count(timedelta(minutes=5))
    with pytest.raises(TypeError):
        timeline.count_after(NOW.replace(tzinfo=None))
    assert timeline.total() == 2


def test_an_empty_timeline_has_no_figures() -> None:
    timeline = Timeline()
    assert (timeline.total(), timeline.any_fatal(), timeline.peak_count(timedelta(minutes=5))) == (
        0,
        False,
        0,
    )
    assert timeline.count_after(NOW.replace(tzinfo=None)) == 0 == ListedFigures([]).count_after(NOW)


def test_listed_figures_read_occurrences_built_by_hand() -> None:
    occurrences = [
        Occurrence(timestamp=NOW, count=2, fatal=True),
        Occurrence(timestamp=NOW + timedelta(hours=1)),
    ]
    figures = ListedFigures(occurrences)
    assert (figures.total(), figures.any_fatal(), figures.count_after(NOW)) == (3, True, 1)
