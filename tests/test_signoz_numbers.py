"""A NaN or infinite number attribute: SigNoz refuses to render it in a v5 answer, so rounds never selects
one, and the record that carries it is counted with its sample read, not a stream jammed round after round."""

from __future__ import annotations

import json
from typing import Any

import httpx
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import LOGS, Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_rows import error_log, error_span, exception_span, otlp_lines

from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.times import ns_to_datetime

KEY = "test-key"
AT = T0_NS + 5 * SECOND
NUMBERS = [
    {"key": "ratio", "value": {"doubleValue": "NaN"}},
    {"key": "limit", "value": {"doubleValue": "Infinity"}},
    {"key": "retries", "value": {"intValue": "3"}},
]


def _window() -> Window:
    return Window(start=ns_to_datetime(T0_NS), end=ns_to_datetime(T0_NS + 600 * SECOND))


def _dataset(spans: list[dict[str, Any]], logs: list[dict[str, Any]], **flags: bool) -> Dataset:
    dataset = Dataset(**flags)  # type: ignore[arg-type]
    load_otlp_lines(otlp_lines(spans, logs), dataset, where="numbers")
    return dataset


def _poll(dataset: Dataset) -> PollResult:
    with SignozEmulator(dataset, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        return source.poll(_window(), frozenset())


def _only(result: PollResult, kind: str) -> dict[str, Any]:
    assert result.failures == []
    events = [event for event in result.events if event.kind == kind]
    assert [event.count for event in events] == [1]
    return events[0].attributes


def test_a_v5_answer_holding_nan_is_refused_as_signoz_renders_it():
    dataset = _dataset([], [{**error_log(AT), "attributes": NUMBERS}])
    assert any(row["attributes_number"] for row in dataset.logs)
    query = {
        "schemaVersion": "v1",
        "start": T0_NS // 1_000_000,
        "end": (T0_NS + 600 * SECOND) // 1_000_000,
        "requestType": "raw",
        "compositeQuery": {
            "queries": [
                {
                    "type": "clickhouse_sql",
                    "spec": {
                        "name": "A",
                        "disabled": False,
                        "query": f"SELECT attributes_number FROM {LOGS}",
                    },
                }
            ]
        },
        "formatOptions": {"formatTableResultForUI": False, "fillGaps": False},
        "variables": {},
    }
    with SignozEmulator(dataset, Behaviour(api_key=KEY)) as emulator:
        answer = httpx.post(f"{emulator.url}/api/v5/query_range", json=query, headers={"SIGNOZ-API-KEY": KEY})
    assert answer.status_code == 500
    error = json.loads(answer.text)["error"]
    assert error["type"] == "internal" and error["code"] == "unknown"
    assert error["message"].startswith("unsupported value: ")


def test_an_error_log_with_a_nan_number_is_counted_and_its_sample_read():
    # the logs exporter stores a double as it is
    result = _poll(_dataset([], [{**error_log(AT), "attributes": NUMBERS}]))
    attributes = _only(result, "log")
    assert attributes["retries"] == 3
    assert "ratio" not in attributes and "limit" not in attributes


def test_an_error_span_with_a_nan_number_from_an_older_collector_is_counted_and_its_sample_read():
    span = {**error_span(0, AT), "attributes": NUMBERS}
    dataset = _dataset([span], [], collector_skips_non_finite_span_numbers=False)
    assert "ratio" in dataset.spans[0]["attributes_number"]
    attributes = _only(_poll(dataset), "span_error")
    assert attributes["retries"] == 3
    assert "ratio" not in attributes and "limit" not in attributes


def test_an_exception_on_a_span_with_a_nan_number_is_counted_and_its_span_read():
    span = {**exception_span(0, AT), "attributes": NUMBERS}
    dataset = _dataset([span], [], collector_skips_non_finite_span_numbers=False)
    attributes = _only(_poll(dataset), "exception")
    assert attributes["retries"] == 3
    assert "ratio" not in attributes and "limit" not in attributes


def test_todays_collector_leaves_a_spans_nan_number_out():
    dataset = _dataset([{**error_span(0, AT), "attributes": NUMBERS}], [])
    assert dataset.spans[0]["attributes_number"] == {"retries": 3.0}
