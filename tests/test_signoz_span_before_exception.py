"""The collector writes a span and its exception rows in parallel: a round that reads the span before its
exception row is written counts nothing of it, and the next round counts the exception once, never the span's
bare error status as well."""

from __future__ import annotations

from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import counts_by_kind
from signoz_rows import exception_span, otlp_lines

from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.times import ns_to_datetime

KEY = "test-key"
MINUTE = 60 * SECOND


def _window(start_ns: int, end_ns: int, before: PollResult | None) -> Window:
    return Window(
        start=ns_to_datetime(start_ns),
        end=ns_to_datetime(end_ns),
        resume_from=ns_to_datetime(start_ns) if before else None,
        source_state=before.source_state if before else None,
    )


def _counts(result: PollResult) -> dict[str, int]:
    assert result.failures == []
    return counts_by_kind(result)


def test_a_span_read_before_its_exception_row_is_written_is_counted_once_as_the_exception():
    written = Dataset()
    load_otlp_lines(otlp_lines([exception_span(0, T0_NS + 5 * MINUTE)], []), written, where="race")
    span_first = Dataset(spans=written.spans)
    exception_later = Dataset(exceptions=written.exceptions)
    with SignozEmulator(span_first, Behaviour(api_key=KEY)) as emulator, source_for(emulator) as source:
        first = source.poll(_window(T0_NS, T0_NS + 10 * MINUTE, None), frozenset())
        assert _counts(first) == {}
        exception_later.arrive(emulator.engine)
        second = source.poll(_window(T0_NS + 10 * MINUTE, T0_NS + 20 * MINUTE, first), frozenset())
        assert _counts(second) == {"exception": 1}
