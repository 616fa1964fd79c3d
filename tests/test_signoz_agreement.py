"""What ClickHouse computes and what rounds computes in Python for the no-SQL fallback agree."""

from __future__ import annotations

import json

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_emulator.engine import Engine
from signoz_fixtures import SECOND, T0_NS, fixture_window, source_for

from rounds_bot.sources.signoz.collector import normalise_message
from rounds_bot.sources.signoz.queries import normalised, sql_string

NON_ASCII = [
    "user ٣٤ not found in shard 7",  # Arabic-Indic digits: not \d for RE2
    "Straße 12 ist gesperrt",
    "order １２３ failed",  # full-width digits
    "token ＡＢＣＤＥＦ０１２３４５６７８９０ rejected",
]


@pytest.mark.parametrize("text", NON_ASCII)
def test_python_masks_a_message_exactly_as_clickhouse_does(text):
    row = Engine.shared().query(f"SELECT {normalised(sql_string(text))} AS masked").rows[0]
    assert normalise_message(text) == row["masked"]


def _otlp(spans: list[dict], logs: list[dict], resource: dict[str, str]) -> list[str]:
    attributes = [{"key": k, "value": {"stringValue": v}} for k, v in resource.items()]
    return [
        json.dumps(
            {"resourceSpans": [{"resource": {"attributes": attributes}, "scopeSpans": [{"spans": spans}]}]}
        ),
        json.dumps(
            {"resourceLogs": [{"resource": {"attributes": attributes}, "scopeLogs": [{"logRecords": logs}]}]}
        ),
    ]


def _span(index: int, message: str) -> dict:
    at = T0_NS + (100 + index) * SECOND
    return {
        "traceId": f"{index:032x}",
        "spanId": f"{index:016x}",
        "name": "GET /x",
        "startTimeUnixNano": str(at),
        "endTimeUnixNano": str(at + 1000),
        "status": {"code": 2, "message": message},
    }


def _log(index: int, severity: str, number: int, body: str) -> dict:
    record = {
        "timeUnixNano": str(T0_NS + (200 + index) * SECOND),
        "severityText": severity,
        "body": {"stringValue": body},
    }
    if number:
        record["severityNumber"] = number
    return record


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    dataset = Dataset()
    spans = [_span(i, message) for i, message in enumerate(NON_ASCII)]
    logs = [
        _log(0, "Error", 0, "mixed case severity text"),
        _log(1, "ERROR", 0, "upper case severity text"),
        _log(2, "warn", 13, "a warning, not an error"),
        *[_log(3 + i, "ERROR", 17, message) for i, message in enumerate(NON_ASCII)],
    ]
    # no service.version, no deployment.environment: SigNoz answers null for them in raw rows
    load_otlp_lines(_otlp(spans, logs, {"service.name": "svc"}), dataset, where="agreement")
    return dataset


def _groups(dataset: Dataset, *, sql: bool) -> tuple[set[str], list]:
    behaviour = Behaviour(api_key="test-key", clickhouse_sql_allowed=sql)
    with SignozEmulator(dataset, behaviour) as emulator, source_for(emulator) as source:
        result = source.poll(fixture_window(), frozenset())
    return {event.source_group_id or "" for event in result.events}, result.skipped


def test_the_sql_and_the_raw_paths_find_the_same_groups_with_non_ascii_messages(dataset):
    with_sql, skipped_sql = _groups(dataset, sql=True)
    without_sql, skipped_raw = _groups(dataset, sql=False)
    assert skipped_sql == [] and skipped_raw == []  # null resource fields are not bad rows
    assert with_sql == without_sql
    assert len([g for g in with_sql if g.startswith("signoz-span")]) == len(NON_ASCII)


@pytest.mark.parametrize("sql", [True, False])
def test_one_severity_rule_catches_error_in_any_ascii_case_on_both_paths(dataset, sql):
    behaviour = Behaviour(api_key="test-key", clickhouse_sql_allowed=sql)
    with SignozEmulator(dataset, behaviour) as emulator, source_for(emulator) as source:
        result = source.poll(fixture_window(), frozenset())
    bodies = {event.message for event in result.events if event.kind == "log"}
    assert {"mixed case severity text", "upper case severity text"} <= bodies
    assert "a warning, not an error" not in bodies
