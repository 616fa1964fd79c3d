"""Without `clickhouse_sql`, SigNoz's error logs are grouped by rounds from raw rows: the group key reads a
record's error code as grouping reads an event's (`error.code`, then `ROUNDS_ERROR_CODE_ATTRIBUTES`), as a
string or as a number. Read from the string attribute alone, records of one message with different int codes
were one group, all counted under the first one's code."""

from __future__ import annotations

from typing import Any

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, RecordedSleep, source_for
from signoz_rows import error_log, otlp_lines

from rounds_bot.sources.base import Window
from rounds_bot.sources.signoz.error_logs import record_error_code
from rounds_bot.sources.signoz.times import ns_to_datetime


def _record(at: int, key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {**error_log(at), "attributes": [{"key": key, "value": value}]}


def _codes(logs: list[dict[str, Any]], key: str = "error.code", **options: Any) -> dict[object, int]:
    """Occurrences counted by the code attribute `key` of the event each group became."""
    dataset = Dataset()
    load_otlp_lines(otlp_lines([], logs), dataset, where="codes")
    behaviour = Behaviour(api_key="test-key", clickhouse_sql_allowed=False, version="v0.138.0")
    window = Window(start=ns_to_datetime(T0_NS), end=ns_to_datetime(T0_NS + 600 * SECOND))
    with (
        SignozEmulator(dataset, behaviour) as emulator,
        source_for(emulator, sleep=RecordedSleep(), **options) as source,
    ):
        result = source.poll(window, frozenset())
    assert result.failures == []
    counts: dict[object, int] = {}
    for event in result.events:
        if event.kind == "log":
            code = event.attributes.get(key)
            counts[code] = counts.get(code, 0) + event.count
    return counts


@pytest.mark.parametrize("form", ["intValue", "stringValue"])
def test_records_of_one_message_with_two_error_codes_are_two_groups(form: str) -> None:
    at = T0_NS + 5 * SECOND
    logs = [
        _record(at, "error.code", {form: "1205"}),
        _record(at + SECOND, "error.code", {form: "1213"}),
        _record(at + 2 * SECOND, "error.code", {form: "1213"}),
    ]
    found = _codes(logs)
    assert {str(code): count for code, count in found.items()} == {"1205": 1, "1213": 2}


def test_a_configured_code_attribute_splits_the_groups_too() -> None:
    at = T0_NS + 5 * SECOND
    logs = [
        _record(at, "db.code", {"intValue": "1205"}),
        _record(at + SECOND, "db.code", {"intValue": "1213"}),
    ]
    assert _codes(logs, "db.code", error_code_attributes=("db.code",)) == {1205: 1, 1213: 1}


def test_the_key_reads_a_code_as_the_event_holds_it() -> None:
    names = ("error.code", "db.code")
    assert record_error_code({}, {"error.code": 1205.0}, names) == "1205"
    assert record_error_code({"db.code": "E7"}, {"error.code": 1205.0}, names) == "1205"
    assert record_error_code({"error.code": " "}, {"db.code": 2.5}, names) == "2.5"
    assert record_error_code({}, {"error.code": 0.0, "db.code": float("nan")}, names) == ""
