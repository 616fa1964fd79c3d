"""`ErrorEvent.of_typed` puts an event together from values already of their fields' types without
validating them again: the event it gives equals, field for field, type for type and in the same order, the
one validation gives, with the same fields set; a field it does not know, or a missing required one, is
refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from rounds_bot.models import ContextRecord, ErrorEvent

MOMENT = datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)

VALUES: list[dict[str, Any]] = [
    {"event_id": "a" * 32, "timestamp": MOMENT},  # every other field at its default
    {
        "event_id": "b" * 32,
        "timestamp": MOMENT,
        "service": "checkout",
        "kind": "exception",
        "error_type": "KeyError",
        "message": "caf\u00e9 \ud83d\ude00 lone \ud800 surrogate \u0000",
        "stacktrace": "Traceback (most recent call last):\n" + '  File "x.py", line 1, in f\n' * 5_000,
        "error_code": "E-1",
        "trace_id": "0af7651916cd43dd8448eb211c80319c",
        "span_id": "b7ad6b7169203331",
        "parent_span_id": None,
        "span_kind": "server",
        "service_version": "1.0",
        "environment": "production",
        "attributes": {"s": "x", "i": 2**70, "f": float("inf"), "b": False, "zero": 0, "one": 1.0, "t": True},
    },
    {
        "event_id": "c" * 32,
        "timestamp": datetime(2026, 3, 1, 12, tzinfo=timezone(timedelta(hours=-5))),
        "kind": "log",
        "message": "",
        "severity": "FATAL",
        "fatal": True,
        "attributes": {},
        "count": 3,
        "source_group_id": "g",
        "source_url": "https://example.test/x",
        "context": [ContextRecord(timestamp=MOMENT, severity="INFO", body="before")],
    },
    {
        "event_id": "not hex",
        "timestamp": MOMENT,
        "kind": "span_error",
        "error_type": None,
        "stacktrace": None,
    },
]


def exactly(event: ErrorEvent) -> list[tuple[str, type, object]]:
    return [(name, type(value), value) for name, value in event.__dict__.items()]


@pytest.mark.parametrize("values", VALUES)
def test_an_event_of_typed_values_is_the_one_validation_gives(values: dict[str, Any]) -> None:
    typed, validated = ErrorEvent.of_typed(**values), ErrorEvent(**values)
    assert typed == validated
    assert exactly(typed) == exactly(validated)  # the same order of fields, the same types
    assert typed.model_fields_set == validated.model_fields_set
    assert typed.model_dump() == validated.model_dump()


def test_defaults_made_by_a_factory_are_not_shared_between_events() -> None:
    one, two = (ErrorEvent.of_typed(event_id=name, timestamp=MOMENT) for name in "xy")
    assert one.attributes is not two.attributes and one.context is not two.context


def test_an_event_of_typed_values_is_frozen_like_any_event() -> None:
    event = ErrorEvent.of_typed(event_id="x", timestamp=MOMENT)
    with pytest.raises(ValueError, match="frozen"):
        event.message = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "values",
    [{"timestamp": MOMENT}, {"event_id": "x"}, {"event_id": "x", "timestamp": MOMENT, "unknown": 1}],
)
def test_a_missing_or_unknown_field_is_refused(values: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match="ErrorEvent fields"):
        ErrorEvent.of_typed(**values)
