"""The bundled demo telemetry: what it holds, that it reads cleanly, and that it regenerates
byte for byte from its generator."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.demo import DEMO_BUGS, demo_bug, demo_data_path
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from tools.demo.generate import write_demo
from tools.demo.stacktraces import JavaException, JavaFrame, java_stack_trace

TRUTH_FILE = Path(__file__).parent / "fixtures" / "demo_truth.json"
EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


@pytest.fixture(scope="module")
def demo() -> PollResult:
    return OtlpFileSource(demo_data_path()).poll(EVERYTHING, frozenset())


@pytest.fixture(scope="module")
def truth() -> dict[str, str]:
    return json.loads(TRUTH_FILE.read_text())["events"]


@pytest.fixture(scope="module")
def events_by_bug(demo: PollResult, truth: dict[str, str]) -> dict[str, list[ErrorEvent]]:
    grouped: dict[str, list[ErrorEvent]] = defaultdict(list)
    for event in demo.events:
        grouped[truth[event.event_id]].append(event)
    return grouped


# --- the manifest -----------------------------------------------------------------------------


def test_manifest_has_at_least_eight_bugs_four_services_and_four_runtimes() -> None:
    assert len(DEMO_BUGS) >= 8
    assert len({bug.service for bug in DEMO_BUGS}) >= 4
    assert {bug.runtime for bug in DEMO_BUGS} >= {"python", "java", "nodejs", "go"}
    assert len({bug.id for bug in DEMO_BUGS}) == len(DEMO_BUGS)


def test_manifest_has_frequent_bugs_and_one_offs() -> None:
    counts = sorted(bug.expected_count for bug in DEMO_BUGS)
    assert counts[0] == 1
    assert counts[-1] >= 200
    assert sum(count >= 200 for count in counts) >= 2


def test_manifest_covers_exceptions_span_errors_and_error_logs() -> None:
    assert {bug.kind for bug in DEMO_BUGS} == {"exception", "span_error", "log"}


# --- the file ---------------------------------------------------------------------------------


def test_demo_file_ships_inside_the_package_and_stays_small() -> None:
    path = demo_data_path()
    assert path.is_file()
    assert path.parent.name == "data" and path.parent.parent.name == "rounds_bot"
    assert path.stat().st_size < 2_000_000


def test_demo_file_is_otlp_json_with_hex_ids_and_both_signals() -> None:
    signals: Counter[str] = Counter()
    with demo_data_path().open(encoding="utf-8") as lines:
        for line in lines:
            document = json.loads(line)
            signals.update(document.keys())
            for resource_spans in document.get("resourceSpans", []):
                span = resource_spans["scopeSpans"][0]["spans"][0]
                assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"])
                assert re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
                assert isinstance(span["kind"], int)
                assert isinstance(span["startTimeUnixNano"], str)
    assert signals["resourceSpans"] > 0 and signals["resourceLogs"] > 0


def test_demo_reads_without_a_skipped_record(demo: PollResult) -> None:
    assert demo.skipped == []


def test_every_error_in_the_demo_belongs_to_a_manifest_bug(demo: PollResult, truth: dict[str, str]) -> None:
    assert {event.event_id for event in demo.events} == set(truth)
    assert len(demo.events) == sum(bug.expected_count for bug in DEMO_BUGS)


def test_each_bug_produces_its_expected_count_of_the_expected_kind(
    events_by_bug: dict[str, list[ErrorEvent]],
) -> None:
    for bug in DEMO_BUGS:
        events = events_by_bug[bug.id]
        assert len(events) == bug.expected_count, bug.id
        assert {event.kind for event in events} == {bug.kind}, bug.id
        assert {event.service for event in events} == {bug.service}, bug.id


def test_noise_is_in_the_file_but_not_among_the_errors(demo: PollResult) -> None:
    severities: Counter[int] = Counter()
    ok_spans = 0
    with demo_data_path().open(encoding="utf-8") as lines:
        for line in lines:
            document = json.loads(line)
            for resource_logs in document.get("resourceLogs", []):
                for scope_logs in resource_logs["scopeLogs"]:
                    severities.update(record["severityNumber"] for record in scope_logs["logRecords"])
            for resource_spans in document.get("resourceSpans", []):
                for scope_spans in resource_spans["scopeSpans"]:
                    ok_spans += sum(
                        span.get("status", {}).get("code", 0) != 2 and not span.get("events")
                        for span in scope_spans["spans"]
                    )
    assert severities[9] >= 50 and severities[13] >= 50  # INFO and WARN
    assert ok_spans >= 200
    assert all(event.kind != "log" or event.severity in ("ERROR", "FATAL") for event in demo.events)


def test_each_runtime_writes_its_own_stack_trace_format(events_by_bug: dict[str, list[ErrorEvent]]) -> None:
    def traces(runtime: str) -> str:
        return "\n".join(
            event.stacktrace or ""
            for bug in DEMO_BUGS
            if bug.runtime == runtime
            for event in events_by_bug[bug.id]
        )

    python, java, node, go = traces("python"), traces("java"), traces("nodejs"), traces("go")
    assert "Traceback (most recent call last):" in python
    assert "During handling of the above exception, another exception occurred:" in python
    assert re.search(r'^  File "/app/checkout/pricing\.py", line \d+, in apply_discount$', python, re.M)
    assert re.search(r"^\tat [\w.$]+\.\w+\(\w+\.java:\d+\)$", java, re.M)
    assert re.search(r"^Caused by: ", java, re.M)
    assert re.search(r"^\t\.\.\. \d+ more$", java, re.M)
    assert re.search(r"^    at \w+ \(/app/src/[\w/]+\.js:\d+:\d+\)$", node, re.M)
    assert re.search(r"^panic: ", go, re.M)
    assert "goroutine 1 [running]:" in go
    assert re.search(r"^\t/src/[\w/]+\.go:\d+( \+0x[0-9a-f]+)?$", go, re.M)


def test_error_logs_without_stack_traces_are_present(events_by_bug: dict[str, list[ErrorEvent]]) -> None:
    plain_logs = [
        event
        for events in events_by_bug.values()
        for event in events
        if event.kind == "log" and not event.stacktrace
    ]
    assert len(plain_logs) >= 100
    assert any(event.fatal for event in plain_logs)


def test_one_bug_spans_versions_environments_and_call_paths(
    events_by_bug: dict[str, list[ErrorEvent]],
) -> None:
    events = events_by_bug["checkout-discount-currency-keyerror"]
    assert {event.service_version for event in events} == {"2.3.0", "2.3.1"}
    assert {event.environment for event in events} == {"production", "staging"}
    entry_points = {
        re.findall(r"in (place_order|preview_cart)$", event.stacktrace or "", re.M)[0] for event in events
    }
    assert entry_points == {"place_order", "preview_cart"}
    fault_lines = {re.search(r"line (\d+), in apply_discount", event.stacktrace or "")[1] for event in events}  # type: ignore[index]
    assert len(fault_lines) == 2


def test_messages_vary_in_ids_and_numbers_within_one_bug(events_by_bug: dict[str, list[ErrorEvent]]) -> None:
    for bug_id in ("checkout-duplicate-order", "inventory-stock-check-constraint", "shipping-label-timeout"):
        messages = {event.message for event in events_by_bug[bug_id]}
        assert len(messages) > demo_bug(bug_id).expected_count // 2, bug_id


def test_error_codes_come_from_the_error_code_attribute(events_by_bug: dict[str, list[ErrorEvent]]) -> None:
    assert {event.error_code for event in events_by_bug["notification-smtp-421"]} == {"SMTP_421"}
    assert {event.error_code for event in events_by_bug["gateway-session-redis-refused"]} == {"ECONNREFUSED"}


def test_demo_data_regenerates_byte_for_byte(tmp_path: Path) -> None:
    output, truth_output = tmp_path / "demo.otlp.jsonl", tmp_path / "demo_truth.json"
    write_demo(output, truth_output)
    assert output.read_bytes() == demo_data_path().read_bytes()
    assert truth_output.read_bytes() == TRUTH_FILE.read_bytes()


# --- the stack-trace writers ------------------------------------------------------------------


def test_java_caused_by_counts_the_frames_shared_with_the_enclosing_trace() -> None:
    caller = (JavaFrame("app.Main.run", "Main.java:10"), JavaFrame("app.Main.main", "Main.java:3"))
    outer = JavaException("app.Failure: outer", (JavaFrame("app.Service.call", "Service.java:20"), *caller))
    inner = JavaException("java.io.IOException: inner", (JavaFrame("app.Io.read", "Io.java:7"), *caller))
    assert java_stack_trace(outer, inner) == (
        "app.Failure: outer\n"
        "\tat app.Service.call(Service.java:20)\n"
        "\tat app.Main.run(Main.java:10)\n"
        "\tat app.Main.main(Main.java:3)\n"
        "Caused by: java.io.IOException: inner\n"
        "\tat app.Io.read(Io.java:7)\n"
        "\t... 2 more\n"
    )
