"""Without `clickhouse_sql`, error logs are read as SigNoz's raw rows, whole. A record holding a NaN or
infinite number makes SigNoz's answer unrenderable (a 500, `unsupported value: NaN`), whatever else the page
holds: the page is split down to that record, which is read with named fields only, so the stream is still
read and every record counted, the others with all their attributes."""

from __future__ import annotations

import math
from typing import Any

from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, RecordedSleep, source_for
from signoz_rows import attributes, error_log, otlp_lines

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.row_pages import SPLIT_REQUESTS
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
    # each of the three pages: the failed page, at most SPLIT_REQUESTS halvings, one named read of each
    # part they leave (a part a halving, and one)
    assert extra <= 3 * (1 + 2 * SPLIT_REQUESTS + 1)


def test_a_signoz_that_answers_every_column_skips_only_the_unrenderable_record():
    # before v0.95 SigNoz's logs list query selects its default columns whatever fields are named
    at = T0_NS + 5 * SECOND
    logs = [_declined(at, RETRIES), _declined(at + SECOND, NAN), _card_expired(at + 2 * SECOND)]
    result, _, _ = _poll(_dataset(logs), version="v0.90.0")
    assert _logs(result) and _counts(result) == {"payment declined": 1}
    assert len(result.skipped) == 2
    assert all("NaN or infinite" in skipped.reason for skipped in result.skipped)
