"""An exception event's type, message, stack trace and error code are its attributes' values as text (None
where there is none, the message "" then), whatever type of value the attribute holds: written out in
`otlp_build.exception_event`, they are the ones `ErrorEvent.of_typed` is given from `_text_or_none`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.models import ErrorEvent
from rounds_bot.sources.otlp_build import Origin, SpanFacts, exception_event

VALUE = st.one_of(
    st.none(),
    st.text(),
    st.just(""),
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.one_of(st.text(), st.integers()), max_size=3),
)
KEYS = ("exception.type", "exception.message", "exception.stacktrace", "error.code")


def text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


@settings(max_examples=300, deadline=None)
@given(
    own=st.fixed_dictionaries({}, optional=dict.fromkeys(KEYS, VALUE)),
    span_code=st.one_of(st.none(), VALUE),
)
def test_an_exception_events_texts_are_its_attributes_as_text(own: dict[str, Any], span_code: Any) -> None:
    own = {key: value for key, value in own.items() if value is not None}
    span_attributes = {} if span_code is None else {"error.code": span_code}
    span = SpanFacts("t" * 32, "s" * 16, "", "GET /", 2, 1, 2, "", span_attributes)
    origin = Origin.of({"service.name": "api"}, "lib")
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    made = exception_event(span, own, origin, ("a" * 32, moment))
    merged = {**origin.attributes, **span_attributes, **own}
    expected = ErrorEvent.of_typed(
        event_id="a" * 32,
        timestamp=moment,
        service="api",
        kind="exception",
        error_type=text_or_none(own.get("exception.type")),
        message=text_or_none(own.get("exception.message")) or "",
        stacktrace=text_or_none(own.get("exception.stacktrace")),
        error_code=text_or_none(merged.get("error.code")),
        trace_id="t" * 32,
        span_id="s" * 16,
        parent_span_id=None,
        span_kind="server",
        service_version=None,
        environment=None,
        attributes={key: value for key, value in merged.items() if key not in KEYS[:3]},
    )
    assert made == expected
    assert list(made.__dict__) == list(expected.__dict__)
    assert made.model_fields_set == expected.model_fields_set
