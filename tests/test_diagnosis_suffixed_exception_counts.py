"""The diagnosis' error counts over SigNoz count a span with a `<prefix>.exception` event where the SigNoz
source counted it: in the exception groups when the collector indexed the event (v0.144.3 on), as an error
span when it did not (older collectors index only `exception`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from diagnosis_samples import diagnosis_error_count, make_checkout
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import poll_window
from signoz_rows import error_span, exception_span, otlp_lines

from rounds_bot.models import ErrorEvent

MINUTE = 60 * SECOND
KEY = "test-key"


def _suffixed_exception_spans() -> list[dict[str, object]]:
    """Three failing spans whose exception event a gRPC instrumentation named `grpc.exception`, and one
    error span of the same name and status without any exception event."""
    spans: list[dict[str, object]] = []
    for index in range(3):
        span = exception_span(index, T0_NS + (index + 1) * MINUTE)
        span["events"][0]["name"] = "grpc.exception"  # type: ignore[index]
        span["status"] = {"code": 2, "message": "upstream timed out"}
        span["name"] = "GET /stock"
        spans.append(span)
    spans.append(error_span(0, T0_NS + 5 * MINUTE))
    return spans


def _polled(emulator: SignozEmulator, kind: str) -> ErrorEvent:
    """The source's group of `kind`, as one event whose count is the group's whole count."""
    with source_for(emulator, api_key=KEY) as source:
        events = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset()).events
    ofkind = [event for event in events if event.kind == kind]
    assert ofkind, f"the source read no {kind} from {[event.kind for event in events]}"
    return ofkind[0].model_copy(update={"count": sum(event.count for event in ofkind)})


@pytest.mark.parametrize(
    ("indexes_suffixed", "kind", "expected"), [(True, "exception", 3), (False, "span_error", 4)]
)
def test_error_counts_count_a_suffixed_exception_event_where_the_source_did(
    tmp_path: Path, indexes_suffixed: bool, kind: str, expected: int
) -> None:
    dataset = Dataset(collector_indexes_suffixed_exceptions=indexes_suffixed)
    load_otlp_lines(otlp_lines(_suffixed_exception_spans(), []), dataset, where="suffixed")
    with SignozEmulator(dataset, Behaviour(api_key=KEY)) as emulator:
        event = _polled(emulator, kind)
        assert event.count == expected
        counted = diagnosis_error_count(make_checkout(tmp_path / "repo"), event, emulator.url, KEY)
    assert counted == expected
