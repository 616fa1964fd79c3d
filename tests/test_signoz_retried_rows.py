"""A batch the collector retried is written twice, equal but for the ids it makes as it writes; each record
in it is one occurrence, whether the copy is there when a round reads its minute or arrives later."""

from __future__ import annotations

from typing import Any

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import counts_by_kind, poll_window
from signoz_rows import attributes, error_log, one_of_each, otlp_lines

from rounds_bot.sources.base import PollResult
from rounds_bot.sources.signoz.record_identity import RecordIdentity, SeenRecords

KEY = "test-key"
MINUTE = 60 * SECOND


def _counts(result: PollResult) -> dict[str, int]:
    assert result.failures == []
    return counts_by_kind(result)


def _batch():
    """Two exceptions, two error spans and two error logs of one service, a minute apart."""
    batch = one_of_each(T0_NS + 5 * MINUTE, 1)
    later = one_of_each(T0_NS + 6 * MINUTE, 2)
    batch.exceptions += later.exceptions
    batch.spans += later.spans
    batch.logs += later.logs
    return batch


@pytest.mark.parametrize("sql_allowed", [True, False])
def test_a_batch_the_collector_wrote_twice_is_counted_once(sql_allowed):
    batch = _batch()
    behaviour = Behaviour(api_key=KEY, clickhouse_sql_allowed=sql_allowed)
    with SignozEmulator(batch, behaviour) as emulator, source_for(emulator) as source:
        retried = batch.retried()
        assert {row["errorID"] for row in retried.exceptions}.isdisjoint(
            r["errorID"] for r in batch.exceptions
        )
        assert {row["id"] for row in retried.logs}.isdisjoint(row["id"] for row in batch.logs)
        retried.arrive(emulator.engine)
        counts = _counts(source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset()))
    if sql_allowed:
        assert counts == {"exception": 2, "span_error": 2, "log": 2}
    else:  # listErrors counts the error index's rows itself
        assert {kind: counts[kind] for kind in ("span_error", "log")} == {"span_error": 2, "log": 2}


def test_a_copy_that_arrives_after_a_round_read_its_minute_counts_nothing_more():
    batch = _batch()
    with SignozEmulator(batch, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        cursor = T0_NS + 10 * MINUTE
        first = source.poll(poll_window(T0_NS, cursor), frozenset())
        assert _counts(first) == {"exception": 2, "span_error": 2, "log": 2}
        batch.retried().arrive(emulator.engine)
        second = source.poll(poll_window(cursor, cursor + 10 * MINUTE, first), frozenset())
        assert _counts(second) == {}
        assert not any("late" in note for note in second.notes)


def test_two_real_log_records_alike_but_for_their_time_are_two():
    batch = one_of_each(T0_NS + 5 * MINUTE, 1)
    twin = one_of_each(T0_NS + 5 * MINUTE + 1, 1)  # one nanosecond later: another record
    batch.logs += twin.logs
    with SignozEmulator(batch, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        counts = _counts(source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset()))
    assert counts["log"] == 2


NAN = {"key": "ratio", "value": {"doubleValue": "NaN"}}


def _declined(at: int, *numbers: dict[str, Any]) -> dict[str, Any]:
    return {**error_log(at), "attributes": [*attributes({"order.id": str(at)}), *numbers]}


def test_without_sql_a_copy_read_whole_and_its_twin_read_by_name_is_one_record():
    # newest first: three records holding a NaN spend their page's split (`row_pages.split_requests`),
    # so the fourth row, one copy of a retried record, is read by name; its twin opens the next page whole
    at = T0_NS + 5 * SECOND
    logs = [_declined(at + offset * SECOND, NAN) for offset in (3, 2, 1)] + [_declined(at)]
    dataset = Dataset()
    load_otlp_lines(otlp_lines([], logs), dataset, where="retried")
    behaviour = Behaviour(api_key=KEY, clickhouse_sql_allowed=False)
    with SignozEmulator(dataset, behaviour) as emulator, source_for(emulator, raw_page_size=4) as source:
        copy = dataset.retried()
        copy.logs = [row for row in copy.logs if row["timestamp"] == at]
        copy.arrive(emulator.engine)
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    assert any("read with the fields rounds names only" in note for note in result.notes)
    assert _counts(result) == {"log": 4}


def test_without_sql_a_copy_that_arrives_in_a_later_rounds_overlap_counts_nothing_more():
    batch = _batch()
    behaviour = Behaviour(api_key=KEY, clickhouse_sql_allowed=False)
    with SignozEmulator(batch, behaviour) as emulator, source_for(emulator, raw_page_size=2) as source:
        cursor = T0_NS + 7 * MINUTE  # the next round re-reads both minutes of the batch (its overlap)
        first = source.poll(poll_window(T0_NS, cursor), frozenset())
        assert {kind: n for kind, n in _counts(first).items() if kind != "exception"} == {
            "span_error": 2,
            "log": 2,
        }
        batch.retried().arrive(emulator.engine)
        second = source.poll(poll_window(cursor, cursor + 10 * MINUTE, first), frozenset())
    assert {kind: n for kind, n in _counts(second).items() if kind != "exception"} == {}


@pytest.mark.parametrize("named_first", [True, False])
def test_a_record_read_by_name_is_one_with_its_whole_copy_whichever_comes_first(named_first):
    shared = (T0_NS, "payment declined")
    whole = RecordIdentity(shared, (("order.id", "7"),))
    named = RecordIdentity(shared, None)
    seen = SeenRecords()
    first, second = (named, whole) if named_first else (whole, named)
    assert [seen.first(first), seen.first(second), seen.first(named), seen.first(whole)] == [
        True,
        False,
        False,
        False,
    ]
    # another whole record alike in what a read by name holds, unlike in the rest, is another record
    assert seen.first(RecordIdentity(shared, (("order.id", "8"),)))
