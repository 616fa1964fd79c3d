"""OTLP/JSON read lean (orjson, models only for the errors) gives what the models alone give, and a record
counted before is left out from its raw record, counted, and never built."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.demo import demo_data_path
from rounds_bot.errors import SourceError
from rounds_bot.redact import Redactor
from rounds_bot.sources import otlp_build, otlp_events, otlp_file, otlp_json, otlp_lean_scalars
from rounds_bot.sources.base import PollResult, SkipsCounted, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.otlp_lean import lean_line

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
from scale_data import write_otlp

SAMPLE = Path(__file__).parent / "fixtures" / "otlp" / "shop_sample.otlp.jsonl"
EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("synthetic")
    return write_otlp(folder / "scale.jsonl", 600, 120, datetime(2026, 1, 1, tzinfo=UTC))


def with_models_only(path: Path, monkeypatch: pytest.MonkeyPatch) -> PollResult:
    with monkeypatch.context() as patched:
        patched.setattr(otlp_file, "lean_line", lambda raw: None)
        return OtlpFileSource(path).poll(EVERYTHING)


@pytest.mark.parametrize("name", ["sample", "demo", "synthetic"])
def test_lean_reading_gives_the_models_events(
    name: str, synthetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = {"sample": SAMPLE, "demo": demo_data_path(), "synthetic": synthetic}[name]
    lean = OtlpFileSource(path).poll(EVERYTHING)
    assert lean.events
    # the lines a source remembers for its next round aside (`line_memory.py`; the models' reading keeps none)
    assert lean.model_copy(update={"source_state": None}) == with_models_only(path, monkeypatch).model_copy(
        update={"source_state": None}
    )


def test_every_trace_and_log_line_of_the_fixtures_is_read_lean(synthetic: Path) -> None:
    for path in (SAMPLE, demo_data_path(), synthetic):
        lines = [line for line in path.read_bytes().splitlines() if b"resourceMetrics" not in line]
        assert all(lean_line(line) is not None for line in lines if line.strip())


@pytest.mark.parametrize(
    "line",
    [
        # what the models coerce or refuse is theirs to read: a number where a string is due, snake_case,
        # null where a list is due, an id that is no id, another signal, a float time
        '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityText":5}]}]}]}',
        '{"resource_logs":[]}',
        '{"resourceSpans":[{"scopeSpans":null}]}',
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]}',
        '{"resourceMetrics":[]}',
        '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":1.5,"severityNumber":17}]}]}]}',
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"a","value":{"boolValue":1}}]}]}]}]}',
        "[1, 2]",
        "{not json",
        # a snake_case key spelled with an escape is still one
        r'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"a","value":{"string\u005fvalue":"x"}}]}]}]}]}',
    ],
)
def test_a_line_the_models_would_coerce_or_refuse_is_left_to_them(line: str) -> None:
    assert lean_line(line) is None


def test_counted_records_are_left_out_counted_and_never_built(
    synthetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = OtlpFileSource(synthetic)
    assert isinstance(source, SkipsCounted)
    everything = source.poll(EVERYTHING)
    counted = {event.event_id for event in everything.events[::3]}
    asked: list[str] = []

    def check(ids: list[str]) -> set[str]:
        asked.extend(ids)
        return counted & set(ids)

    built: list[object] = []
    real = otlp_json.Span.model_validate
    monkeypatch.setattr(otlp_json.Span, "model_validate", lambda plain: built.append(plain) or real(plain))
    new = source.poll_new(EVERYTHING, frozenset(), check)
    assert sorted(asked) == sorted(event.event_id for event in everything.events)
    assert new.events == [event for event in everything.events if event.event_id not in counted]
    assert new.already_counted == len(counted)
    assert new.newest_counted == max(e.timestamp for e in everything.events if e.event_id in counted)
    spans_built = len([e for e in new.events if e.kind != "log"])
    assert len(built) <= spans_built  # a span with two exception events is validated once


def test_records_before_the_window_start_count_as_counted_without_asking(synthetic: Path) -> None:
    everything = OtlpFileSource(synthetic).poll(EVERYTHING)
    times = sorted(event.timestamp for event in everything.events)
    middle = times[len(times) // 2]
    asked: list[str] = []
    window = Window(start=middle, end=EVERYTHING.end)
    new = OtlpFileSource(synthetic).poll_new(window, frozenset(), lambda ids: asked.extend(ids) or set())
    older = [event for event in everything.events if event.timestamp < middle]
    assert new.already_counted == len(older)
    assert len(asked) == len(new.events) == len(everything.events) - len(older)


def test_the_raw_check_uses_the_identity_the_occurrence_is_stored_under() -> None:
    redactor = Redactor()
    for raw in ("0af7651916cd43dd8448eb211c80319c", "user=alice@example.com", "x" * 300):
        assert redactor.identity(raw) == Redactor().identifier(raw)
    assert json.dumps(redactor.counts) == "{}"  # asking is not redacting


@pytest.mark.parametrize(
    "value",
    [
        "b7ad6b7169203331",
        "B7AD6B7169203331",
        "b7ad 6b716920333",  # whitespace `bytes.fromhex` skips between two digits
        "b7ad6b716920333\n",
        " b7ad6b71692033a",
        "b7ad6b716920333g",
        "１２ad6b7169203331",  # digits that are not ASCII
        "b7ad6b716920333\u0660",
        "t61rcWkgMzE=xxxx",
        "t61rcWkgMzE=",  # base64
        "00f067aa0ba902b7",
        "00000000000000001",
        "",
    ],
)
def test_the_quick_id_reading_is_the_id_rule_of_the_models(value: str) -> None:
    for byte_length, lean in ((8, otlp_lean_scalars.lean_span_id), (16, otlp_lean_scalars.lean_trace_id)):
        for spelled in (value, value * 2, value[:8], "0" * len(value), "0" * byte_length * 2):
            try:
                expected: str | None = otlp_json._id(spelled, byte_length)
            except ValueError:
                expected = None
            try:
                read: str | None = otlp_lean_scalars.read_id(spelled, byte_length * 2, lean)
            except otlp_lean_scalars.NotLean:
                read = None
            assert read == expected, spelled


SNAKE_AT_EVERY_LEVEL = [
    '{"resource_spans":[]}',
    '{"resourceLogs":[{"scope_logs":[]}]}',
    '{"resourceSpans":[{"scope_spans":[]}]}',
    '{"resourceLogs":[{"scopeLogs":[{"log_records":[]}]}]}',
    '{"resourceSpans":[{"scopeSpans":[{"spans":[{"trace_id":"0af7651916cd43dd8448eb211c80319c"}]}]}]}',
    '{"resourceSpans":[{"scopeSpans":[{"spans":[{"events":[{"time_unix_nano":"1"}]}]}]}]}',
    '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severity_number":17}]}]}]}',
    '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"string_value":"x"}}]}]}]}',
    '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"arrayValue":{"values":[{"int_value":1}]}}}]}]}]}',
    '{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"bool_value":true}}]}}]}',
    # spelled with an escape: orjson decodes the key, and it is seen as what it is
    r'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"event\u005fname":"e"}]}]}]}',
]


@pytest.mark.parametrize("line", SNAKE_AT_EVERY_LEVEL)
def test_a_field_in_snake_case_in_any_object_of_a_model_sends_its_line_to_the_models(line: str) -> None:
    assert lean_line(line) is None


def test_snake_case_outside_the_models_objects_is_read_lean_as_the_models_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = {
        "timeUnixNano": "1700000000000000000",
        "severityNumber": 17,
        "body": {"stringValue": '{"trace_id": "in a body"}'},  # a string's content
        "vendor": {"trace_id": "x", "nested": [{"span_id": 1}]},  # a field no model reads
    }
    line = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]})
    assert lean_line(line) is not None
    path = tmp_path / "logs.jsonl"
    path.write_text(line + "\n")
    lean = OtlpFileSource(path).poll(EVERYTHING)
    assert [e.message for e in lean.events] == ['{"trace_id": "in a body"}']
    assert lean.events == with_models_only(path, monkeypatch).events


@pytest.mark.parametrize("name", ["sample", "demo", "synthetic"])
def test_the_facts_read_lean_are_the_models_facts_field_by_field(name: str, synthetic: Path) -> None:
    """What the check reads of each error record as it passes (`LeanSpan`, `LogFacts`: tuples made by
    position) holds what the models' reading (`otlp_events`, by keyword) holds, in every field: a start time
    in place of an end time shows here even where no event differs. A record that is not an error is read
    for nothing (None), and every error is read."""
    path = {"sample": SAMPLE, "demo": demo_data_path(), "synthetic": synthetic}[name]
    spans = logs = 0
    for raw in path.read_bytes().splitlines():
        line = lean_line(raw) if raw.strip() else None
        if line is None:
            continue
        for scope in line.spans:
            for plain, read in zip(scope.records, scope.read, strict=True):
                span = otlp_json.Span.model_validate(plain)
                exceptions = [(i, e) for i, e in enumerate(span.events) if e.name == "exception"]
                if read is None:
                    assert not exceptions and span.status.code != otlp_json.STATUS_CODE_ERROR
                    continue
                assert read.facts == otlp_events.span_facts(span)
                assert [index for index, _, _ in read.exceptions] == [i for i, _ in exceptions]
                assert [at for _, at, _ in read.exceptions] == [e.time_unix_nano for _, e in exceptions]
                assert [own for _, _, own in read.exceptions] == [
                    otlp_json.flatten_attributes(e.attributes) for _, e in exceptions
                ]
                spans += 1
        for scope in line.logs:
            for plain, facts in zip(scope.records, scope.read, strict=True):
                model = otlp_events.log_facts(otlp_json.LogRecord.model_validate(plain))
                assert (facts is None) == (otlp_build.log_severity(model) < otlp_build.SEVERITY_ERROR)
                if facts is not None:
                    assert facts == model
                    logs += 1
    assert spans and (logs or name == "sample")


PARENT_SPAN_IDS: list[object] = [
    "",
    "00f067aa0ba902b7",
    "00F067AA0BA902B7",
    "0000000000000000",
    "00f067aa 0ba902b",
    "00f067aa0ba902bz",
    "00f067aa0ba902b",
    "APBnqguqArc=",
    0,
    None,
    [],
    {},
]


@pytest.mark.parametrize("parent", [*PARENT_SPAN_IDS, "absent"])
def test_a_span_s_parent_id_in_any_spelling_is_read_lean_as_the_models_read_it(
    parent: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root span, the usual one, has no parent id (absent or empty): read without the id's check, which
    every other spelling still gets (or its line is left to the models)."""
    span: dict[str, object] = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "GET /",
        "startTimeUnixNano": "1700000000000000000",
        "status": {"code": 2, "message": "failed"},
    }
    if parent != "absent":
        span["parentSpanId"] = parent
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    path = tmp_path / "spans.jsonl"
    path.write_text(line + "\n" + line.replace("b7ad", "c7ad") + "\n")
    try:
        models = with_models_only(path, monkeypatch)
    except SourceError:
        with pytest.raises(SourceError):
            OtlpFileSource(path).poll(EVERYTHING)
        return
    lean = OtlpFileSource(path).poll(EVERYTHING)
    assert lean.model_copy(update={"source_state": None}) == models.model_copy(update={"source_state": None})
