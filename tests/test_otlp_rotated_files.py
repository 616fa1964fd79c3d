"""The file exporter's own rotation (its `rotation` setting, lumberjack's naming): the file is renamed
`<name>-<UTC time>.<ext>` and a new one begun. What it received after a round read it and before the rename
is in the backup, so a round reads the backups written to since its window began, oldest first, then the
file."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource

T0 = 1_773_480_000_000_000_000  # nanoseconds, 2026-03-14
END = datetime(2100, 1, 1, tzinfo=UTC)


def error_line(message: str, second: int) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "orders"}}]}
    record = {
        "timeUnixNano": str(T0 + second * 10**9),
        "severityNumber": 17,
        "body": {"stringValue": message},
    }
    return (
        json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]}) + "\n"
    )


def poll(path: Path, start: datetime) -> PollResult:
    return OtlpFileSource(path).poll(Window(start=start, end=END), frozenset())


def age(path: Path, days: int) -> None:
    then = (datetime.now(UTC) - timedelta(days=days)).timestamp()
    os.utime(path, (then, then))


def test_lines_the_exporter_rotated_away_since_the_last_round_are_read(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    path.write_text(error_line("read last round", 0), encoding="utf-8")
    last_round = datetime.now(UTC) - timedelta(minutes=5)
    # then the exporter wrote one more request, reached max_megabytes and rotated
    with path.open("a", encoding="utf-8") as handle:
        handle.write(error_line("written after the last round", 1))
    backup = tmp_path / "otlp-2026-03-14T09-30-00.123.jsonl"
    path.rename(backup)
    path.write_text(error_line("in the new file", 2), encoding="utf-8")
    result = poll(path, last_round)
    assert [event.message for event in result.events] == [
        "read last round",
        "written after the last round",
        "in the new file",
    ]


def test_backups_not_written_since_the_window_began_are_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    path.write_text(error_line("current", 3), encoding="utf-8")
    older = tmp_path / "otlp-2026-03-12T00-00-00.000.jsonl"
    older.write_text(error_line("two days old", 1), encoding="utf-8")
    age(older, 2)
    assert [event.message for event in poll(path, datetime.now(UTC) - timedelta(hours=1)).events] == [
        "current"
    ]
    # a first round reads the whole history: every backup, oldest first
    newer = tmp_path / "otlp-2026-03-13T00-00-00.000.jsonl"
    newer.write_text(error_line("one day old", 2), encoding="utf-8")
    age(newer, 1)
    first = poll(path, datetime(1970, 1, 1, tzinfo=UTC))
    assert [event.message for event in first.events] == ["two days old", "one day old", "current"]


def test_a_skipped_line_of_a_backup_is_named_by_the_backup(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    path.write_text(error_line("current", 3), encoding="utf-8")
    backup = tmp_path / "otlp-2026-03-14T09-30-00.123.jsonl"
    backup.write_text("{broken\n" + error_line("in the backup", 1), encoding="utf-8")
    result = poll(path, datetime.now(UTC) - timedelta(hours=1))
    assert [event.message for event in result.events] == ["in the backup", "current"]
    assert [record.where for record in result.skipped] == [f"{backup}:1"]


def test_files_that_only_look_alike_are_not_backups(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    path.write_text(error_line("current", 3), encoding="utf-8")
    for name in (
        "otlp-old.jsonl",
        "otlp-2026-03-14.jsonl",
        "other-2026-03-14T09-30-00.123.jsonl",
        "otlp.jsonl.1",
    ):
        (tmp_path / name).write_text(error_line(name, 1), encoding="utf-8")
    assert [event.message for event in poll(path, datetime.now(UTC) - timedelta(hours=1)).events] == [
        "current"
    ]
