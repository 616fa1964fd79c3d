"""An exception event whose own time is not in nanoseconds: an SDK writes the event time its caller gives it,
as read in two SDKs' source:
opentelemetry-go `sdk/trace/span.go`, `(*recordingSpan).addEvent`
(`e := Event{Name: name, Attributes: attrs, Time: c.Timestamp()}`, the `time.Time` of `trace.WithTimestamp`
as given, so `RecordError(err, trace.WithTimestamp(time.Unix(0, millis)))` is a 1970 time), and
opentelemetry-js `packages/opentelemetry-sdk-trace-base/src/Span.ts`, `_getTime` (a number above
`performance.now()` is `millisToHrTime(inp)`, epoch milliseconds, so `recordException(err, seconds)` is a
1970 time). Such an event is a skipped record of its own, whatever its span's time, naming its field, value
and unit; its span's other events are read. It is never moved to its span's end: a release before read it
at 1970, and may have counted it there, so read inside a window now it would be counted twice."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.sources import otlp_file, otlp_time_units
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

END = 1_795_707_000 * 10**9  # the span's end, in nanoseconds
EVERYTHING = Window(start=datetime(1960, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


def _span(span_id: str, event_times: list[int], end: int = END) -> dict[str, Any]:
    attributes = [{"key": "exception.type", "value": {"stringValue": "KeyError"}}]
    events = [{"name": "exception", "timeUnixNano": str(at), "attributes": attributes} for at in event_times]
    return {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": span_id,
        "name": "POST /pay",
        "startTimeUnixNano": str(end - 5 * 10**6),
        "endTimeUnixNano": str(end),
        "status": {"code": 2},
        "events": events,
    }


def _line(*spans: dict[str, Any]) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}
    scope_spans = [{"scope": {"name": "shop"}, "spans": list(spans)}]
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": scope_spans}]})


def _models_only(monkeypatch: pytest.MonkeyPatch, lean: bool) -> None:
    if not lean:
        monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)


UNITS = [(10**6, "milliseconds"), (10**3, "microseconds"), (10**9, "seconds")]


@pytest.mark.parametrize("lean", [True, False], ids=["read lean", "read with the models"])
@pytest.mark.parametrize(("divisor", "unit"), UNITS, ids=[unit for _, unit in UNITS])
def test_an_exception_events_time_in_another_unit_is_skipped_and_its_spans_nanosecond_events_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool, divisor: int, unit: str
) -> None:
    wrong = END // divisor
    path = tmp_path / "telemetry.jsonl"
    # one span of one event (read alone), one of three (read together), as the lean reader has both ways
    alone = _span("b7ad6b7169203331", [wrong])
    together = _span("b7ad6b7169203332", [END - 10**9, wrong, 0])
    path.write_text(_line(alone, together) + "\n")
    _models_only(monkeypatch, lean)
    result = OtlpFileSource(path).poll(EVERYTHING)
    # the nanosecond event at its own time, the one without a time at its span's end, as always
    nanos = [END - 10**9, END]
    assert [e.timestamp for e in result.events] == [datetime.fromtimestamp(n / 10**9, UTC) for n in nanos]
    refusal = f"timeUnixNano {wrong} is not a time in Unix nanoseconds"
    assert [(s.where, s.reason.split(" (")[0]) for s in result.skipped] == [
        (f"{path}:1", f"span b7ad6b7169203331: events.0.{refusal}"),
        (f"{path}:1", f"span b7ad6b7169203332: events.1.{refusal}"),
    ]
    assert all(f"by its size it is {unit};" in s.reason for s in result.skipped)


@pytest.mark.parametrize("lean", [True, False], ids=["read lean", "read with the models"])
def test_an_exception_events_own_nanosecond_time_is_kept_even_before_its_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    """A time in nanoseconds is the event's, even before its span's start (a caller's clock, or a timestamp
    given for when the failure happened), and even when its span's own time is in another unit."""
    path = tmp_path / "telemetry.jsonl"
    path.write_text(_line(_span("b7ad6b7169203331", [END - 60 * 10**9], end=END // 10**6)) + "\n")
    _models_only(monkeypatch, lean)
    result = OtlpFileSource(path).poll(EVERYTHING)
    assert [e.timestamp for e in result.events] == [datetime.fromtimestamp(END / 10**9 - 60, UTC)]
    assert result.skipped == []


def test_failures_recorded_with_millisecond_event_times_are_reported_in_every_round_never_counted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "telemetry.jsonl"
    spans = [_span(f"b7ad6b716920333{n}", [END // 10**6]) for n in range(3)]
    path.write_text(_line(*spans) + "\n")
    store = Store.memory()
    now = datetime.fromtimestamp(END / 10**9, UTC) + timedelta(minutes=1)
    for later in (timedelta(0), timedelta(minutes=5)):  # the second round reads the same file again
        report = run_round(
            load_settings(), OtlpFileSource(path), DryRunTracker(tmp_path / "d"), store, now=now + later
        )
        assert report.occurrences_counted == report.already_counted == 0
        assert len(report.skipped) == 3
    assert list(store.signatures()) == []


@pytest.mark.parametrize("lean", [True, False], ids=["read lean", "read with the models"])
def test_a_negative_event_time_is_refused_not_read_at_its_spans_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    """A `fixed64` cannot be negative: no unit makes `-5` a time, so it is refused as it always was."""
    path = tmp_path / "telemetry.jsonl"
    path.write_text(_line(_span("b7ad6b7169203331", [-5])) + "\n")
    _models_only(monkeypatch, lean)
    result = OtlpFileSource(path).poll(EVERYTHING)
    assert result.events == []
    (skipped,) = result.skipped
    assert skipped.reason.startswith("span b7ad6b7169203331: ")
    assert "is not a time in Unix nanoseconds" not in skipped.reason


def _two_spans_file(path: Path) -> OtlpFileSource:
    """An exception event whose time is in milliseconds, in a span in nanoseconds, and a span error."""
    other = {**_span("b7ad6b7169203334", [], end=END + 10**9), "traceId": "1af7651916cd43dd8448eb211c80319c"}
    other["status"] = {"code": 2, "message": "cart down"}
    path.write_text(_line(_span("b7ad6b7169203332", [END // 10**6])) + "\n" + _line(other) + "\n")
    return OtlpFileSource(path)


def _round(tmp_path: Path, source: OtlpFileSource, store: Store, minutes: int, *, old: bool) -> None:
    """A whole-history round `minutes` after the file's last record; `old`: as the release before read times,
    each as written (a millisecond time as one of 1970)."""
    with pytest.MonkeyPatch.context() as patch:
        if old:
            patch.setattr(otlp_time_units, "nanos_of", lambda unix_nano, field: unix_nano)
        now = datetime.fromtimestamp(END / 10**9, UTC) + timedelta(minutes=1 + minutes)
        run_round(
            load_settings(), source, DryRunTracker(tmp_path / "d"), store, now=now, reads_whole_history=True
        )


@pytest.mark.parametrize(
    "releases",
    [("old", "new", "new", "new"), ("old", "old", "new", "new"), ("new", "new", "new", "new")],
    ids=["old-new-new", "old-old-new", "new-new-new"],
)
def test_an_event_the_release_before_counted_at_1970_is_never_counted_again(
    tmp_path: Path, releases: tuple[str, ...]
) -> None:
    # the release before read the event as 1970, inside a whole-history round's window, and counted it; the
    # line it remembered keeps that reading, and a line read anew refuses the event: it is not counted again
    source, store = _two_spans_file(tmp_path / "telemetry.jsonl"), Store.memory()
    never_counted = releases[0] == "new"
    for minutes, release in enumerate(releases):
        _round(tmp_path, source, store, minutes, old=release == "old")
        totals = sorted(s.total_count for s in store.signatures())
        assert totals == ([1] if never_counted else [1, 1]), f"after round {minutes + 1} ({release})"
