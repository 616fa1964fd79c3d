"""An OTLP record's error event is put together with its fields written out in the model's order
(`otlp_assembly.assembled`) rather than through `ErrorEvent.of_typed`: for every kind of error and every shape
of value (non-ASCII and surrogate text, huge stack traces and attributes, None or text, with or without
context) the event is exactly the one `of_typed` gives, field for field, type for type, in the same order,
with the same fields set."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rounds_bot.models import ContextRecord, ErrorEvent
from rounds_bot.sources import otlp_assembly
from rounds_bot.sources.otlp_build import (
    Origin,
    SpanFacts,
    exception_event,
    span_error_event,
)

GIVEN_SETS = (
    otlp_assembly.EXCEPTION_GIVEN,
    otlp_assembly.SPAN_ERROR_GIVEN,
    otlp_assembly.LOG_GIVEN,
    otlp_assembly.LOG_WITH_CONTEXT_GIVEN,
)

#: a stack trace of a few hundred kilobytes
HUGE = "Traceback (most recent call last):\n" + '  File "x.py", line 1, in f\n' * 5_000
TEXT = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8")),
    st.just("caf\u00e9 \ud83d\ude00 lone \ud800 surrogate \u0000"),
    st.just(HUGE),
)
OPTIONAL_TEXT = st.one_of(st.none(), TEXT)
ATTRIBUTE = st.one_of(
    TEXT,
    st.integers(min_value=-(2**80), max_value=2**80),
    st.booleans(),
    st.floats(allow_nan=False),  # NaN is not equal to itself: the events would differ though alike
    st.floats(allow_nan=False, allow_infinity=True),
)
MOMENTS = st.one_of(
    st.datetimes(timezones=st.just(UTC)),
    st.just(datetime(2026, 3, 1, 12, tzinfo=timezone(timedelta(hours=-5)))),
)
CONTEXT = st.lists(
    st.builds(ContextRecord, timestamp=MOMENTS, severity=st.sampled_from(["INFO", "WARN", ""]), body=TEXT),
    min_size=1,
    max_size=3,
)

FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "event_id": st.one_of(st.text(alphabet="0123456789abcdef", min_size=32, max_size=32), TEXT),
    "timestamp": MOMENTS,
    "service": TEXT,
    "kind": st.sampled_from(["exception", "span_error", "log"]),
    "error_type": OPTIONAL_TEXT,
    "message": TEXT,
    "stacktrace": OPTIONAL_TEXT,
    "error_code": OPTIONAL_TEXT,
    "severity": st.sampled_from([None, "ERROR", "FATAL"]),
    "fatal": st.booleans(),
    "trace_id": OPTIONAL_TEXT,
    "span_id": OPTIONAL_TEXT,
    "parent_span_id": OPTIONAL_TEXT,
    "span_kind": st.sampled_from([None, "server", "client", "internal", "producer", "consumer"]),
    "service_version": OPTIONAL_TEXT,
    "environment": OPTIONAL_TEXT,
    "attributes": st.one_of(
        st.dictionaries(TEXT, ATTRIBUTE, max_size=8),
        st.just({f"key.{number}": HUGE if number % 50 == 0 else number for number in range(2_000)}),
    ),
    "context": CONTEXT,
}


@st.composite
def given_values(draw: st.DrawFn) -> tuple[frozenset[str], dict[str, Any]]:
    given = draw(st.sampled_from(GIVEN_SETS))
    return given, {name: draw(FIELD_VALUES[name]) for name in sorted(given)}


def assert_same_event(made: ErrorEvent, expected: ErrorEvent) -> None:
    assert list(made.__dict__) == list(expected.__dict__) == list(ErrorEvent.model_fields)
    for name, value in expected.__dict__.items():
        assert type(made.__dict__[name]) is type(value), name
        assert made.__dict__[name] == value, name
    assert made.model_fields_set == expected.model_fields_set
    assert made == expected


@settings(max_examples=150, deadline=None)
@given(given_values())
def test_an_event_assembled_is_the_one_of_typed_gives(case: tuple[frozenset[str], dict[str, Any]]) -> None:
    given_fields, values = case
    assert_same_event(otlp_assembly.assembled(given_fields, **values), ErrorEvent.of_typed(**values))


def test_the_assembled_event_holds_every_field_of_the_model_in_its_order() -> None:
    """A field added to the model shows here: `otlp_assembly.assembled` writes the fields out one by one."""
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    made = otlp_assembly.assembled(
        otlp_assembly.SPAN_ERROR_GIVEN,
        event_id="a" * 32,
        timestamp=moment,
        service="api",
        kind="span_error",
        error_type=None,
        message="m",
        error_code=None,
        trace_id=None,
        span_id=None,
        parent_span_id=None,
        span_kind=None,
        service_version=None,
        environment=None,
        attributes={},
    )
    assert tuple(made.__dict__) == tuple(ErrorEvent.model_fields)
    assert made.context == [] and made.count == 1


def test_each_context_less_event_has_a_list_of_its_own() -> None:
    """The default context is a new list per event, as the model's default factory makes it."""
    span = SpanFacts("t" * 32, "s" * 16, "", "GET /", 2, 1, 2, "", {"k": "v"})
    origin = Origin.of({"service.name": "api"}, "lib")
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    one = exception_event(span, {"exception.type": "E"}, origin, ("a" * 32, moment))
    two = span_error_event(span, origin, ("b" * 32, moment))
    assert one.context == two.context == [] and one.context is not two.context
    assert one.model_fields_set == otlp_assembly.EXCEPTION_GIVEN
    assert two.model_fields_set == otlp_assembly.SPAN_ERROR_GIVEN


def test_a_copy_of_an_event_with_a_field_changed_leaves_the_fields_set_of_the_others_of_its_kind() -> None:
    """The events of a kind share one set of their given fields: a copy that gives one more field (as
    redaction makes one) has that field in its own set, never in the others'."""
    span = SpanFacts("t" * 32, "s" * 16, "", "GET /", 2, 1, 2, "", {"k": "v"})
    origin = Origin.of({"service.name": "api"}, "lib")
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    one = exception_event(span, {"exception.type": "E"}, origin, ("a" * 32, moment))
    two = exception_event(span, {"exception.type": "F"}, origin, ("b" * 32, moment))
    changed = one.model_copy(update={"severity": "ERROR"})
    assert changed.model_fields_set == otlp_assembly.EXCEPTION_GIVEN | {"severity"}
    assert one.model_fields_set == two.model_fields_set == otlp_assembly.EXCEPTION_GIVEN
