"""Which span events are exceptions: `exception`, as the semantic conventions name it, and
`<prefix>.exception`, which the SigNoz collector indexes as exceptions too (since v0.144.3), so a file and
SigNoz holding the same spans give the same errors. Read the same whether a line is read lean or with the
models."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.sources import otlp_file
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource

EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
T0 = "1773480000000000000"
TRACE = "0af7651916cd43dd8448eb211c80319c"


def span_line(event_name: str, *, status: int) -> str:
    attributes = [
        {"key": "exception.type", "value": {"stringValue": "pool.Exhausted"}},
        {"key": "exception.message", "value": {"stringValue": "no connection in 5s"}},
    ]
    span = {
        "traceId": TRACE,
        "spanId": "b7ad6b7169203331",
        "name": "checkout",
        "startTimeUnixNano": T0,
        "endTimeUnixNano": T0,
        "status": {"code": status, "message": "failed"} if status else {},
        "events": [{"timeUnixNano": T0, "name": event_name, "attributes": attributes}],
    }
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}
    return json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]})


@pytest.fixture(params=["lean", "models"])
def read(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    if request.param == "models":
        monkeypatch.setattr(otlp_file, "lean_line", lambda raw: None)

    def poll(line: str) -> PollResult:
        path = tmp_path / "spans.jsonl"
        path.write_text(line + "\n", encoding="utf-8")
        return OtlpFileSource(path).poll(EVERYTHING, frozenset())

    return poll


@pytest.mark.parametrize("status", [0, 2])
def test_an_event_named_prefix_dot_exception_is_an_exception(read: Any, status: int) -> None:
    (event,) = read(span_line("db.exception", status=status)).events
    assert (event.kind, event.error_type, event.message) == (
        "exception",
        "pool.Exhausted",
        "no connection in 5s",
    )


def test_it_gets_the_id_an_exception_event_gets(read: Any) -> None:
    named = read(span_line("db.exception", status=2)).events[0]
    plain = read(span_line("exception", status=2)).events[0]
    assert named.event_id == plain.event_id


@pytest.mark.parametrize("name", ["exceptions", "my_exception", "exception.handled", "error", ".exceptionX"])
def test_other_names_are_not_exceptions(read: Any, name: str) -> None:
    assert [event.kind for event in read(span_line(name, status=2)).events] == ["span_error"]
    assert read(span_line(name, status=0)).events == []
