"""Without `clickhouse_sql` rounds pages through raw error rows by offset, newest first. ClickHouse returns
rows tied on the ORDER BY in any order, a new one on each query, and the collector writes rows late, between
two page queries: every row of the window is still counted once, and a run of tied rows longer than a page
ends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from signoz_emulator import Behaviour, LateRows, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import counts_by_kind, poll_window
from signoz_rows import error_span, otlp_lines

from rounds_bot.sources.base import PollResult

KEY = "test-key"
MINUTE = 60 * SECOND
AT = T0_NS + 5 * MINUTE


def _spans(instants: list[int], first_index: int = 0) -> Dataset:
    """One error span (one group: same service, name and status message) at each instant."""
    dataset = Dataset()
    spans = [error_span(first_index + n, at) for n, at in enumerate(instants)]
    load_otlp_lines(otlp_lines(spans, []), dataset, where="tied")
    return dataset


def _span_errors(result: PollResult) -> int:
    assert result.failures == []
    return counts_by_kind(result).get("span_error", 0)


def _raw_span_pages(emulator: SignozEmulator) -> list[dict[str, Any]]:
    pages = []
    for request in emulator.requests:
        if request.path != "/api/v5/query_range":
            continue
        body = json.loads(request.body)
        spec = body["compositeQuery"]["queries"][0]["spec"]
        if body["requestType"] == "raw" and spec.get("signal") == "traces":
            pages.append(spec)
    return pages


def _poll_raw(
    dataset: Dataset, page_size: int, behaviour: Behaviour | None = None
) -> tuple[PollResult, SignozEmulator]:
    """A round over the dataset by raw rows (the key may not run clickhouse_sql), `page_size` rows a page."""
    behaviour = behaviour or Behaviour(api_key=KEY, clickhouse_sql_allowed=False)
    emulator = SignozEmulator(dataset, behaviour)
    with emulator, source_for(emulator, raw_page_size=page_size) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    return result, emulator


def _poll(dataset: Dataset, page_size: int, behaviour: Behaviour | None = None) -> tuple[int, SignozEmulator]:
    result, emulator = _poll_raw(dataset, page_size, behaviour)
    return _span_errors(result), emulator


def test_the_emulator_orders_tied_rows_anew_on_each_query_and_keeps_the_order_by():
    dataset = _spans([AT] * 6 + [AT - SECOND] * 6)
    behaviour = Behaviour(api_key=KEY)
    with SignozEmulator(dataset, behaviour) as emulator:
        api = emulator.api()
        query = {
            "name": "A",
            "signal": "traces",
            "filter": {"expression": "has_error = true"},
            "order": [{"key": {"name": "timestamp"}, "direction": "desc"}],
            "limit": 100,
        }
        request = {
            "schemaVersion": "v1",
            "start": T0_NS // 1_000_000,
            "end": (T0_NS + 20 * MINUTE) // 1_000_000,
            "requestType": "raw",
            "compositeQuery": {"queries": [{"type": "builder_query", "spec": query}]},
        }
        answers = []
        for _ in range(4):
            rows = json.loads(api.query_range(json.dumps(request).encode()).body)["data"]["data"]["results"]
            answers.append([row["data"]["span_id"] for row in rows[0]["rows"]])
    newest = {error_span(n, AT)["spanId"] for n in range(6)}
    for answer in answers:
        assert set(answer[:6]) == newest  # the ORDER BY holds; only its ties move
    assert len({tuple(answer) for answer in answers}) > 1


def test_error_spans_sharing_a_timestamp_across_page_boundaries_are_each_counted_once():
    # thirty spans in three instants, pages of four: ClickHouse may place a tied span on two pages or none
    dataset = _spans([AT] * 10 + [AT - SECOND] * 10 + [AT - 2 * SECOND] * 10)
    counted, _ = _poll(dataset, page_size=4)
    assert counted == 30


def test_a_run_of_tied_rows_longer_than_a_page_is_read_through_once_and_ends():
    counted, emulator = _poll(_spans([AT] * 7), page_size=3)
    assert counted == 7
    # pages of three at offsets 0, 3, 6: the third is short, and ends the read
    assert [(page["limit"], page["offset"]) for page in _raw_span_pages(emulator)] == [(3, 0), (3, 3), (3, 6)]


def test_rows_written_late_between_two_pages_lose_no_row_of_the_window():
    # twelve spans in three tied instants; after the first page the collector writes three spans newer than
    # all of them (they push every row down three places: read twice, counted once) and two older ones
    # (they land past the pages read so far: read in this round)
    dataset = _spans([AT] * 4 + [AT - SECOND] * 4 + [AT - 2 * SECOND] * 4)
    late = _spans([AT + SECOND] * 3 + [AT - 3 * SECOND] * 2, first_index=100)
    behaviour = Behaviour(api_key=KEY, clickhouse_sql_allowed=False)
    behaviour.late_rows.append(LateRows(late, after=1, body_contains='"signal": "traces"'))
    counted, emulator = _poll(dataset, page_size=4, behaviour=behaviour)
    assert behaviour.late_rows == []  # they arrived
    # the newer three landed among rows read already: the next round's overlap reads them
    assert counted == 12 + 2
    assert [page["offset"] for page in _raw_span_pages(emulator)] == [0, 4, 8, 12, 16]


@pytest.mark.parametrize("page_size", [1, 2, 5])
def test_tied_error_logs_are_each_counted_once(page_size):
    # a log query is ordered by timestamp and the id the exporter gives each record: never tied
    dataset = Dataset()
    logs = [
        {
            "timeUnixNano": str(AT),
            "severityText": "ERROR",
            "body": {"stringValue": f"payment {n} declined"},
            "attributes": [{"key": "order.id", "value": {"stringValue": str(n)}}],
        }
        for n in range(7)
    ]
    load_otlp_lines(otlp_lines([], logs), dataset, where="tied")
    result, _ = _poll_raw(dataset, page_size)
    assert result.failures == []
    assert counts_by_kind(result).get("log", 0) == 7
