"""A record whose own time is not in nanoseconds: OTLP's `fixed64 time_unix_nano` (and a span's start and end,
a log record's observed time) is nanoseconds since the epoch, and a caller giving an SDK a time in another
unit writes a 1970 time the exporter passes on as given. Two shapes of it, read in the SDKs' source:

- opentelemetry-go `sdk/trace/span.go`, `(*recordingSpan).End`: `if config.Timestamp().IsZero() { s.endTime =
  et } else { s.endTime = config.Timestamp() }`, and `addEvent`: `Event{..., Time: c.Timestamp()}`: the
  `time.Time` of `trace.WithTimestamp(...)` is kept as given, so `time.Unix(0, millis)` (or
  `time.UnixMilli(seconds)`) is a 1970 time;
- opentelemetry-js `packages/opentelemetry-sdk-trace-base/src/Span.ts`, `_getTime`: a number above
  `performance.now()` is `millisToHrTime(inp)`, epoch milliseconds, so `span.end(Date.now() / 1000)` (seconds)
  is a 1970 time.

Read as 1970 such a record fell before every window and was taken for one an earlier round counted: lost
without a word. It is a skipped record instead, naming its field, its value and the unit it looks like, in
every round (a later round does not count it either)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.round.report import render_report
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources import otlp_file
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

END = 1_795_707_000 * 10**9  # a time of today, in nanoseconds
EVERYTHING = Window(start=datetime(1960, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}


def _span(end: int) -> dict[str, Any]:
    return {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "POST /pay",
        "startTimeUnixNano": str(end - 5),
        "endTimeUnixNano": str(end),
        "status": {"code": 2, "message": "card declined"},
    }


def _log(time: int, observed: int = 0) -> dict[str, Any]:
    return {
        "timeUnixNano": str(time),
        "observedTimeUnixNano": str(observed),
        "severityNumber": 17,
        "body": {"stringValue": "payment failed"},
    }


def _spans_line(*spans: dict[str, Any]) -> str:
    scope_spans = [{"scope": {"name": "shop"}, "spans": list(spans)}]
    return json.dumps({"resourceSpans": [{"resource": RESOURCE, "scopeSpans": scope_spans}]})


def _logs_line(*records: dict[str, Any]) -> str:
    scope_logs = [{"scope": {"name": "shop"}, "logRecords": list(records)}]
    return json.dumps({"resourceLogs": [{"resource": RESOURCE, "scopeLogs": scope_logs}]})


def test_a_log_record_in_milliseconds_is_reported_skipped_in_every_round_never_already_counted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "telemetry.jsonl"
    path.write_text(_logs_line(_log(END // 10**6), _log(END)) + "\n")
    store = Store.memory()
    now = datetime.fromtimestamp(END / 10**9, UTC) + timedelta(minutes=1)
    for later in (timedelta(0), timedelta(minutes=5)):  # the second round reads the same file again
        report = run_round(
            load_settings(), OtlpFileSource(path), DryRunTracker(tmp_path / "d"), store, now=now + later
        )
        assert report.already_counted == (0 if not later else 1)  # only the nanosecond record, counted first
        (skipped,) = report.skipped
        assert skipped.where == f"{path}:1"
        assert skipped.reason == (
            f"log record: timeUnixNano {END // 10**6} is not a time in Unix nanoseconds (OTLP times are "
            "nanoseconds since the epoch; read so it is 1970): by its size it is milliseconds; have the "
            "exporter or SDK call that sets it write nanoseconds"
        )
        shown = render_report(report)  # (the report quotes a long number as code)
        assert f"log record: timeUnixNano `{END // 10**6}` is not a time in Unix nanoseconds" in shown
        assert "by its size it is milliseconds; have the exporter or SDK call that sets it write" in shown
    assert [s.total_count for s in store.signatures()] == [1]


UNITS = [(10**6, "milliseconds"), (10**3, "microseconds"), (10**9, "seconds")]


@pytest.mark.parametrize("lean", [True, False], ids=["read lean", "read with the models"])
@pytest.mark.parametrize(("divisor", "unit"), UNITS, ids=[unit for _, unit in UNITS])
def test_a_record_whose_own_time_is_in_another_unit_is_skipped_naming_field_and_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool, divisor: int, unit: str
) -> None:
    wrong = END // divisor
    path = tmp_path / "telemetry.jsonl"
    lines = [_spans_line(_span(wrong)), _logs_line(_log(0, observed=wrong)), _logs_line(_log(wrong, END))]
    path.write_text("\n".join(lines) + "\n")
    if not lean:
        monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)
    result = OtlpFileSource(path).poll(EVERYTHING)
    assert result.events == []
    reasons = [skipped.reason for skipped in result.skipped]
    assert [reason.split(" is not")[0] for reason in reasons] == [
        f"span b7ad6b7169203331: endTimeUnixNano {wrong}",
        f"log record: observedTimeUnixNano {wrong}",
        f"log record: timeUnixNano {wrong}",
    ]
    assert all(f"by its size it is {unit};" in reason for reason in reasons)


@pytest.mark.parametrize("lean", [True, False], ids=["read lean", "read with the models"])
def test_an_exception_event_in_another_unit_on_a_span_in_another_unit_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    span = _span(END // 10**6)
    attributes = [{"key": "exception.type", "value": {"stringValue": "KeyError"}}]
    span["events"] = [{"name": "exception", "timeUnixNano": str(END // 10**6), "attributes": attributes}]
    path = tmp_path / "telemetry.jsonl"
    path.write_text(_spans_line(span) + "\n")
    if not lean:
        monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)
    result = OtlpFileSource(path).poll(EVERYTHING)
    assert result.events == []
    (skipped,) = result.skipped
    assert skipped.reason.startswith(f"span b7ad6b7169203331: events.0.timeUnixNano {END // 10**6} is not")


def _exception(at: int | None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "name": "exception",
        "attributes": [{"key": "exception.type", "value": {"stringValue": "KeyError"}}],
    }
    if at is not None:
        event["timeUnixNano"] = str(at)
    return event


@pytest.mark.parametrize("lean", [True, False], ids=["read lean", "read with the models"])
def test_a_spans_good_exception_event_is_kept_beside_one_whose_time_cannot_be_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    """Only the event with no time of its own, whose span's end is in milliseconds, is refused: its sibling's
    nanosecond time is its own."""
    span = {**_span(END // 10**6), "startTimeUnixNano": str(END), "events": [_exception(END), _exception(0)]}
    path = tmp_path / "telemetry.jsonl"
    path.write_text(_spans_line(span) + "\n")
    if not lean:
        monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)
    result = OtlpFileSource(path).poll(EVERYTHING)
    assert [event.timestamp for event in result.events] == [datetime.fromtimestamp(END / 10**9, UTC)]
    (skipped,) = result.skipped
    assert skipped.where == f"{path}:1"
    assert skipped.reason.startswith(f"span b7ad6b7169203331: endTimeUnixNano {END // 10**6} is not a time")


@pytest.mark.parametrize("unset", [True, False], ids=["time unset", "time 0"])
def test_both_readers_refuse_a_spans_events_for_the_same_reasons_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unset: bool
) -> None:
    span = {**_span(0), "startTimeUnixNano": "0"}
    span["events"] = [_exception(None if unset else 0), _exception(END // 10**6)]
    path = tmp_path / "telemetry.jsonl"
    path.write_text(_spans_line(span) + "\n")
    lean = OtlpFileSource(path).poll(EVERYTHING)
    monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)
    models = OtlpFileSource(path).poll(EVERYTHING)
    assert lean.events == models.events == []
    reasons = [skipped.reason for skipped in lean.skipped]
    assert reasons == [skipped.reason for skipped in models.skipped]
    assert [reason.split(" is not")[0].split(" (")[0] for reason in reasons] == [
        "span b7ad6b7169203331: the exception event has no timestamp",
        f"span b7ad6b7169203331: events.1.timeUnixNano {END // 10**6}",
    ]
