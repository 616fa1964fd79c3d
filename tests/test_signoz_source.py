"""SignozSource.poll against the emulator: what a round gets, and what it costs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from signoz_emulator import Behaviour, SignozEmulator, build_dataset
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_emulator.synthetic import SyntheticExceptions
from signoz_fixtures import (
    JAVA_TRACE,
    PY_TRACE,
    SECOND,
    T0_NS,
    VALUE_ERROR,
    WINDOW_END_NS,
    WINDOW_START_NS,
    fixture_dataset,
    fixture_window,
    source_for,
)

from rounds_bot.errors import SignozError
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.collector import span_kind
from rounds_bot.sources.signoz.times import ns_to_datetime

CHECKOUT_VALUE_ERROR = "1e59539e8effec84f7ec674dda15ddfa"
KINDS = ("exception", "span_error", "log")
PAYMENT_NPE = "d8f7c26258a536b9f2315fc6cf7e3094"


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return fixture_dataset()


@pytest.fixture
def emulator(dataset: Dataset) -> Iterator[SignozEmulator]:
    with SignozEmulator(dataset, Behaviour(api_key="test-key")) as running:
        yield running


def poll(emulator: SignozEmulator, known: frozenset[str] = frozenset(), **options) -> PollResult:
    with source_for(emulator, **options) as source:
        return source.poll(fixture_window(), known)


def by_kind(result: PollResult, kind: str) -> list[ErrorEvent]:
    """One event per group (a group's minutes come as several events), with the group's count."""
    groups: dict[str, ErrorEvent] = {}
    for event in sorted(result.events, key=lambda e: e.timestamp):
        if event.kind != kind:
            continue
        key = event.source_group_id or event.event_id
        if key in groups:
            groups[key] = groups[key].model_copy(update={"count": groups[key].count + event.count})
        else:
            groups[key] = event
    return sorted(groups.values(), key=lambda e: e.message)


def test_first_poll_reports_each_exception_group_once_with_its_window_count(emulator):
    result = poll(emulator)
    exceptions = {event.source_group_id: event for event in by_kind(result, "exception")}
    assert set(exceptions) == {CHECKOUT_VALUE_ERROR, PAYMENT_NPE, "a931b17d882d9e58bb396226559d91db"}
    value_error = exceptions[CHECKOUT_VALUE_ERROR]
    assert (value_error.count, value_error.error_type, value_error.message) == (
        3,
        "ValueError",
        VALUE_ERROR,
    )
    assert result.skipped == [] and result.notes == []


def test_exception_events_carry_a_representative_stack_trace_and_page_url(emulator):
    exceptions = {e.source_group_id: e for e in by_kind(poll(emulator), "exception")}
    value_error, npe = exceptions[CHECKOUT_VALUE_ERROR], exceptions[PAYMENT_NPE]
    assert value_error.stacktrace == PY_TRACE and npe.stacktrace == JAVA_TRACE
    assert value_error.service_version == "1.4.2" and value_error.environment == "production"
    assert value_error.trace_id and value_error.span_id
    # SigNoz's page for it: the trace, opened at the span that raised it
    assert value_error.source_url == (
        f"{emulator.url}/trace/{value_error.trace_id}?spanId={value_error.span_id}"
    )


def test_handled_exceptions_on_spans_without_error_status_are_still_read(emulator):
    exceptions = {e.error_type for e in by_kind(poll(emulator), "exception")}
    assert "KeyError" in exceptions


def test_error_spans_with_exception_events_are_left_to_the_error_index(emulator):
    (span_group,) = by_kind(poll(emulator), "span_error")
    assert span_group.count == 2
    assert span_group.message == "upstream timeout after 3000 ms"  # the first occurrence stands for it
    assert span_group.attributes["http.response.status_code"] == 504  # a number, as in OTLP
    assert span_group.source_group_id.startswith("signoz-span:")
    assert span_group.source_url == f"{emulator.url}/trace/{span_group.trace_id}?spanId={span_group.span_id}"


def _client_span_lines(kind: int | str) -> list[str]:
    """One failing client call whose parent is the request span that made it."""
    span = {
        "traceId": "5b8aa5a2d2c872e8321cf37308d69df2",
        "spanId": "051581bf3cb55c13",
        "parentSpanId": "ab1c2d3e4f506172",
        "name": "POST",
        "kind": kind,
        "startTimeUnixNano": str(T0_NS + 100 * SECOND),
        "endTimeUnixNano": str(T0_NS + 100 * SECOND + 5_000_000),
        "status": {"code": 2, "message": "502 Bad Gateway"},
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shipping"}}]}
    traces = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    return [json.dumps(traces)]


@pytest.mark.parametrize("sql_allowed", [True, False], ids=["clickhouse-sql", "raw-rows"])
@pytest.mark.parametrize("kind", [3, "SPAN_KIND_CLIENT"])
def test_span_errors_keep_their_parent_span_and_kind_on_both_paths(sql_allowed, kind):
    dataset = Dataset()
    load_otlp_lines(_client_span_lines(kind), dataset, where="test")
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=sql_allowed)) as emulator:
        (event,) = by_kind(poll(emulator), "span_error")
    assert event.parent_span_id == "ab1c2d3e4f506172"
    assert event.span_kind == "client"


def test_an_exception_knows_the_kind_and_parent_of_the_span_that_raised_it():
    """The checkout's server span raised; its parent is the gateway's failed client call."""
    exception = {
        "timeUnixNano": str(T0_NS + 100 * SECOND + 1_000_000),
        "name": "exception",
        "attributes": [
            {"key": "exception.type", "value": {"stringValue": "KeyError"}},
            {"key": "exception.message", "value": {"stringValue": "'currency'"}},
        ],
    }
    server = {
        "traceId": "5b8aa5a2d2c872e8321cf37308d69df2",
        "spanId": "a1542a9f608eebcb",
        "parentSpanId": "051581bf3cb55c13",
        "name": "POST /api/v1/checkout",
        "kind": "SPAN_KIND_SERVER",
        "startTimeUnixNano": str(T0_NS + 100 * SECOND),
        "endTimeUnixNano": str(T0_NS + 100 * SECOND + 2_000_000),
        "events": [exception],
        "status": {"code": 2},
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "checkout"}}]}
    traces = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [server]}]}]}
    dataset = Dataset()
    load_otlp_lines([*_client_span_lines(3), json.dumps(traces)], dataset, where="test")
    with SignozEmulator(dataset) as emulator:
        (raised,) = by_kind(poll(emulator), "exception")
    assert raised.span_id == "a1542a9f608eebcb" and raised.parent_span_id == "051581bf3cb55c13"
    assert raised.span_kind == "server"


def test_an_unspecified_span_kind_says_nothing():
    assert span_kind("Unspecified") is None and span_kind("") is None
    assert span_kind("Server") == "server" and span_kind("Consumer") == "consumer"


def test_error_logs_are_grouped_by_normalised_body_and_keep_severity(emulator):
    logs = {event.message: event for event in by_kind(poll(emulator), "log")}
    assert set(logs) == {"card declined", "cache miss storm on shard 7", "database connection lost"}
    payment = logs["card declined"]
    assert payment.count == 2 and payment.error_type == "PaymentDeclined"
    assert payment.stacktrace and payment.severity == "ERROR" and not payment.fatal
    assert logs["database connection lost"].fatal is True
    assert logs["database connection lost"].severity == "FATAL"
    assert logs["cache miss storm on shard 7"].severity == "ERROR"  # lowercase text, number 0


def test_reading_the_same_window_again_gives_the_same_event_ids(emulator):
    first, second = poll(emulator), poll(emulator)
    assert [e.event_id for e in first.events] == [e.event_id for e in second.events]
    assert len({e.event_id for e in first.events}) == len(first.events)


def test_known_groups_cost_no_detail_request_and_come_back_as_counts(emulator):
    known = frozenset(e.source_group_id for e in poll(emulator).events)
    emulator.requests.clear()
    result = poll(emulator, known)
    assert result.events == []
    counts: dict[str, int] = {}
    for count in result.known_group_counts:
        counts[count.source_group_id] = counts.get(count.source_group_id, 0) + count.count
    assert counts[CHECKOUT_VALUE_ERROR] == 3 and len(counts) == len(known)
    # one grouped query per stream: exceptions, error spans, error logs
    assert emulator.paths() == ["/api/v1/version", *["/api/v5/query_range"] * 3]
    assert result.requests == 4


def test_refused_clickhouse_sql_falls_back_to_raw_rows_with_the_same_groups(dataset):
    with SignozEmulator(dataset) as aggregated:
        expected = {(e.source_group_id, e.count) for kind in KINDS for e in by_kind(poll(aggregated), kind)}
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=False)) as refused:
        result = poll(refused)
        paths = refused.paths()
    assert {(e.source_group_id, e.count) for kind in KINDS for e in by_kind(result, kind)} == expected
    assert paths.count("/api/v1/errorFromGroupID") == 3
    assert any("clickhouse_sql" in note and "403" in note for note in result.notes)
    assert all(e.stacktrace for e in result.events if e.kind == "exception")


def test_old_signoz_events_as_json_strings_still_tell_exception_spans_apart(dataset):
    behaviour = Behaviour(version="v0.120.0", clickhouse_sql_allowed=False)
    with SignozEmulator(dataset, behaviour) as emulator:
        (span_group,) = by_kind(poll(emulator), "span_error")
    assert span_group.count == 2


def test_the_raw_row_cap_is_reported_in_notes(dataset):
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=False)) as emulator:
        result = poll(emulator, raw_row_cap=1)
    assert any("only the newest 1 were read" in note for note in result.notes)
    assert sum(1 for e in result.events if e.kind == "log") == 1


def test_the_detail_request_cap_is_reported_and_events_keep_type_and_message(dataset):
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=False)) as emulator:
        result = poll(emulator, detail_request_cap=1)
        assert emulator.paths().count("/api/v1/errorFromGroupID") == 1
    exceptions = by_kind(result, "exception")
    assert sum(1 for e in exceptions if e.stacktrace is None) == 2
    assert all(e.message for e in exceptions)
    assert any("cap of 1 detail requests" in note for note in result.notes)


class ReadsTransport(httpx.HTTPTransport):
    """Keeps what ClickHouse read for each request, as the emulator reports it."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, int]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.rows.append((request.url.path, int(response.headers.get("X-Emulator-Rows-Read", "0"))))
        return response


def test_sample_batches_read_the_span_of_their_groups_first_occurrences_not_the_window_each():
    events, half = 50_000, T0_NS + 1800 * SECOND
    # every group busy in the first half hour, then once more each, spread over the second half
    busy = SyntheticExceptions(events=events, groups=200, start_ns=T0_NS, end_ns=half)
    spread = SyntheticExceptions(events=200, groups=200, start_ns=half, end_ns=half + 1800 * SECOND)
    reads = ReadsTransport()
    with (
        SignozEmulator(Dataset(synthetic=[busy, spread]), Behaviour(report_reads=True)) as emulator,
        source_for(emulator, None, sample_batch_size=20, transport=reads) as source,
    ):
        result = source.poll(fixture_window(), frozenset())
    assert len(by_kind(result, "exception")) == 200 and all(event.stacktrace for event in result.events)
    samples = [rows for path, rows in reads.rows if path == "/api/v5/query_range"]
    assert len(samples) >= 13  # the groups, ten sample batches, their spans, and the span and log reads
    # the groups read the window once for the count and four times for the rule that leaves out the rows
    # another row of their trace encloses (`enclosed.py`: the window's rows, the traces of several rows,
    # the rows that may enclose, their spans' parents); each batch reads its own stretch (a granule or
    # so) for the same reasons, never the whole window again
    groups, batches = samples[0], samples[1:11]
    assert groups <= 5 * (events + 200)
    assert max(batches) <= events // 2


def test_list_errors_is_paged_when_groups_exceed_a_page(dataset):
    with SignozEmulator(dataset, Behaviour(clickhouse_sql_allowed=False)) as emulator:
        result = poll(emulator, list_page_size=1)
        assert len(by_kind(result, "exception")) == 3
        assert emulator.paths().count("/api/v1/listErrors") == 4


def test_signoz_without_a_sql_query_range_reads_exceptions_only_and_says_so(dataset):
    with SignozEmulator(dataset, Behaviour(version="v0.59.0")) as emulator:
        result = poll(emulator)
        assert not any("query_range" in path for path in emulator.paths())
    assert {e.kind for e in result.events} == {"exception"}
    assert all(e.stacktrace for e in result.events)
    assert any("needs v0.60.0+" in note for note in result.notes)


def test_signoz_older_than_the_exceptions_api_is_refused_with_an_upgrade_hint(dataset):
    with (
        SignozEmulator(dataset, Behaviour(version="v0.9.0")) as emulator,
        pytest.raises(SignozError, match="too old") as caught,
    ):
        poll(emulator)
    assert "upgrade SigNoz" in str(caught.value)


def test_source_name_names_the_host_and_port(emulator):
    with source_for(emulator) as source:
        assert source.name == f"signoz:{emulator.url.removeprefix('http://')}"


def test_an_empty_window_makes_no_query_beyond_the_version(emulator):
    window = fixture_window()
    with source_for(emulator) as source:
        result = source.poll(window.model_copy(update={"end": window.start}), frozenset())
    assert result.events == [] and result.requests == 1


LAST_VALUE_ERROR_NS = T0_NS + 1200 * SECOND + 987_654_321 + 5_000_000


def _value_error_count(result: PollResult) -> int:
    return sum(e.count for e in result.events if e.error_type == "ValueError")


def test_a_bot_clock_ahead_of_signoz_loses_nothing_to_the_thirty_second_clamp(dataset):
    # SigNoz's clock says the last ValueError is 10 s old; the bot's clock runs 60 s ahead of it
    server_now = (LAST_VALUE_ERROR_NS + 10 * SECOND) / 1e9
    window = Window(start=ns_to_datetime(WINDOW_START_NS), end=ns_to_datetime(int((server_now + 30) * 1e9)))
    clock = [server_now]
    with (
        SignozEmulator(dataset, Behaviour(api_key="test-key"), now=lambda: clock[0]) as emulator,
        source_for(emulator, wall_clock=lambda: clock[0] + 60) as source,
    ):
        first = source.poll(window, frozenset())
        assert first.read_until is not None and first.read_until < window.end
        assert any("SigNoz's own clock" in note for note in first.notes)
        later = clock[0] = server_now + 120  # both clocks move on; the next round resumes where data ended
        following = Window(start=first.read_until, end=ns_to_datetime(int((later - 60) * 1e9)))
        second = source.poll(following.model_copy(update={"resume_from": first.read_until}), frozenset())
    assert _value_error_count(first) + _value_error_count(second) == 3


def test_a_window_ending_thirty_seconds_before_now_carries_no_thirty_second_note(dataset):
    # as a round plans it (now - 30 s) with clocks that agree, late in a second: the Date header's whole
    # seconds move the end back by under a second, silently; only an end inside the 30 s is reported
    server_now = (LAST_VALUE_ERROR_NS + 40 * SECOND) / 1e9 + 0.999
    window = Window(start=ns_to_datetime(WINDOW_START_NS), end=ns_to_datetime(int((server_now - 30) * 1e9)))
    with (
        SignozEmulator(dataset, Behaviour(api_key="test-key"), now=lambda: server_now) as emulator,
        source_for(emulator, wall_clock=lambda: server_now) as source,
    ):
        result = source.poll(window, frozenset())
    assert not any("30 s" in note for note in result.notes), result.notes
    assert result.read_until is None or window.end - result.read_until < timedelta(seconds=2)
    assert _value_error_count(result) == 3


def test_consecutive_windows_with_sub_millisecond_ends_count_each_occurrence_once(emulator):
    # a boundary inside the millisecond of an occurrence: v5 windows round to whole milliseconds
    boundary = ns_to_datetime(LAST_VALUE_ERROR_NS + 400_000)  # 0.4 ms after it, same millisecond
    with source_for(emulator) as source:
        first = source.poll(Window(start=ns_to_datetime(WINDOW_START_NS), end=boundary), frozenset())
        rest = Window(start=boundary, end=ns_to_datetime(WINDOW_END_NS), resume_from=boundary)
        second = source.poll(rest, frozenset())
    assert _value_error_count(first) + _value_error_count(second) == 3
    counted = [e.count for r in (first, second) for e in r.events if e.kind == "span_error"]
    assert sum(counted) == 2


DEMO_DATA = Path(__file__).parent.parent / "rounds_bot" / "data" / "demo.otlp.jsonl"


@pytest.mark.skipif(not DEMO_DATA.exists(), reason="the shipped demo data is not there")
def test_the_shipped_demo_data_can_be_polled_as_a_user_would_try_it():
    now_ns = 1_800_000_000 * 1_000_000_000
    dataset = build_dataset(
        [DEMO_DATA],
        rebase=True,
        synthetic_events=0,
        synthetic_groups=0,
        window_seconds=0,
        now_ns=now_ns,
    )
    window = Window(
        start=ns_to_datetime(now_ns - 24 * 3600 * 1_000_000_000),
        end=ns_to_datetime(now_ns - 30 * 1_000_000_000),
    )
    with (
        SignozEmulator(dataset, now=lambda: now_ns / 1e9) as emulator,
        source_for(emulator, None, wall_clock=lambda: now_ns / 1e9) as source,
    ):
        result = source.poll(window, frozenset())
    kinds = {event.kind for event in result.events}
    assert "exception" in kinds and result.skipped == []
    exceptions = sum(e.count for e in result.events if e.kind == "exception")
    assert exceptions == dataset.exception_rows()
