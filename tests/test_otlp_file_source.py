"""The otlp-file source: OTLP/JSON lines as the OpenTelemetry Collector's file exporter writes them."""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rounds_bot.errors import ConfigError, SourceError
from rounds_bot.models import ErrorEvent
from rounds_bot.settings import load_settings
from rounds_bot.sources import otlp_file
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.factory import SUPPORTED_SPECS, source_from_spec
from rounds_bot.sources.neighbours import KEPT_BODY_CHARS, Neighbours, context_records
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.signoz import SignozSource

SAMPLE = Path(__file__).parent / "fixtures" / "otlp" / "shop_sample.otlp.jsonl"
SAMPLE_START = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


def poll(path: Path, window: Window = EVERYTHING) -> PollResult:
    return OtlpFileSource(path).poll(window, frozenset())


def by_message(result: PollResult) -> dict[str, ErrorEvent]:
    return {event.message: event for event in result.events}


@pytest.fixture(scope="module")
def sample() -> PollResult:
    return poll(SAMPLE)


# --- what becomes an error --------------------------------------------------------------------


def test_sample_yields_exactly_its_errors_and_no_noise(sample: PollResult) -> None:
    kinds = sorted(event.kind for event in sample.events)
    assert kinds == ["exception"] * 3 + ["log"] * 5 + ["span_error"] * 2
    assert sample.skipped == []
    messages = {event.message for event in sample.events}
    assert not {"invoice 51 sent", "retrying after error: connection reset", "error budget: 0.1%"} & messages


def test_exception_event_reads_type_message_stacktrace_and_resource(sample: PollResult) -> None:
    event = by_message(sample)["order 7731 is locked"]
    assert event.kind == "exception"
    assert event.error_type == "orders.errors.LockTimeout"
    assert event.stacktrace is not None
    assert event.stacktrace.startswith("Traceback (most recent call last):")
    assert event.service == "orders"
    assert event.service_version == "1.4.2"
    assert event.environment == "production"
    assert event.trace_id == "5b8efff798038103d269b633813fc60d"
    assert event.span_id == "eee19b7ec3c1b175"
    assert event.timestamp == SAMPLE_START + timedelta(seconds=1.049)


def test_error_code_attribute_becomes_the_error_code(sample: PollResult) -> None:
    assert by_message(sample)["order 7731 is locked"].error_code == "ORDER_LOCKED"
    rendered = by_message(sample)["invoice 52 could not be rendered: template 'eu-vat' missing"]
    assert rendered.error_code == "4012"


def test_every_any_value_kind_is_flattened_into_attributes(sample: PollResult) -> None:
    attributes = by_message(sample)["order 7731 is locked"].attributes
    assert attributes["http.response.status_code"] == 500
    assert attributes["retry.ratio"] == 0.25
    assert attributes["feature.enabled"] is True
    assert attributes["order.tags"] == '["gift",3]'
    assert attributes["http.request.header.x-request-id"] == "r-19"
    assert attributes["http.request.header.x-retries"] == 2
    assert attributes["payload.digest"] == "AQID"
    assert attributes["exception.escaped"] == "True"
    assert attributes["host.name"] == "orders-7f9c-abcde"
    assert "nothing" not in attributes
    assert not {"exception.type", "exception.message", "exception.stacktrace"} & set(attributes)


def test_error_span_without_exception_event_is_a_span_error_named_by_its_status(sample: PollResult) -> None:
    event = by_message(sample)["upstream timed out after 2000ms"]
    assert event.kind == "span_error"
    assert event.error_type == "timeout"
    assert event.timestamp == SAMPLE_START + timedelta(seconds=5)


def test_error_span_with_empty_status_message_is_named_by_the_span(sample: PollResult) -> None:
    event = by_message(sample)["SELECT orders"]
    assert event.kind == "span_error"
    assert event.stacktrace is None


def test_each_exception_event_of_a_span_is_its_own_error(sample: PollResult) -> None:
    events = [event for event in sample.events if event.message == "cart 88 already checked out"]
    assert len(events) == 2
    assert len({event.event_id for event in events}) == 2
    assert [event.stacktrace is not None for event in events] == [True, False]


def test_error_log_reads_body_severity_and_trace_context(sample: PollResult) -> None:
    event = by_message(sample)["invoice 52 could not be rendered: template 'eu-vat' missing"]
    assert event.kind == "log"
    assert event.severity == "ERROR"
    assert event.fatal is False
    assert event.service == "billing"
    assert event.environment == "staging"  # from the older deployment.environment key
    assert event.trace_id == "0af7651916cd43dd8448eb211c80319c"
    assert event.attributes["otel.scope.name"] == "billing.invoices"


def test_log_exception_attributes_are_read_like_a_span_exception(sample: PollResult) -> None:
    event = by_message(sample)["card ending 4242 declined (insufficient_funds)"]
    assert event.error_type == "billing.errors.CardDeclined"
    assert event.stacktrace is not None and "raise CardDeclined(card)" in event.stacktrace
    assert event.attributes["log.body"] == "Unhandled error while charging"


def test_fatal_severity_sets_fatal(sample: PollResult) -> None:
    event = by_message(sample)["cannot open ledger database: disk full"]
    assert event.fatal is True
    assert event.severity == "FATAL"


def test_severity_text_decides_when_the_number_is_missing(sample: PollResult) -> None:
    assert "bridge without severity numbers: payment webhook rejected" in by_message(sample)


def test_structured_body_is_read_by_its_message_field_and_observed_time_stands_in(sample: PollResult) -> None:
    event = by_message(sample)["refund failed"]  # (a map body: its JSON text is what was logged)
    assert event.attributes["log.body"] == '{"msg":"refund failed","refund":77}'
    assert event.attributes["refund"] == 77 and event.attributes["rounds.message_from"] == "msg"
    assert event.timestamp == SAMPLE_START + timedelta(seconds=16)


# --- ids and windows --------------------------------------------------------------------------


def test_event_ids_are_stable_across_reads_and_file_locations(tmp_path: Path, sample: PollResult) -> None:
    copy = tmp_path / "elsewhere.jsonl"
    shutil.copy(SAMPLE, copy)
    assert [event.event_id for event in poll(copy).events] == [event.event_id for event in sample.events]
    assert len({event.event_id for event in sample.events}) == len(sample.events)


def test_event_ids_are_those_earlier_releases_stored(sample: PollResult) -> None:
    """An id is what the database knows an occurrence by: reading the same records must give the ids an
    earlier release stored for them, whatever the reader's inner workings."""
    assert [(event.kind, event.event_id) for event in sample.events] == [
        ("exception", "ba198c476b73006bb81e7bf0e7eddd4b"),
        ("span_error", "f9c75317a4524e10f03cfcefb9d225ea"),
        ("span_error", "9489d5b4ee207df13eeacfbe359bcb42"),
        ("exception", "65e73d3488f4f51d1258fa632c80dcc3"),
        ("exception", "1e322e5cc32a4d807183811bf505b831"),
        ("log", "aa7be0158d248491262da6764b7a5add"),
        ("log", "068fdf6e28d12e2468580ed112fdf0f0"),
        ("log", "4f937aa9c214acaa0d94849bcbee7cc0"),
        ("log", "6cf130f72ddaf81beec3ab8326b2d034"),
        ("log", "68ded5613d6f70485ae78094898b185e"),
    ]


def test_base64_ids_give_the_same_event_ids_as_hex(tmp_path: Path, sample: PollResult) -> None:
    document = json.loads(SAMPLE.read_text().splitlines()[0])
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    span["traceId"] = "W47/95gDgQPSabYzgT/GDQ=="
    span["spanId"] = "7uGbfsPBsXU="
    path = tmp_path / "base64.jsonl"
    path.write_text(json.dumps(document) + "\n")
    [base64_event] = [event for event in poll(path).events if event.message == "order 7731 is locked"]
    assert base64_event.trace_id == "5b8efff798038103d269b633813fc60d"
    assert base64_event.event_id == by_message(sample)["order 7731 is locked"].event_id


def test_a_repeated_line_is_counted_once(tmp_path: Path, sample: PollResult) -> None:
    path = tmp_path / "twice.jsonl"
    path.write_text(SAMPLE.read_text() * 2)
    result = poll(path)
    assert len(result.events) == len(sample.events)
    assert any("repeated" in note for note in result.notes)


def test_errors_at_or_after_the_window_end_are_left_for_later(sample: PollResult) -> None:
    end = SAMPLE_START + timedelta(seconds=5)
    result = poll(SAMPLE, Window(start=end - timedelta(hours=1), end=end))
    assert {event.message for event in result.events} == {"order 7731 is locked", "SELECT orders"}
    assert any("left for a later round" in note for note in result.notes)


def test_the_window_start_does_not_hide_history(sample: PollResult) -> None:
    window = Window(start=datetime(2099, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
    assert len(poll(SAMPLE, window).events) == len(sample.events)


# --- bad input --------------------------------------------------------------------------------


def test_malformed_lines_are_skipped_with_file_and_line_and_the_rest_is_read(tmp_path: Path) -> None:
    good = SAMPLE.read_text().splitlines()[0]
    lines = [
        "{not json",
        '{"resourceSpans": {"resource": {}}}',
        good.replace('"endTimeUnixNano":"1773480413012000000"', '"endTimeUnixNano":"soon"'),
        '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":1.5,"severityNumber":17}]}]}]}',
        "[1, 2, 3]",
        '{"hello": "world"}',
        good,
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = poll(path)
    assert [record.where for record in result.skipped] == [f"{path}:{number}" for number in range(1, 7)]
    reasons = [record.reason for record in result.skipped]
    assert reasons[0].startswith("invalid JSON")
    assert reasons[1].startswith("resourceSpans:")
    # what was wrong and where, never the value itself (it may be a secret)
    assert "endTimeUnixNano" in reasons[2] and "a string of 4 characters" in reasons[2]
    assert "soon" not in reasons[2]
    assert "timeUnixNano" in reasons[3] and "a number" in reasons[3]
    assert "neither resourceSpans nor resourceLogs" in reasons[5]
    assert len(result.events) == 5  # the last line, read in full


def test_a_record_without_any_timestamp_is_skipped_alone(tmp_path: Path) -> None:
    records = [
        {"severityNumber": 17, "body": {"stringValue": "no time at all"}},
        {"timeUnixNano": "1773480413000000000", "severityNumber": 17, "body": {"stringValue": "fine"}},
    ]
    path = tmp_path / "untimed.jsonl"
    path.write_text(json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}) + "\n")
    result = poll(path)
    assert [event.message for event in result.events] == ["fine"]
    assert [record.where for record in result.skipped] == [f"{path}:1"]
    assert "no timestamp" in result.skipped[0].reason


def test_a_missing_file_is_a_source_error_naming_the_path_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(SourceError) as caught:
        poll(missing)
    assert str(missing) in str(caught.value)
    assert "does not exist" in str(caught.value)
    assert "otlp-file:PATH" in str(caught.value)


def test_a_directory_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="is a directory"):
        poll(tmp_path)


# --- the factory ------------------------------------------------------------------------------


def test_factory_builds_a_file_source_from_its_spec() -> None:
    source = source_from_spec(f"otlp-file:{SAMPLE}")
    assert isinstance(source, OtlpFileSource)
    assert source.path == SAMPLE
    assert source.name == f"otlp-file:{SAMPLE}"


def test_factory_rejects_an_unknown_scheme_naming_it_and_listing_the_supported_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        source_from_spec("kafka:orders")
    message = str(caught.value)
    assert "'kafka:orders'" in message
    assert all(spec in message for spec in ("otlp-file:PATH", "signoz"))
    assert SUPPORTED_SPECS == ("otlp-file:PATH", "signoz")


def test_factory_rejects_a_file_spec_without_a_path() -> None:
    with pytest.raises(ConfigError, match="names no file"):
        source_from_spec("otlp-file:")


def test_factory_needs_the_signoz_url_from_settings(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="SIGNOZ_API_URL"):
        source_from_spec("signoz")
    clean_env.setenv("SIGNOZ_API_URL", "http://127.0.0.1:8080")
    clean_env.setenv("SIGNOZ_API_KEY", "test-key")
    source = source_from_spec("signoz", load_settings())
    assert isinstance(source, SignozSource)
    with source:
        assert source.name == "signoz:127.0.0.1:8080"


def test_a_utf8_byte_order_mark_does_not_cost_the_first_record(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes())
    with_bom, without = poll(path), poll(SAMPLE)
    assert not with_bom.skipped
    assert [e.event_id for e in with_bom.events] == [e.event_id for e in without.events]


def test_a_gzipped_file_is_read_like_the_plain_one(tmp_path: Path) -> None:
    path = tmp_path / "sample.jsonl.gz"
    path.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    assert [e.event_id for e in poll(path).events] == [e.event_id for e in poll(SAMPLE).events]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (bytes(range(256)) * 400, "binary data"),
        (b"\x1f\x8b" + b"garbage" * 100, "damaged gzip"),
        (b"timestamp,service,message\n" + b"2026-01-01,api,boom\n" * 5000, "invalid JSON"),
        (b"{not json}\n", "invalid JSON"),
    ],
)
def test_a_file_that_is_not_otlp_json_is_said_once_and_refused(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / "not-otlp.jsonl"
    path.write_bytes(content)
    with pytest.raises(SourceError, match="is not OTLP/JSON") as raised:
        poll(path)
    assert why in str(raised.value)


# --- the records before an error log ------------------------------------------------------------

TRACE_A = "0af7651916cd43dd8448eb211c80319c"
TRACE_B = "4bf92f3577b34da6a3ce929d0e0e4736"
T0 = 1_773_480_000_000_000_000  # nanoseconds, 2026-03-14


def log_record(seconds: float, body: str, *, severity: int = 9, trace: str = "", text: str = "") -> dict:
    record: dict = {
        "timeUnixNano": str(T0 + int(seconds * 1e9)),
        "severityNumber": severity,
        "body": {"stringValue": body},
    }
    if text:
        record["severityText"] = text
    if trace:
        record["traceId"] = trace
    return record


def logs_line(service: str, *records: dict) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    scope_logs = [{"scope": {"name": "app"}, "logRecords": list(records)}]
    return json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": scope_logs}]})


def context_of(tmp_path: Path, *lines: str) -> dict[str, list[tuple[str, str]]]:
    path = tmp_path / "logs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        event.message: [(record.severity, record.body) for record in event.context]
        for event in poll(path).events
    }


def test_an_error_log_carries_the_records_its_trace_logged_just_before(tmp_path: Path) -> None:
    context = context_of(
        tmp_path,
        logs_line(
            "checkout",
            log_record(0, "reserving stock for cart 44149", trace=TRACE_A, text="INFO"),
            log_record(1, "payment retry 1", severity=13, trace=TRACE_A),
            log_record(1.5, "another request's work", trace=TRACE_B),
            log_record(2, "order already exists", severity=17, trace=TRACE_A),
        ),
    )
    assert context["order already exists"] == [
        ("INFO", "reserving stock for cart 44149"),
        ("WARN", "payment retry 1"),  # no severityText: named by its number
    ]


def test_stale_records_other_services_and_untraced_records_are_not_a_traced_errors_neighbours(
    tmp_path: Path,
) -> None:
    context = context_of(
        tmp_path,
        logs_line("checkout", log_record(0, "two minutes before", trace=TRACE_A)),
        logs_line("billing", log_record(100, "same trace, other service", trace=TRACE_A)),
        logs_line("checkout", log_record(110, "untraced line of the service")),
        logs_line("checkout", log_record(120, "traced failure", severity=17, trace=TRACE_A)),
        logs_line("checkout", log_record(121, "untraced failure", severity=17)),
    )
    assert context["traced failure"] == []
    assert context["untraced failure"] == [("INFO", "untraced line of the service")]


def test_a_record_logged_after_the_error_is_not_before_it(tmp_path: Path) -> None:
    context = context_of(
        tmp_path,
        logs_line(
            "checkout",
            log_record(5, "written first, logged later", trace=TRACE_A),
            log_record(2, "the failure", severity=17, trace=TRACE_A),
        ),
    )
    assert context["the failure"] == []


def test_the_context_is_bounded_in_records_and_characters(tmp_path: Path) -> None:
    records = [log_record(index, f"step {index} " + "x" * 5_000, trace=TRACE_A) for index in range(9)]
    context = context_of(
        tmp_path, logs_line("checkout", *records, log_record(10, "failed", severity=17, trace=TRACE_A))
    )
    kept = context["failed"]
    assert [body.split()[1] for _, body in kept] == ["4", "5", "6", "7", "8"]  # the last five
    assert all(len(body) <= KEPT_BODY_CHARS for _, body in kept)


def test_the_keys_remembered_are_bounded_the_least_recent_forgotten_first() -> None:
    neighbours = Neighbours(max_keys=3)
    for index in range(5):
        neighbours.note("checkout", f"{index:032x}", T0, "INFO", 9, f"line {index}")
    neighbours.note("checkout", f"{2:032x}", T0 + 1, "INFO", 9, "line 2 again")  # 2 is used again
    neighbours.note("checkout", f"{5:032x}", T0 + 2, "INFO", 9, "line 5")
    assert len(neighbours) == 3
    assert neighbours.before("checkout", f"{3:032x}", T0 + 3) == []  # forgotten
    kept = context_records(neighbours.before("checkout", f"{2:032x}", T0 + 3))
    assert [record.body for record in kept] == [
        "line 2",
        "line 2 again",
    ]


def test_the_model_reading_gives_the_lean_readings_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (
        logs_line(
            "checkout",
            log_record(0, "reserving stock", trace=TRACE_A),
            log_record(1, "the failure", severity=17, trace=TRACE_A),
        ),
    )
    lean = context_of(tmp_path, *lines)
    monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)
    assert context_of(tmp_path, *lines) == lean == {"the failure": [("INFO", "reserving stock")]}
