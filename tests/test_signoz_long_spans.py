"""A failing span is stored at its start but reaches SigNoz when it ends: one that ran longer than the overlap
is counted once when it arrives, by its end, and not again when its minute is re-read."""

from __future__ import annotations

from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import poll_window
from signoz_rows import error_span, otlp_lines

from rounds_bot.sources.base import PollResult

KEY = "test-key"
MINUTE = 60 * SECOND


def _spans(result: PollResult) -> int:
    assert result.failures == []
    return sum(e.count for e in result.events if e.kind == "span_error") + sum(
        g.count for g in result.known_group_counts if g.source_group_id.startswith("signoz-span")
    )


def test_a_failing_span_longer_than_the_overlap_is_counted_once_when_it_arrives():
    start = T0_NS + 2 * MINUTE
    span = {**error_span(0, start), "endTimeUnixNano": str(start + 20 * MINUTE)}
    long_span = Dataset()
    load_otlp_lines(otlp_lines([span], []), long_span, where="long span")
    with SignozEmulator(Dataset(), Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        result: PollResult | None = None
        counted = []
        for round_end in (10, 20, 30, 40):
            if round_end == 30:  # the span ends at minute 22 and is written then, two rounds after its start
                long_span.arrive(emulator.engine)
            begin = T0_NS if result is None else T0_NS + (round_end - 10) * MINUTE
            result = source.poll(poll_window(begin, T0_NS + round_end * MINUTE, result), frozenset())
            counted.append(_spans(result))
    # the third round reads from minute 5 (its cursor, 20, less the 15-minute overlap): the span's start,
    # minute 2, is behind that, its end, minute 22, is not
    assert counted == [0, 0, 1, 0]
