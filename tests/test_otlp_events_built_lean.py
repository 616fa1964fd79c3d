"""An error read lean is built from its plain record, not validated into the OTLP models first: odd and
hostile records (values of other types, huge integers, bad or missing times, escapes, base64 ids, missing
fields) give exactly the events and the skipped records that reading them with the models gives, value for
value and type for type; and every event is one its model accepts as it is."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.models import ErrorEvent
from rounds_bot.sources import otlp_build, otlp_file
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.neighbours import context_records
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.otlp_lean import lean_line

EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "api"}}]}
TIME = "1700000000000000000"


def spans_line(*spans: dict[str, Any]) -> str:
    scope = {"scope": {"name": "lib", "version": "1"}, "spans": list(spans)}
    return json.dumps({"resourceSpans": [{"resource": RESOURCE, "scopeSpans": [scope]}]})


def logs_line(*records: dict[str, Any]) -> str:
    scope = {"scope": {"name": "lib"}, "logRecords": list(records)}
    return json.dumps({"resourceLogs": [{"resource": RESOURCE, "scopeLogs": [scope]}]})


_SPAN_IDS = itertools.count(1)


def error_span(**fields: Any) -> dict[str, Any]:
    """An error span, each with its own span id (a record read twice is counted once)."""
    span_id = f"{next(_SPAN_IDS):016x}"
    return {"traceId": TRACE, "spanId": span_id, "name": "GET /x", "status": {"code": 2}, **fields}


def exception(**attributes: Any) -> dict[str, Any]:
    pairs = [{"key": "exception.type", "value": {"stringValue": "KeyError"}}]
    pairs += [{"key": key, "value": value} for key, value in attributes.items()]
    return {"name": "exception", "timeUnixNano": TIME, "attributes": pairs}


def error_log(**fields: Any) -> dict[str, Any]:
    return {"timeUnixNano": TIME, "severityNumber": 17, "body": {"stringValue": "failed"}, **fields}


ODD_VALUES = [
    {"intValue": "123456789012345678901234567890"},  # beyond 64 bits
    {"intValue": 2**70},
    {"intValue": "-7"},
    {"doubleValue": "NaN"},
    {"doubleValue": "-Infinity"},
    {"doubleValue": 1e308},
    {"doubleValue": 3},
    {"doubleValue": "1.5"},  # the mapping's number in a string
    {"doubleValue": " 1.5"},  # not one
    {"boolValue": False},
    {"bytesValue": "AAEC"},
    {"arrayValue": {"values": [{"intValue": "1"}, {"boolValue": True}, {"doubleValue": 1.5}, {}]}},
    {"kvlistValue": {"values": [{"key": "b", "value": {"intValue": 2}}, {"key": "c"}]}},
    {"stringValue": "caf\u00e9 \ud83d\ude00 \u0000 \\ \x7f"},
    {"stringValue": None, "intValue": 5},
    {},
]

LINES = [
    # spans: every kind spelling, times of every spelling, ids in base64, no ids, several exceptions
    *(
        spans_line(error_span(kind=kind, startTimeUnixNano=TIME))
        for kind in (2, "SPAN_KIND_CLIENT", "4", 2.0, True)
    ),
    spans_line(error_span(kind=[1], startTimeUnixNano=TIME)),
    spans_line(error_span(kind=None, startTimeUnixNano=TIME)),
    spans_line(error_span(endTimeUnixNano=int(TIME), startTimeUnixNano=1.7e18)),
    spans_line(error_span(startTimeUnixNano=" 1700000000000000000 ")),
    spans_line(error_span()),  # no time at all
    spans_line(error_span(startTimeUnixNano="0")),
    spans_line(error_span(startTimeUnixNano="-5")),
    spans_line(error_span(endTimeUnixNano="99999999999999999999999999")),  # not a time
    spans_line(error_span(traceId="CvdlGRbNQ92ESOshwDGAnA==", spanId="t61rcWkgMzE=", startTimeUnixNano=TIME)),
    spans_line(error_span(traceId="", spanId="0000000000000000", startTimeUnixNano=TIME)),
    spans_line(error_span(traceId="not an id", startTimeUnixNano=TIME)),
    spans_line(
        error_span(
            parentSpanId="00f067aa0ba902b7", startTimeUnixNano=TIME, status={"code": "STATUS_CODE_ERROR"}
        )
    ),
    spans_line(error_span(startTimeUnixNano=TIME, status={"code": 2, "message": "boom"}, name="")),
    spans_line(error_span(startTimeUnixNano=TIME, status={"code": 2, "message": None})),
    spans_line({"status": {"code": "2"}, "startTimeUnixNano": TIME}),  # nothing else
    spans_line(
        error_span(
            startTimeUnixNano=TIME,
            attributes=[{"key": f"odd.{number}", "value": value} for number, value in enumerate(ODD_VALUES)],
            events=[
                exception(**{"exception.message": {"stringValue": "one"}, "error.code": {"intValue": 42}}),
                {"name": "log", "timeUnixNano": TIME},
                {**exception(), "timeUnixNano": 0},  # the span's time stands in
                exception(
                    **{"exception.message": {"intValue": "7"}, "exception.stacktrace": {"boolValue": True}}
                ),
            ],
        )
    ),
    spans_line(error_span(startTimeUnixNano=TIME, events=[exception(**{"x": None})])),
    spans_line(error_span(startTimeUnixNano=TIME, events=[{**exception(), "timeUnixNano": "1.5"}])),
    spans_line(error_span(startTimeUnixNano=TIME, attributes=[{"key": "k", "value": None}])),
    spans_line(error_span(startTimeUnixNano=TIME, attributes=[{"key": 5, "value": {"stringValue": "x"}}])),
    # a span that is not an error is only checked, an error span read as it is checked: an odd value in
    # either, or in an event that is not an exception, is read (or refused) as the models read it
    spans_line(
        *(
            {"spanId": f"{n:016x}", "startTimeUnixNano": TIME, "attributes": [{"key": "a", "value": v}]}
            for n, v in enumerate(ODD_VALUES, start=900)
        ),
        error_span(startTimeUnixNano=TIME),
    ),
    spans_line(
        {"startTimeUnixNano": TIME, "attributes": [{"key": "a", "value": {"boolValue": 1}}]}, error_span()
    ),
    spans_line(
        error_span(
            startTimeUnixNano=TIME,
            events=[{"name": "log", "attributes": [{"key": "k", "value": v}]} for v in ODD_VALUES]
            + [exception(), {"name": "exception"}],
        )
    ),
    spans_line(error_span(startTimeUnixNano=TIME, events=[{"name": "log", "attributes": None}, exception()])),
    spans_line(error_span(startTimeUnixNano=TIME, events=[{"name": 5}, exception()])),
    spans_line(
        error_span(startTimeUnixNano=TIME, status={"code": 1, "message": "fine"}, events=[exception()])
    ),
    spans_line(error_span(startTimeUnixNano=TIME, status={"code": "STATUS_CODE_OK"})),
    spans_line(
        error_span(
            startTimeUnixNano=TIME,
            attributes=[
                {"key": "a", "value": {"stringValue": "1"}},
                {"key": "b"},
                {"key": "a", "value": {"intValue": 2}},
                {"key": "k", "value": {"kvlistValue": {"values": [{"key": "a", "value": {"intValue": 3}}]}}},
                {"key": "k.a", "value": {"stringValue": "again"}},
            ],
        )
    ),
    logs_line(
        *(error_log(severityNumber=9, attributes=[{"key": "k", "value": v}]) for v in ODD_VALUES), error_log()
    ),
    logs_line(error_log(severityNumber=9, attributes=None), error_log()),
    logs_line(error_log(severityNumber=9, traceId="not an id"), error_log()),
    # logs: severity by number, by text, below error; bodies of every kind; times missing or odd
    logs_line(
        error_log(attributes=[{"key": f"odd.{n}", "value": value} for n, value in enumerate(ODD_VALUES)])
    ),
    *(logs_line(error_log(body=value)) for value in ODD_VALUES),
    logs_line(error_log(body=None, traceId=TRACE, spanId=SPAN, eventName="e", severityText="Error")),
    logs_line(error_log(severityNumber="21", severityText="")),
    logs_line(error_log(severityNumber=0, severityText=" fatal ")),
    logs_line(
        error_log(severityNumber=9), error_log(severityNumber=24, timeUnixNano="0", observedTimeUnixNano=TIME)
    ),
    logs_line(error_log(timeUnixNano="0")),
    logs_line(error_log(timeUnixNano=str(10**30))),
    logs_line(error_log(timeUnixNano=True)),
    logs_line(error_log(severityNumber=17.0)),
    # the severity by its name in OTLP's enum, as the protobuf JSON mapping may write it
    logs_line(
        error_log(severityNumber="SEVERITY_NUMBER_ERROR"), error_log(severityNumber="SEVERITY_NUMBER_FATAL4")
    ),
    logs_line(error_log(severityNumber="SEVERITY_NUMBER_INFO"), error_log()),
    logs_line(error_log(severityNumber="SEVERITY_NUMBER_LOUD")),
    logs_line(
        error_log(
            attributes=[
                {"key": "exception.message", "value": {"stringValue": "the exception"}},
                {"key": "exception.type", "value": {"stringValue": "ValueError"}},
                {"key": "exception.stacktrace", "value": {"stringValue": "at x\nat y"}},
            ]
        )
    ),
    logs_line(error_log(traceId="CvdlGRbNQ92ESOshwDGAnA==", spanId=None)),
    logs_line(error_log(spanId="short")),
    logs_line(error_log(body={"stringValue": 5})),
    '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000","severityNumber":17,'
    '"body":{"stringValue":"lone \\ud800 surrogate"}}]}]}]}',
]


def read(path: Path, *, lean: bool, monkeypatch: pytest.MonkeyPatch) -> PollResult:
    with monkeypatch.context() as patched:
        if not lean:
            patched.setattr(otlp_file, "lean_line", lambda raw: None)
        return OtlpFileSource(path).poll(EVERYTHING)


def exactly(events: list[ErrorEvent]) -> list[str]:
    """Each event with the type of every value (1, 1.0 and True are equal in Python, not here)."""
    return [
        repr(sorted(((key, type(value), value) for key, value in e.__dict__.items()), key=str))
        for e in events
    ]


def test_odd_records_read_lean_give_what_the_models_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "odd.jsonl"
    # bytes that are not UTF-8, past the head the file is probed in for binary data
    not_utf8 = logs_line(error_log(body={"stringValue": "?"})).encode().replace(b"?", b"\xff")
    padding = logs_line(error_log(body={"stringValue": "x" * 70_000})).encode()
    path.write_bytes("\n".join(LINES).encode("utf-8", "surrogatepass") + b"\n" + padding + b"\n" + not_utf8)
    assert sum(lean_line(line) is not None for line in LINES) > len(LINES) // 2  # most are read lean
    lean, models = (
        read(path, lean=True, monkeypatch=monkeypatch),
        read(path, lean=False, monkeypatch=monkeypatch),
    )
    assert len(lean.events) > 30
    assert exactly(list(lean.events)) == exactly(list(models.events))
    assert [e.model_fields_set for e in lean.events] == [e.model_fields_set for e in models.events]
    assert lean.skipped == models.skipped and len(lean.skipped) > 10
    for event in lean.events:  # validated as they were made: the model takes each as it is
        assert exactly([ErrorEvent.model_validate(event.model_dump())]) == exactly([event])


@pytest.mark.parametrize("kind", [[1], None, {}])
def test_a_span_kind_the_model_refuses_sends_its_line_to_the_models_which_skip_it(kind: object) -> None:
    assert lean_line(spans_line(error_span(kind=kind, startTimeUnixNano=TIME))) is None


def test_an_error_log_keeps_its_resources_exception_attributes_where_they_were(tmp_path: Path) -> None:
    resource = {
        "attributes": [
            {"key": "service.name", "value": {"stringValue": "api"}},
            {"key": "exception.type", "value": {"stringValue": "from the resource"}},
            {"key": "region", "value": {"stringValue": "eu"}},
        ]
    }
    record = error_log(
        attributes=[
            {"key": "exception.type", "value": {"stringValue": "ValueError"}},
            {"key": "exception.message", "value": {"stringValue": "bad"}},
            {"key": "user", "value": {"stringValue": "u1"}},
        ]
    )
    scope = {"scope": {"name": "lib"}, "logRecords": [record]}
    path = tmp_path / "logs.jsonl"
    path.write_text(json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [scope]}]}) + "\n")
    (event,) = OtlpFileSource(path).poll(EVERYTHING).events
    assert (event.error_type, event.message) == ("ValueError", "bad")
    # the record's own exception attributes are the event's fields; the resource's stay, in their place
    assert list(event.attributes.items()) == [
        ("service.name", "api"),
        ("exception.type", "from the resource"),
        ("region", "eu"),
        ("otel.scope.name", "lib"),
        ("user", "u1"),
        ("log.body", "failed"),
    ]


@pytest.mark.parametrize(("kind", "name"), [(1, "internal"), (True, None), ("1", "internal"), (1.0, None)])
def test_a_span_kind_is_named_by_its_value_and_type(kind: object, name: str | None) -> None:
    # remembered by value and type: neither True nor 1.0 is the kind 1 (their texts are "True" and "1.0"),
    # whichever is asked first
    assert otlp_build._span_kind(1) == "internal"
    assert otlp_build._span_kind(kind) == name


def test_an_error_log_built_with_its_context_is_the_one_given_it_afterwards() -> None:
    facts = otlp_build.LogFacts("", "", 1, 0, 17, "ERROR", "", "failed", {"k": "v"})
    origin = otlp_build.Origin.of({"service.name": "api"}, "lib")
    known = ("e1", datetime(2026, 1, 1, tzinfo=UTC))
    context = context_records([(0, "INFO", 9, "before"), (1, "WARN", 13, "just before")])
    afterwards = otlp_build.log_error(facts, origin, known)
    built = otlp_build.log_error(facts, origin, known, context)
    assert afterwards is not None and built is not None
    given = afterwards.model_copy(update={"context": context})
    assert exactly([built]) == exactly([given]) and list(built.__dict__) == list(given.__dict__)
    assert built.model_fields_set == given.model_fields_set
    assert otlp_build.log_error(facts, origin, known, []) == afterwards


def test_a_severity_written_by_its_enum_name_and_a_double_in_a_string_are_read(tmp_path: Path) -> None:
    """OTLP/JSON follows the protobuf JSON mapping, which lets a writer spell an enum by its name and a double
    as a number in a string: such a record is read, not skipped (`logs.proto`'s SeverityNumber)."""
    path = tmp_path / "named.jsonl"
    double = [{"key": "ratio", "value": {"doubleValue": "0.25"}}]
    lines = [
        logs_line(error_log(severityNumber="SEVERITY_NUMBER_ERROR", attributes=double)),
        logs_line(error_log(severityNumber="SEVERITY_NUMBER_FATAL2", body={"stringValue": "down"})),
        logs_line(error_log(severityNumber="SEVERITY_NUMBER_WARN4", body={"stringValue": "slow"})),
    ]
    path.write_text("\n".join(lines) + "\n")
    polled = OtlpFileSource(path).poll(EVERYTHING)
    assert not polled.skipped
    assert [(e.message, e.severity, e.attributes.get("ratio")) for e in polled.events] == [
        ("failed", "ERROR", 0.25),
        ("down", "FATAL", None),
    ]
