"""Without clickhouse_sql, error spans are read as raw rows and a span is left to the exception groups when
the collector indexed its exception event. Which events it indexes depends on the collector (only
`exception` before signoz-otel-collector v0.144.3, also `*.exception` since: pkg/schema/traces/event.go
IsExceptionEvent); the span's own copy of each event says so (`isError`, set by populateEventsV3 in
exporter/clickhousetracesexporter/clickhouse_exporter_v3.go on exactly the events it indexes). SigNoz before
v0.130 answers the events as the JSON strings the collector stored, flag included; from v0.130 it parses them
and drops the flag (pkg/types/spantypes/event.go ParseEvents), and those versions ship a collector that
indexes `*.exception` events too."""

from __future__ import annotations

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import counts_by_kind, poll_window
from signoz_rows import exception_span, otlp_lines

KEY = "test-key"
MINUTE = 60 * SECOND


@pytest.mark.parametrize(
    ("version", "indexes_suffixed", "kind"),
    [
        ("v0.120.0", False, "span_error"),  # events as strings: the flag says the error index lacks it
        ("v0.120.0", True, "exception"),
        ("v0.138.0", True, "exception"),  # events parsed: named as the bundled collector indexes them
    ],
)
def test_a_raw_error_span_with_a_suffixed_exception_event_is_counted_once(version, indexes_suffixed, kind):
    span = exception_span(1, T0_NS + MINUTE)
    span["events"][0]["name"] = "grpc.exception"
    dataset = Dataset(collector_indexes_suffixed_exceptions=indexes_suffixed)
    load_otlp_lines(otlp_lines([span], []), dataset, where="suffixed")
    behaviour = Behaviour(api_key=KEY, version=version, clickhouse_sql_allowed=False)
    with SignozEmulator(dataset, behaviour) as emulator, source_for(emulator) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    assert result.failures == []
    assert counts_by_kind(result) == {kind: 1}
