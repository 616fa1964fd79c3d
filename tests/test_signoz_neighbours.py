"""The log records just before a SigNoz error log: the same context the OTLP file source gives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from signoz_emulator import Behaviour, Fault, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, fixture_window, source_for

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import PollResult
from rounds_bot.sources.otlp_file import OtlpFileSource

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
OTHER_TRACE = "00f067aa0ba902b74bf92f3577b34da6"
ERROR_AT = T0_NS + 600 * SECOND


def _record(at_ns: int, severity: str, number: int, body: str, trace: str = TRACE) -> dict[str, Any]:
    return {
        "timeUnixNano": str(at_ns),
        "severityText": severity,
        "severityNumber": number,
        "body": {"stringValue": body},
        "traceId": trace,
        "spanId": "00f067aa0ba902b7",
    }


def _telemetry() -> list[str]:
    """Seven records below ERROR in the error's trace (one too old, one after it), one in another trace,
    one of another service in the same trace, and the error."""
    checkout = [
        _record(ERROR_AT - 90 * SECOND, "INFO", 9, "too long before the error"),
        *(_record(ERROR_AT - (50 - i) * SECOND, "INFO", 9, f"step {i} of the checkout") for i in range(5)),
        _record(ERROR_AT - 2 * SECOND, "WARN", 13, "card declined once, retrying " + "x" * 2_000),
        _record(ERROR_AT - SECOND, "DEBUG", 5, "another trace", trace=OTHER_TRACE),
        _record(ERROR_AT, "ERROR", 17, "payment failed for order 1234"),
        _record(ERROR_AT + SECOND, "INFO", 9, "after the error"),
    ]
    billing = [_record(ERROR_AT - 3 * SECOND, "INFO", 9, "billing of the same trace")]

    def resource_logs(service: str, records: list[dict[str, Any]]) -> dict[str, Any]:
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
        return {"resource": resource, "scopeLogs": [{"logRecords": records}]}

    lines = {"resourceLogs": [resource_logs("checkout", checkout), resource_logs("billing", billing)]}
    return [json.dumps(lines)]


def _dataset() -> Dataset:
    dataset = Dataset()
    load_otlp_lines(_telemetry(), dataset, where="test")
    return dataset


def _poll(behaviour: Behaviour) -> PollResult:
    with SignozEmulator(_dataset(), behaviour) as emulator, source_for(emulator) as source:
        return source.poll(fixture_window(), frozenset())


def _signoz_log(behaviour: Behaviour) -> ErrorEvent:
    (event,) = [event for event in _poll(behaviour).events if event.kind == "log"]
    return event


def test_a_signoz_error_log_carries_the_neighbours_the_file_source_gives_it(tmp_path: Path):
    path = tmp_path / "telemetry.jsonl"
    path.write_text("\n".join(_telemetry()) + "\n")
    (from_file,) = [e for e in OtlpFileSource(path).poll(fixture_window()).events if e.kind == "log"]
    from_signoz = _signoz_log(Behaviour(api_key="test-key"))
    assert len(from_signoz.context) == 5
    assert [r.body[:20] for r in from_signoz.context] == [
        "step 1 of the checko",
        "step 2 of the checko",
        "step 3 of the checko",
        "step 4 of the checko",
        "card declined once, ",
    ]
    assert from_signoz.context == from_file.context


def test_a_failing_neighbour_query_leaves_the_error_log_without_context():
    fault = Fault("query", times=-1, body_contains="AS error_index")
    result = _poll(Behaviour(api_key="test-key", faults=[fault]))
    (event,) = [event for event in result.events if event.kind == "log"]
    assert event.message == "payment failed for order 1234"
    assert event.context == []
    assert result.failures == []  # the error logs were read and counted all the same
    assert any("log records before the new error logs were not read" in note for note in result.notes)


def test_without_clickhouse_sql_error_logs_come_without_context():
    event = _signoz_log(Behaviour(api_key="test-key", clickhouse_sql_allowed=False))
    assert event.message == "payment failed for order 1234"
    assert event.context == []
