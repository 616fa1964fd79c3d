"""SigNoz's three streams (exceptions, error spans, error logs) as rounds reads them: each from its own
cursor with an overlap that counts late rows once, each failing alone, and occurrences counted where
they happened, so the same telemetry read from SigNoz and from an OTLP file makes the same signatures."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import ERROR_LOGS_QUERY, SECOND, T0_NS, source_for
from signoz_parity import both, counts_by_kind, poll_window
from signoz_rows import error_log as _error_log
from signoz_rows import error_span as _error_span
from signoz_rows import exception_span as _exception_span
from signoz_rows import one_of_each as _one_of_each
from signoz_rows import otlp_lines as _lines

from rounds_bot.demo import demo_data_path
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.source import SignozSource
from rounds_bot.sources.signoz.times import ns_to_datetime

MINUTE = 60 * SECOND
KEY = "test-key"


def _counts(result: PollResult) -> dict[str, int]:
    """Occurrences by kind of stream: new groups' events and known groups' counts."""
    return counts_by_kind(result)


def _total(result: PollResult) -> int:
    return sum(_counts(result).values())


@pytest.fixture
def busy_minutes() -> Dataset:
    """One of each kind of error in each of the first ten minutes after T0."""
    dataset = Dataset()
    for minute in range(10):
        at = T0_NS + minute * MINUTE + 5 * SECOND
        lines = _lines([_exception_span(minute, at), _error_span(minute, at)], [_error_log(at)])
        load_otlp_lines(lines, dataset, where="busy")
    return dataset


def test_a_groups_occurrences_keep_the_minutes_they_happened_in(busy_minutes):
    with SignozEmulator(busy_minutes, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    exceptions = [event for event in result.events if event.kind == "exception"]
    assert sum(event.count for event in exceptions) == 10
    moments = sorted(event.timestamp for event in exceptions)
    # ten minutes apart, not one bar: triage sees 10 occurrences over 9 minutes, not 10 at once
    assert moments[-1] - moments[0] == timedelta(minutes=9)
    assert {event.source_group_id for event in exceptions} == {exceptions[0].source_group_id}
    assert {event.environment for event in result.events} == {"production"}


@pytest.mark.parametrize(
    ("overlap_seconds", "late_counted", "version"),
    [(900, 3, "v0.138.0"), (0, 0, "v0.138.0"), (900, 3, "v0.60.0")],  # v0.60: through /api/v4
)
def test_rows_that_arrive_behind_the_cursor_are_counted_once_within_the_overlap(
    overlap_seconds, late_counted, version
):
    first_rows = _one_of_each(T0_NS + 5 * MINUTE, 1)
    with (
        SignozEmulator(first_rows, Behaviour(api_key=KEY, version=version)) as emulator,
        source_for(emulator, overlap_seconds=overlap_seconds) as source,
    ):
        cursor = T0_NS + 20 * MINUTE
        first = source.poll(poll_window(T0_NS, cursor), frozenset())
        assert _counts(first) == {"exception": 1, "span_error": 1, "log": 1}
        # an exception, an error span and an error log, 60 s behind the cursor, reach SigNoz late
        _one_of_each(cursor - 60 * SECOND, 2).arrive(emulator.engine)
        second = source.poll(poll_window(cursor, cursor + 20 * MINUTE, first), frozenset())
        assert _total(second) == late_counted
        if late_counted:
            assert _counts(second) == {"exception": 1, "span_error": 1, "log": 1}
            assert any("late" in note for note in second.notes)
        third = source.poll(poll_window(cursor + 20 * MINUTE, cursor + 40 * MINUTE, second), frozenset())
        assert _total(third) == 0  # counted once: the third round re-reads nothing it counted


def test_a_re_read_minute_counts_only_its_new_rows_for_known_groups_too(busy_minutes):
    with SignozEmulator(busy_minutes, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        first = source.poll(poll_window(T0_NS, T0_NS + 9 * MINUTE + 3 * SECOND), frozenset())
        known = frozenset(event.source_group_id for event in first.events if event.source_group_id)
        second = source.poll(poll_window(T0_NS + 9 * MINUTE + 3 * SECOND, T0_NS + 30 * MINUTE, first), known)
    assert _total(first) == 27  # minutes 0-8 read; minute 9's rows happen at :05, after the end
    assert second.events == []
    assert sum(group.count for group in second.known_group_counts) == 3


def test_one_failing_stream_is_reported_alone_and_read_again_next_round(busy_minutes):
    # every error-log query meets a busy ClickHouse (memory limit): retried, then given up
    busy = Fault(
        kind="query",
        path="/api/v5/query_range",
        times=-1,
        clickhouse_code=241,
        body_contains=ERROR_LOGS_QUERY,
    )
    behaviour = Behaviour(api_key=KEY, faults=[busy])
    end = T0_NS + 20 * MINUTE
    with SignozEmulator(busy_minutes, behaviour) as emulator, source_for(emulator, max_attempts=2) as source:
        failed = source.poll(poll_window(T0_NS, end), frozenset())
        assert _counts(failed) == {"exception": 10, "span_error": 10}
        assert len(failed.failures) == 1
        line = failed.failures[0]
        assert line.startswith("error logs: not read this round:")
        assert "too busy" in line and "code: 241" in line and "reads it again" in line
        assert failed.read_until == ns_to_datetime(T0_NS)  # the round's cursor waits for the logs
        behaviour.faults.clear()
        known = frozenset(event.source_group_id for event in failed.events if event.source_group_id)
        again = source.poll(poll_window(T0_NS, end + 10 * MINUTE, failed), known)
    assert again.failures == []
    assert _counts(again) == {"log": 10}  # the logs once; exceptions and spans not again


def test_a_busy_clickhouse_is_retried_not_blamed_on_the_query(busy_minutes):
    once = Fault(kind="query", path="/api/v5/query_range", times=1, clickhouse_code=202)
    with (
        SignozEmulator(busy_minutes, Behaviour(api_key=KEY, faults=[once])) as emulator,
        source_for(emulator) as source,
    ):
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    assert result.failures == []
    assert _total(result) == 30
    assert next(r.status for r in emulator.requests if r.path == "/api/v5/query_range") == 500


def test_a_long_gap_is_read_in_bounded_chunks_and_at_most_the_maximum_window(busy_minutes):
    with (
        SignozEmulator(busy_minutes, Behaviour(api_key=KEY)) as emulator,
        source_for(emulator, chunk_seconds=120, max_window_seconds=360) as source,
    ):
        first = source.poll(poll_window(T0_NS, T0_NS + 60 * MINUTE), frozenset())
        sent = [json.loads(r.body) for r in emulator.requests if r.path == "/api/v5/query_range"]
        assert first.read_until == ns_to_datetime(T0_NS + 6 * MINUTE)
        assert _total(first) == 18  # minutes 0-5 of each stream
        assert max(body["end"] - body["start"] for body in sent) <= 2 * 60_000
        second = source.poll(poll_window(T0_NS + 6 * MINUTE, T0_NS + 60 * MINUTE, first), frozenset())
    assert _total(second) == 12  # minutes 6-9, nothing of 0-5 again


def test_error_spans_and_logs_link_to_their_page_in_signozs_ui(busy_minutes):
    with (
        SignozEmulator(busy_minutes, Behaviour(api_key=KEY)) as emulator,
        source_for(emulator, ui_url="https://signoz.example.com/") as source,
    ):
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    by_kind = {event.kind: event for event in result.events}
    span = by_kind["span_error"]
    assert span.source_url == f"https://signoz.example.com/trace/{span.trace_id}?spanId={span.span_id}"
    exception = by_kind["exception"]
    assert exception.source_url == (
        f"https://signoz.example.com/trace/{exception.trace_id}?spanId={exception.span_id}"
    )
    log = by_kind["log"]
    assert log.source_url is not None
    assert log.source_url.startswith("https://signoz.example.com/logs/logs-explorer?activeLogId=%22")


@pytest.mark.parametrize("version", ["v0.138.0", "v0.86.0"])  # v0.86: through /api/v4/query_range
def test_the_demo_through_signoz_and_from_its_otlp_file_makes_the_same_signatures(version):
    through_signoz, from_file = both(demo_data_path(), version)
    assert set(through_signoz) == set(from_file)
    for signature_id, view in from_file.items():
        seen = through_signoz[signature_id]
        assert (seen.title, seen.count, seen.environments) == (view.title, view.count, view.environments)
        assert (seen.first_seen, seen.last_seen) == (view.first_seen, view.last_seen)
        # the same decision; the peak it quotes is exact to the minute (SigNoz counts per minute)
        assert seen.diagnose == view.diagnose, (seen.reason, view.reason)


def test_a_source_without_state_starts_each_stream_at_the_rounds_cursor(busy_minutes):
    """A database from before per-stream cursors: the round's cursor is where every stream resumes."""
    with SignozEmulator(busy_minutes, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        window = Window(
            start=ns_to_datetime(T0_NS + 3 * MINUTE),
            end=ns_to_datetime(T0_NS + 20 * MINUTE),
            resume_from=ns_to_datetime(T0_NS + 5 * MINUTE),
        )
        result = source.poll(window, frozenset())
    assert _total(result) == 15  # minutes 5-9
    assert isinstance(source, SignozSource)


@pytest.mark.parametrize(("indexes_suffixed", "kind"), [(True, "exception"), (False, "span_error")])
def test_a_span_with_a_suffixed_exception_event_is_counted_once_whatever_the_collector(
    indexes_suffixed, kind
):
    """Collectors from v0.144.3 index `*.exception` events in the error index; older ones only
    `exception`: the span is then an error span, never counted twice or nowhere."""
    span = _exception_span(1, T0_NS + MINUTE)
    span["events"][0]["name"] = "grpc.exception"
    dataset = Dataset(collector_indexes_suffixed_exceptions=indexes_suffixed)
    load_otlp_lines(_lines([span], []), dataset, where="suffixed")
    with SignozEmulator(dataset, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    assert _counts(result) == {kind: 1}


TEMPLATE_TEXT = "total {{ .amount }} for {{currency}} at $start_timestamp, [[end_timestamp]] and {{"


@pytest.mark.parametrize("version", ["v0.60.0", "v0.85.0", "v0.86.0", "v0.87.0", "v0.88.0", "v0.138.0"])
def test_text_in_sql_reaches_clickhouse_as_it_was_whatever_signoz_renders(version):
    """From v0.88 SigNoz renders clickhouse_sql on v5 as a Go template after replacing its variables,
    and v4 (v0.60 to v0.86) always does: a message holding `{{` or `$start_timestamp` must neither
    break the query nor be replaced."""
    from rounds_bot.sources.signoz.queries import clickhouse_sql, query_range_request, sql_string

    sql = f"SELECT {sql_string(TEMPLATE_TEXT)} AS text"
    behaviour = Behaviour(api_key=KEY, version=version)
    with SignozEmulator(Dataset(), behaviour) as emulator, source_for(emulator) as source:
        source.capabilities()  # the route by version: v4 before v0.87
        request = query_range_request(T0_NS, T0_NS + MINUTE, "raw", clickhouse_sql(sql))
        data = source.client.query_range(request)
        route = emulator.paths()[-1]
    (row,) = [row for result in data.raw_results() for row in result.rows or []]
    assert row.data["text"] == TEMPLATE_TEXT
    assert route == (
        "/api/v5/query_range" if version in ("v0.87.0", "v0.88.0", "v0.138.0") else "/api/v4/query_range"
    )


def _json_log(at: int, order: int) -> dict[str, Any]:
    body = {
        "kvlistValue": {
            "values": [
                {"key": "message", "value": {"stringValue": f"payment {order} declined by the bank"}},
                {"key": "order", "value": {"intValue": str(order)}},
            ]
        }
    }
    return {"timeUnixNano": str(at), "severityText": "ERROR", "body": body}


def test_logs_kept_as_json_bodies_are_grouped_by_their_message():
    """`body_json_enabled`: `body` is empty and the message is in `body_v2`; the logs must not all
    collapse into one group of empty bodies."""
    dataset = Dataset(body_json_enabled=True)
    logs = [_json_log(T0_NS + index * SECOND, 1000 + index) for index in range(3)]
    logs.append(_error_log(T0_NS + 5 * SECOND))  # a plain body beside them
    load_otlp_lines(_lines([], logs), dataset, where="json bodies")
    assert sum(row["body"] == "" for row in dataset.logs) == 3
    with SignozEmulator(dataset, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.message] = counts.get(event.message, 0) + event.count
    assert counts == {"payment 1000 declined by the bank": 3, "payment declined": 1}


def test_a_logs_table_from_before_json_bodies_is_read_without_them(busy_minutes):
    behaviour = Behaviour(api_key=KEY, logs_without_body_v2=True)
    with SignozEmulator(busy_minutes, behaviour) as emulator, source_for(emulator) as source:
        first = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
        refused = [r for r in emulator.requests if r.status >= 400]
        emulator.requests.clear()
        source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
        again = [r for r in emulator.requests if r.status >= 400]
    assert first.failures == [] and _counts(first)["log"] == 10
    assert len(refused) == 1 and again == []  # learned once for the source


@pytest.mark.parametrize(("version", "noted"), [("v0.16.0", True), ("v0.17.0", False)])
def test_a_signoz_without_api_keys_is_named_in_the_report(version, noted):
    from rounds_bot.sources.signoz.versions import capabilities_of

    notes = capabilities_of(version).notes
    assert any("has no API keys" in note for note in notes) == noted


def test_too_many_new_group_minutes_are_placed_per_longer_runs_with_exact_counts(busy_minutes, monkeypatch):
    monkeypatch.setattr("rounds_bot.sources.signoz.counting.MAX_POINTS", 4)
    with SignozEmulator(busy_minutes, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    assert _counts(result) == {"exception": 10, "span_error": 10, "log": 10}  # nothing lost
    exceptions = sorted(event.timestamp for event in result.events if event.kind == "exception")
    assert exceptions[-1] - exceptions[0] == timedelta(minutes=9)  # first and last seen kept
    # three 4-minute runs, each one event at its first occurrence; the group's last run also at its last
    assert len(exceptions) == 4
    assert any("placed per 4 minutes" in note for note in result.notes)


def test_without_clickhouse_sql_the_next_round_counts_nothing_twice(busy_minutes):
    """listErrors and raw rows: exception groups are read from the cursor (whole groups cannot be
    re-read by minute), raw spans and logs are counted by minute like the grouped ones."""
    behaviour = Behaviour(api_key=KEY, clickhouse_sql_allowed=False)
    with SignozEmulator(busy_minutes, behaviour) as emulator, source_for(emulator) as source:
        first = source.poll(poll_window(T0_NS, T0_NS + 9 * MINUTE + 3 * SECOND), frozenset())
        second = source.poll(
            poll_window(T0_NS + 9 * MINUTE + 3 * SECOND, T0_NS + 30 * MINUTE, first), frozenset()
        )
    assert _counts(first) == {"exception": 9, "span_error": 9, "log": 9}
    assert _counts(second) == {"exception": 1, "span_error": 1, "log": 1}


BAD_ANSWERS = {
    "a timeout": Fault(kind="hang", seconds=2.0),
    "a rate limit": Fault(kind="status", status=429, retry_after="0"),
    "an HTML page": Fault(kind="html"),
    "a body cut short": Fault(kind="truncated"),
    "JSON cut short": Fault(kind="malformed"),
    "a rejected query": Fault(kind="status", status=400),
    "a busy ClickHouse": Fault(kind="query", clickhouse_code=241),
}


@pytest.mark.parametrize("version", ["v0.86.0", "v0.138.0"])
@pytest.mark.parametrize("bad", sorted(BAD_ANSWERS))
def test_a_stream_answered_badly_is_one_line_keeps_its_cursor_and_is_counted_once_next_round(
    busy_minutes, bad, version
):
    fault = BAD_ANSWERS[bad]
    # every error-log query, on v4 or v5, whatever the attempt
    fault = Fault(**{**fault.__dict__, "path": "/api/v", "times": -1, "body_contains": ERROR_LOGS_QUERY})
    behaviour = Behaviour(version=version, api_key=KEY, faults=[fault])
    end = T0_NS + 20 * MINUTE
    with (
        SignozEmulator(busy_minutes, behaviour) as emulator,
        source_for(emulator, max_attempts=2, timeout_seconds=0.5) as source,
    ):
        failed = source.poll(poll_window(T0_NS, end), frozenset())
        behaviour.faults.clear()
        known = frozenset(event.source_group_id for event in failed.events if event.source_group_id)
        again = source.poll(poll_window(T0_NS, end + 10 * MINUTE, failed), known)
    assert _counts(failed) == {"exception": 10, "span_error": 10}
    assert len(failed.failures) == 1
    line = failed.failures[0]
    assert line.startswith("error logs: not read this round: ") and line.endswith(
        "the next round reads it again"
    )
    assert "\n" not in line and "<title" not in line.lower(), line  # one line, no page pasted
    assert ("/api/v4/query_range" if version == "v0.86.0" else "/api/v5/query_range") in line
    assert failed.read_until == ns_to_datetime(T0_NS)  # the logs' cursor stays, and holds the round's
    assert again.failures == []
    assert _counts(again) == {"log": 10}  # every log row once; the other streams nothing twice
