"""An exception recorded early in a span that ran longer than the overlap: its row is stored at the event's
time but written when the span ends, behind the minutes a round re-reads. It is counted once, in the round
that first can see it, by its span's end, and not again."""

from __future__ import annotations

from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import poll_window
from signoz_rows import exception_span, otlp_lines

from rounds_bot.sources.base import PollResult

KEY = "test-key"
MINUTE = 60 * SECOND


def _exceptions(result: PollResult) -> int:
    assert result.failures == []
    return sum(e.count for e in result.events if e.kind == "exception") + sum(
        g.count for g in result.known_group_counts if not g.source_group_id.startswith("signoz-")
    )


def _rounds(span: dict[str, object], arrives_before: int) -> list[int]:
    """Four 10-minute rounds; the span's rows are written just before the round ending at `arrives_before`."""
    rows = Dataset()
    load_otlp_lines(otlp_lines([span], []), rows, where="long span")
    with SignozEmulator(Dataset(), Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        result: PollResult | None = None
        counted = []
        for round_end in (10, 20, 30, 40):
            if round_end == arrives_before:
                rows.arrive(emulator.engine)
            begin = T0_NS if result is None else T0_NS + (round_end - 10) * MINUTE
            result = source.poll(poll_window(begin, T0_NS + round_end * MINUTE, result), frozenset())
            counted.append(_exceptions(result))
    return counted


def test_an_exception_early_in_a_span_longer_than_the_overlap_is_counted_once_when_it_arrives():
    start = T0_NS + 2 * MINUTE
    span = {**exception_span(0, start), "endTimeUnixNano": str(start + 20 * MINUTE)}
    # the exception is recorded at minute 2, the span ends at minute 22 and is written then: the third round
    # reads from minute 5 (its cursor, 20, less the 15-minute overlap), behind the event, not the span's end
    assert _rounds(span, arrives_before=30) == [0, 0, 1, 0]


def test_an_exception_of_a_long_span_ending_in_the_window_it_is_read_in_is_counted_once():
    start = T0_NS + 2 * MINUTE
    span = {**exception_span(0, start), "endTimeUnixNano": str(start + 5 * MINUTE)}
    assert _rounds(span, arrives_before=10) == [1, 0, 0, 0]


def test_an_exception_of_a_short_span_is_counted_once():
    assert _rounds(exception_span(0, T0_NS + 2 * MINUTE), arrives_before=10) == [1, 0, 0, 0]
