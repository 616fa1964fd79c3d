"""A file source remembers what each export line gave, by a hash of its bytes: a line whose errors were all
counted is not decoded again, and a round over the file reads exactly what a full read gives."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.errors import RoundsError
from rounds_bot.round import run as round_run
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources import line_memory, otlp_file
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.tracker.dryrun import DryRunTracker
from tests.test_otlp_file_source import TRACE_A, TRACE_B, log_record, logs_line
from tests.test_otlp_lean import write_otlp

WINDOW = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


class Counted:
    """The database's answer: these ids were counted by an earlier round."""

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    def __call__(self, raw_ids: list[str]) -> set[str]:
        return self.ids.intersection(raw_ids)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every line the source decodes, in order."""
    lines: list[bytes] = []
    lean_line = otlp_file.lean_line

    def watched(raw: bytes | str) -> Any:
        lines.append(raw if isinstance(raw, bytes) else raw.encode())
        return lean_line(raw)

    monkeypatch.setattr(otlp_file, "lean_line", watched)
    return lines


def read(path: Path, counted: set[str], state: dict[str, Any] | None) -> PollResult:
    window = WINDOW.model_copy(update={"source_state": state})
    return OtlpFileSource(path).poll_new(window, frozenset(), Counted(counted))


def without_state(result: PollResult) -> PollResult:
    return result.model_copy(update={"source_state": None})


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_quiet_read_decodes_no_line_and_gives_what_a_full_read_gives(
    tmp_path: Path, decoded: list[bytes]
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 300, 40, NOW)
    first = read(data, set(), None)
    ids = {event.event_id for event in first.events}
    assert len(ids) == 300
    decoded.clear()
    quiet = read(data, ids, first.source_state)
    assert decoded == []  # every line remembered, every error counted: none decoded
    full = read(data, ids, None)
    assert without_state(quiet) == without_state(full)
    assert quiet.already_counted == 300
    assert quiet.source_state == full.source_state  # the same lines kept for the next round


def test_a_new_error_log_after_skipped_lines_gets_its_neighbours_as_before(
    tmp_path: Path, decoded: list[bytes]
) -> None:
    earlier = (
        logs_line(
            "checkout",
            log_record(0, "reserving stock for cart 44149", trace=TRACE_A, text="INFO"),
            log_record(1, "first failure", severity=17, trace=TRACE_A),
        ),
        logs_line("checkout", log_record(2, "payment retry 1", severity=13, trace=TRACE_A)),
        logs_line("checkout", log_record(2.5, "another request's work", trace=TRACE_B)),
    )
    first = read(write(tmp_path / "logs.jsonl", *earlier), set(), None)
    counted = {event.event_id for event in first.events}
    later = logs_line("checkout", log_record(3, "second failure", severity=17, trace=TRACE_A))
    data = write(tmp_path / "logs.jsonl", *earlier, later)
    decoded.clear()
    again = read(data, counted, first.source_state)
    decoded_again = list(decoded)
    assert without_state(again) == without_state(read(data, counted, None))
    [event] = again.events
    assert [(record.severity, record.body) for record in event.context] == [
        ("INFO", "reserving stock for cart 44149"),
        ("WARN", "payment retry 1"),
    ]
    # only the new line was decoded; the remembered ones were read back for their neighbours alone
    assert decoded_again == [later.encode() + b"\n"]


def test_neighbours_of_skipped_and_decoded_lines_keep_the_files_order(tmp_path: Path) -> None:
    skipped = logs_line(
        "checkout",
        log_record(0, "written by a line read before", trace=TRACE_A),
        log_record(0.5, "counted failure", severity=17, trace=TRACE_B),
    )
    first = read(write(tmp_path / "logs.jsonl", skipped), set(), None)
    counted = {event.event_id for event in first.events}
    new_lines = (
        logs_line(
            "checkout",
            log_record(1, "written by a new line", trace=TRACE_A),
            log_record(1.5, "new failure elsewhere", severity=17, trace=TRACE_B),
        ),
        logs_line("checkout", log_record(2, "traced failure", severity=17, trace=TRACE_A)),
    )
    data = write(tmp_path / "logs.jsonl", skipped, *new_lines)
    again = read(data, counted, first.source_state)
    assert without_state(again) == without_state(read(data, counted, None))
    context = {event.message: [record.body for record in event.context] for event in again.events}
    assert context["traced failure"] == ["written by a line read before", "written by a new line"]


def test_a_quiet_line_after_the_last_new_one_is_never_read_back(tmp_path: Path, decoded: list[bytes]) -> None:
    lines = [logs_line("checkout", log_record(index, f"step {index}", trace=TRACE_A)) for index in range(3)]
    first = read(write(tmp_path / "logs.jsonl", *lines), set(), None)
    decoded.clear()
    again = read(tmp_path / "logs.jsonl", set(), first.source_state)
    assert decoded == []  # no error log after them: their neighbours are never wanted
    assert without_state(again) == without_state(read(tmp_path / "logs.jsonl", set(), None))


def test_a_record_repeated_between_a_skipped_line_and_a_new_one_is_counted_once(tmp_path: Path) -> None:
    failure = log_record(1, "order already exists", severity=17, trace=TRACE_A)
    first = read(write(tmp_path / "logs.jsonl", logs_line("checkout", failure)), set(), None)
    counted = {event.event_id for event in first.events}
    fresh = log_record(2, "payment declined", severity=17, trace=TRACE_A)
    data = write(
        tmp_path / "logs.jsonl", logs_line("checkout", failure), logs_line("checkout", failure, fresh)
    )
    again = read(data, counted, first.source_state)
    assert without_state(again) == without_state(read(data, counted, None))
    assert [event.message for event in again.events] == ["payment declined"]
    assert again.already_counted == 1
    assert any("1 error record(s) repeated" in note for note in again.notes)


def test_a_line_edited_between_rounds_is_read_again(tmp_path: Path, decoded: list[bytes]) -> None:
    line = logs_line("checkout", log_record(1, "order already exists", severity=17, trace=TRACE_A))
    first = read(write(tmp_path / "logs.jsonl", line), set(), None)
    counted = {event.event_id for event in first.events}
    edited = line.replace("order already exists", "order not found")
    data = write(tmp_path / "logs.jsonl", edited)
    decoded.clear()
    again = read(data, counted, first.source_state)
    assert decoded == [edited.encode() + b"\n"]
    assert [event.message for event in again.events] == ["order not found"]


def test_a_line_with_an_error_not_counted_is_decoded_and_built(tmp_path: Path, decoded: list[bytes]) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 60, 10, NOW)
    first = read(data, set(), None)
    ids = [event.event_id for event in first.events]
    again = read(data, set(ids[1:]), first.source_state)  # one record was never counted (a rebuilt total)
    assert [event.event_id for event in again.events] == [ids[0]]
    assert without_state(again) == without_state(read(data, set(ids[1:]), None))


def test_the_memory_is_bounded_and_another_releases_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decoded: list[bytes]
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 300, 40, NOW)
    monkeypatch.setattr(line_memory, "MAX_RECORDS", 100)
    first = read(data, set(), None)
    assert first.source_state is not None
    kept = [line_memory.Read.unpacked(value) for value in first.source_state["lines"].values()]
    assert 0 < sum(len(read.records) for read in kept) <= 100
    ids = {event.event_id for event in first.events}
    stale = {**first.source_state, "release": "0.0.0"}
    decoded.clear()
    read(data, ids, stale)
    assert len(decoded) == len(data.read_bytes().splitlines())  # every line decoded: nothing recalled


def test_a_round_that_fails_remembers_no_line(
    clean_env: pytest.MonkeyPatch, fresh_db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_otlp(tmp_path / "telemetry.jsonl", 60, 10, NOW - timedelta(minutes=5))
    source = OtlpFileSource(data)

    def broken(*args: object, **kwargs: object) -> None:
        raise RoundsError("the tracker is down")

    with monkeypatch.context() as patched:
        patched.setattr(round_run, "watch_fixed", broken)  # fails after the source was read
        with pytest.raises(RoundsError):
            run_round(load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW)
    assert fresh_db.source_state(source.name) is None
    run_round(load_settings(), source, DryRunTracker(tmp_path), fresh_db, now=NOW, reads_whole_history=True)
    state = fresh_db.source_state(source.name)
    assert state is not None and len(state["lines"]) == len(data.read_bytes().splitlines())


def test_a_gzipped_files_skipped_lines_are_read_back_for_their_neighbours(tmp_path: Path) -> None:
    earlier = (
        logs_line("checkout", log_record(0, "reserving stock", trace=TRACE_A)),
        logs_line("checkout", log_record(1, "first failure", severity=17, trace=TRACE_A)),
    )
    later = logs_line("checkout", log_record(2, "second failure", severity=17, trace=TRACE_A))
    path = tmp_path / "logs.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(earlier) + "\n").encode()))
    first = read(path, set(), None)
    counted = {event.event_id for event in first.events}
    path.write_bytes(gzip.compress(("\n".join((*earlier, later)) + "\n").encode()))
    again = read(path, counted, first.source_state)
    assert [[record.body for record in event.context] for event in again.events] == [["reserving stock"]]
    assert without_state(again) == without_state(read(path, counted, None))
