"""Whether a file's records were counted is asked at the end of each line, or, while the answers find none
counted (a first round), with the next lines' (`otlp_reading.NEW_BATCH` records at a time, their events built
as they are read): the poll is exactly the one that asking once a line gives, whatever was counted; a record
counted is not built once an answer found records counted; and a first round asks a few questions, not one a
line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rounds_bot.sources import otlp_reading
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.otlp_reading import NEW_BATCH, Reading

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from scale_data import write_otlp

WINDOW = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
RECORDS = 1_500
#: events of the full read counted (or not) together
BLOCK = 50


class Counted:
    """The database's answer: these ids were counted by an earlier round; and the questions asked."""

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids
        self.questions: list[int] = []

    def __call__(self, raw_ids: list[str]) -> set[str]:
        self.questions.append(len(raw_ids))
        return self.ids.intersection(raw_ids)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("otlp")
    return write_otlp(folder / "telemetry.jsonl", RECORDS, 200, datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture(scope="module")
def every_id(data: Path) -> list[str]:
    return [event.event_id for event in OtlpFileSource(data).poll(WINDOW).events]


def read(path: Path, counted: Counted) -> PollResult:
    return OtlpFileSource(path).poll_new(WINDOW, frozenset(), counted)


def read_asking_once_a_line(path: Path, counted: Counted) -> PollResult:
    line_read = Reading.line_read
    try:
        Reading.line_read = Reading.flush  # type: ignore[method-assign]
        return read(path, counted)
    finally:
        Reading.line_read = line_read  # type: ignore[method-assign]


def assert_same_poll(made: PollResult, expected: PollResult) -> None:
    assert list(made.events) == list(expected.events)
    assert [event.__dict__ for event in made.events] == [event.__dict__ for event in expected.events]
    assert made.model_copy(update={"events": []}) == expected.model_copy(update={"events": []})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.booleans(), min_size=RECORDS // BLOCK, max_size=RECORDS // BLOCK))
def test_whatever_was_counted_the_poll_is_the_one_asking_once_a_line_gives(
    data: Path, every_id: list[str], counted_blocks: list[bool]
) -> None:
    ids = {
        event_id
        for number, event_id in enumerate(every_id)
        if counted_blocks[min(number // BLOCK, len(counted_blocks) - 1)]
    }
    made = read(data, Counted(ids))
    assert_same_poll(made, read_asking_once_a_line(data, Counted(ids)))
    assert made.already_counted == len(ids)
    assert [event.event_id for event in made.events] == [i for i in every_id if i not in ids]


def test_a_first_round_asks_a_question_every_few_hundred_records(data: Path, every_id: list[str]) -> None:
    counted = Counted(set())
    made = read(data, counted)
    assert len(made.events) == RECORDS
    once_a_line = Counted(set())
    read_asking_once_a_line(data, once_a_line)
    assert sum(counted.questions) == sum(once_a_line.questions) == RECORDS
    assert len(counted.questions) <= RECORDS // NEW_BATCH + 2 < len(once_a_line.questions)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The id of each event the reading builds."""
    events: list[str] = []

    def watched(make: Callable[..., Any]) -> Callable[..., Any]:
        def counting(*args: Any, **kwargs: Any) -> Any:
            event = make(*args, **kwargs)
            events.append(event.event_id)
            return event

        return counting

    for name in ("exception_event", "span_error_event", "log_error"):
        monkeypatch.setattr(otlp_reading, name, watched(getattr(otlp_reading, name)))
    return events


def test_a_quiet_round_builds_no_counted_record(data: Path, every_id: list[str], built: list[str]) -> None:
    """Lines not remembered (no line memory), every record counted: the first line's answer finds them
    counted, so none is built before its answer."""
    made = read(data, Counted(set(every_id)))
    assert list(made.events) == [] and made.already_counted == RECORDS
    assert built == []


def test_after_new_records_a_counted_run_is_built_for_one_batch_at_most(
    data: Path, every_id: list[str], built: list[str]
) -> None:
    """New records, then counted ones: the records read while the answers found none counted are built
    before their answer, a batch of them at most; then none is."""
    counted = set(every_id[NEW_BATCH:])
    made = read(data, Counted(counted))
    assert [event.event_id for event in made.events] == every_id[:NEW_BATCH]
    wasted = [event_id for event_id in built if event_id in counted]
    assert len(wasted) <= NEW_BATCH + 100  # a batch, rounded up to the end of a line
