"""One record a reader cannot use costs that record alone: the others of its line are read, and it is listed
as skipped by file, line and its place in the line. And `null`, which the protobuf JSON mapping reads as a
field's default, is read so, not refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource

EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
T0 = "1773480000000000000"
TRACE = "0af7651916cd43dd8448eb211c80319c"
SERVICE = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}


def record(message: str, **fields: Any) -> dict[str, Any]:
    return {"timeUnixNano": T0, "severityNumber": 17, "body": {"stringValue": message}, **fields}


def span(span_id: str, message: str, **fields: Any) -> dict[str, Any]:
    own = {"traceId": TRACE, "spanId": span_id, "name": "op", "startTimeUnixNano": T0, "endTimeUnixNano": T0}
    return {**own, "status": {"code": 2, "message": message}, **fields}


def logs_line(*records: dict[str, Any]) -> dict[str, Any]:
    return {"resourceLogs": [{"resource": SERVICE, "scopeLogs": [{"logRecords": list(records)}]}]}


def poll(tmp_path: Path, *lines: dict[str, Any]) -> tuple[Path, PollResult]:
    path = tmp_path / "otlp.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path, OtlpFileSource(path).poll(EVERYTHING, frozenset())


def test_a_log_record_with_an_unreadable_time_costs_only_itself(tmp_path: Path) -> None:
    bad = record("bad", timeUnixNano="yesterday")
    path, result = poll(tmp_path, logs_line(record("one"), bad, record("two")))
    assert [event.message for event in result.events] == ["one", "two"]
    (skipped,) = result.skipped
    assert skipped.where == f"{path}:1"
    assert skipped.reason.startswith("resourceLogs.0.scopeLogs.0.logRecords.1.timeUnixNano: ")


def test_a_span_with_a_bad_id_costs_only_itself(tmp_path: Path) -> None:
    spans = [span("zz", "bad id"), span("b7ad6b7169203331", "good span")]
    line = {"resourceSpans": [{"resource": SERVICE, "scopeSpans": [{"spans": spans}]}]}
    path, result = poll(tmp_path, line, logs_line(record("next line")))
    assert [event.message for event in result.events] == ["good span", "next line"]
    (skipped,) = result.skipped
    assert (skipped.where, skipped.reason.split(":")[0]) == (
        f"{path}:1",
        "resourceSpans.0.scopeSpans.0.spans.0.spanId",
    )


def test_a_bad_record_is_found_in_original_field_names_too(tmp_path: Path) -> None:
    records = [
        {"time_unix_nano": T0, "severity_number": 17, "body": {"string_value": "one"}},
        {"time_unix_nano": [1], "severity_number": 17, "body": {"string_value": "bad"}},
    ]
    line = {"resource_logs": [{"resource": SERVICE, "scope_logs": [{"log_records": records}]}]}
    _, result = poll(tmp_path, line)
    assert [event.message for event in result.events] == ["one"]
    assert [skipped.reason.split(":")[0] for skipped in result.skipped] == [
        "resource_logs.0.scope_logs.0.log_records.1.time_unix_nano"
    ]


def test_a_resource_that_cannot_be_read_costs_its_records_and_says_how_many(tmp_path: Path) -> None:
    broken = {
        "resource": {"attributes": "service.name=shop"},
        "scopeLogs": [{"logRecords": [record("lost")]}],
    }
    line = {"resourceLogs": [broken, {"resource": SERVICE, "scopeLogs": [{"logRecords": [record("kept")]}]}]}
    _, result = poll(tmp_path, line)
    assert [event.message for event in result.events] == ["kept"]
    (skipped,) = result.skipped
    assert skipped.reason.startswith("resourceLogs.0.resource.attributes: ")
    assert "1 record" in skipped.reason


def test_null_is_a_fields_default(tmp_path: Path) -> None:
    attributes = [{"key": "tenant", "value": None}, {"key": "region", "value": {"stringValue": "eu"}}]
    nulls = record("with nulls", traceId=None, spanId=None, attributes=attributes, severityText=None)
    _, result = poll(tmp_path, logs_line(nulls))
    assert result.skipped == []
    (event,) = result.events
    assert event.message == "with nulls" and event.trace_id is None
    assert event.attributes["region"] == "eu" and "tenant" not in event.attributes
