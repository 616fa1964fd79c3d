"""Without `clickhouse_sql`, error logs are read as SigNoz's raw rows, whole. A record holding a NaN or
infinite number makes SigNoz's answer unrenderable (a 500, `unsupported value: NaN`), whatever else the page
holds: the page is split down to that record, which is read with named fields only, so the stream is still
read and every record counted, the others with all their attributes."""

from __future__ import annotations

import math
from typing import Any

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, RecordedSleep, source_for
from signoz_rows import attributes, error_log, otlp_lines

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.row_pages import split_requests
from rounds_bot.sources.signoz.times import ns_to_datetime

KEY = "test-key"
NAN = {"key": "ratio", "value": {"doubleValue": "NaN"}}
INFINITY = {"key": "limit", "value": {"doubleValue": "-Infinity"}}
RETRIES = {"key": "retries", "value": {"intValue": "3"}}


def _declined(at: int, *numbers: dict[str, Any]) -> dict[str, Any]:
    return {**error_log(at), "attributes": [*attributes({"order.id": str(at)}), *numbers]}


def _card_expired(at: int) -> dict[str, Any]:
    record = {"key": "exception.type", "value": {"stringValue": "CardError"}}
    message = {"key": "exception.message", "value": {"stringValue": "card 4 expired"}}
    return {**error_log(at), "attributes": [record, message, INFINITY]}


def _dataset(logs: list[dict[str, Any]]) -> Dataset:
    dataset = Dataset()
    load_otlp_lines(otlp_lines([], logs), dataset, where="unrenderable")
    return dataset


def _poll(
    dataset: Dataset, version: str = "v0.138.0", **options: Any
) -> tuple[PollResult, RecordedSleep, int]:
    behaviour = Behaviour(api_key=KEY, clickhouse_sql_allowed=False, version=version)
    sleep = RecordedSleep()
    window = Window(start=ns_to_datetime(T0_NS), end=ns_to_datetime(T0_NS + 600 * SECOND))
    with (
        SignozEmulator(dataset, behaviour) as emulator,
        source_for(emulator, sleep=sleep, **options) as source,
    ):
        result = source.poll(window, frozenset())
        return result, sleep, source.traffic.requests


def _logs(result: PollResult) -> dict[str, ErrorEvent]:
    """Each message's newest event (a group may come as its first and its last occurrence)."""
    assert result.failures == []
    logs = sorted(
        (event for event in result.events if event.kind == "log"), key=lambda event: event.timestamp
    )
    return {event.message: event for event in logs}


def _counts(result: PollResult) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.message] = counts.get(event.message, 0) + event.count
    return counts


def test_a_record_with_a_nan_number_is_counted_and_the_records_around_it_keep_every_attribute():
    at = T0_NS + 5 * SECOND
    logs = [_declined(at, RETRIES), _declined(at + SECOND, NAN), _declined(at + 2 * SECOND, RETRIES)]
    logs.append(_card_expired(at + 3 * SECOND))
    result, sleep, _ = _poll(_dataset(logs))
    events = _logs(result)
    assert _counts(result) == {"payment declined": 3, "card 4 expired": 1}
    declined = events["payment declined"].attributes  # the newest record, read whole
    assert declined["retries"] == 3 and declined["order.id"] == str(at + 2 * SECOND)
    expired = events["card 4 expired"]  # read with named fields only
    assert expired.error_type == "CardError"
    assert expired.service == "orders" and expired.environment == "production"
    assert "limit" not in expired.attributes
    assert sleep.waits == []  # SigNoz answers such a page the same way every time: not retried


def _requests_beyond_clean(numbers: list[dict[str, Any]]) -> tuple[int, PollResult]:
    """Requests a window of 300 records costs more than the same records without their numbers."""
    at = T0_NS + 5 * SECOND
    logs = [_declined(at + index * 10_000_000, numbers[index]) for index in range(300)]
    result, _, requests = _poll(_dataset(logs), raw_page_size=100)
    clean = [_declined(at + index * 10_000_000) for index in range(300)]
    _, _, clean_requests = _poll(_dataset(clean), raw_page_size=100)
    return requests - clean_requests, result


def test_one_unrenderable_record_costs_two_requests_a_halving_of_its_page():
    numbers = [RETRIES] * 300
    numbers[150] = NAN
    extra, result = _requests_beyond_clean(numbers)
    assert _counts(result) == {"payment declined": 300}
    assert extra <= 1 + 2 * math.ceil(math.log2(100)) + 1  # the failed page, the halvings, the named read


def test_a_window_of_nothing_but_unrenderable_records_costs_a_bounded_number_of_requests():
    extra, result = _requests_beyond_clean([NAN] * 300)
    assert _counts(result) == {"payment declined": 300}
    # each of the three pages: the failed page, its split, and one named read of the rest (two queries a
    # named read: string fields, then the error codes' numbers)
    assert extra <= 3 * (1 + split_requests(100, 2) + 2)


def test_a_page_costs_at_most_the_bound_the_docs_give():
    at = T0_NS + 5 * SECOND
    _, _, requests = _poll(_dataset([_declined(at + i * 10_000_000, NAN) for i in range(1000)]))
    _, _, clean = _poll(_dataset([_declined(at + i * 10_000_000, RETRIES) for i in range(1000)]))
    # docs/telemetry.md: "at most 4 x ceil(log2 n) + 4 more requests a page of n records" (n = 1,000: 44)
    assert requests - clean <= split_requests(1000, 2) + 2 == 44


@pytest.mark.parametrize("bad", [(10, 500), (0, 999), (1, 998), (250, 750), (998, 999)])
def test_before_v095_any_two_unrenderable_records_of_a_page_are_skipped_and_the_rest_read(bad):
    at = T0_NS + 5 * SECOND
    logs = [_declined(at + i * 10_000_000, NAN if i in bad else RETRIES) for i in range(1000)]
    result, _, _ = _poll(_dataset(logs), version="v0.90.0")
    assert result.failures == []
    assert _counts(result) == {"payment declined": 998}
    assert len(result.skipped) == 2


def _with_code(code: dict[str, Any], *numbers: dict[str, Any]) -> dict[str, Any]:
    record = {**error_log(T0_NS + 5 * SECOND), "attributes": [*attributes({"order.id": "7"}), code, *numbers]}
    return record


def _only_log(dataset: Dataset, **options: Any) -> ErrorEvent:
    result, _, _ = _poll(dataset, **options)
    (event,) = [event for event in _logs(result).values()]
    return event


@pytest.mark.parametrize(
    ("code", "options"),
    [
        ({"key": "error.code", "value": {"intValue": "1205"}}, {}),
        ({"key": "error.code", "value": {"stringValue": "1205"}}, {}),
        ({"key": "db.code", "value": {"intValue": "1205"}}, {"error_code_attributes": ("db.code",)}),
        ({"key": "db.code", "value": {"stringValue": "1205"}}, {"error_code_attributes": ("db.code",)}),
    ],
)
def test_a_record_read_by_name_keeps_its_error_code_whatever_its_type(code, options):
    whole = _only_log(_dataset([_with_code(code)]), **options)
    named = _only_log(_dataset([_with_code(code, NAN)]), **options)
    assert whole.attributes[code["key"]] in (1205, "1205")
    assert named.attributes[code["key"]] == whole.attributes[code["key"]]
    assert named.error_code == whole.error_code


def test_a_signoz_that_answers_every_column_skips_only_the_unrenderable_record():
    # before v0.95 SigNoz's logs list query selects its default columns whatever fields are named
    at = T0_NS + 5 * SECOND
    logs = [_declined(at, RETRIES), _declined(at + SECOND, NAN), _card_expired(at + 2 * SECOND)]
    result, _, _ = _poll(_dataset(logs), version="v0.90.0")
    assert _logs(result) and _counts(result) == {"payment declined": 1}
    assert len(result.skipped) == 2
    assert all("NaN or infinite" in skipped.reason for skipped in result.skipped)


def test_a_record_whose_error_code_itself_is_nan_is_counted_without_a_code():
    code = {"key": "error.code", "value": {"doubleValue": "NaN"}}
    named = _only_log(_dataset([_with_code(code)]))
    assert named.message == "payment declined" and named.error_code is None
