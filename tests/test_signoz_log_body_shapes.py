"""Log bodies as the SigNoz collector stores them, read back by rounds on both of its paths.

The collector's ClickHouse logs exporter writes a record's body as text into `body`
(signoz-otel-collector exporter/clickhouselogsexporter/exporter.go getStringifiedBody, v0.129.13 to
v0.144.7: pcommon's AsString, its raw bytes for a bytes body) and, with its `body_json_enabled`, a map body
into `body_v2` (processBody). A row written before JSON bodies were turned on keeps its text in `body` and
`{}` in `body_v2`; a SigNoz with `use_json_body` answers a raw row's `body` from `body_v2` alone
(pkg/statementbuilder/logsstatementbuilder/statement_builder.go bodyAliasExpression at v0.138.0), so its
text cannot be had there."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import poll_window
from signoz_rows import otlp_lines

from rounds_bot.sources import otlp_file
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.otlp_lean import lean_line
from rounds_bot.sources.signoz.error_logs import RawLog

EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))

MINUTE = 60 * SECOND
KEY = "test-key"


def _log(at: int, body: dict[str, Any] | None, attributes: dict[str, str] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"timeUnixNano": str(at), "severityText": "ERROR", "severityNumber": 17}
    if body is not None:
        record["body"] = body
    if attributes:
        record["attributes"] = [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]
    return record


def _text(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def _map(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"kvlistValue": {"values": [{"key": key, "value": value} for key, value in pairs]}}


def _poll(dataset: Dataset, *, sql: bool, use_json_body: bool = False) -> PollResult:
    behaviour = Behaviour(api_key=KEY, use_json_body=use_json_body, clickhouse_sql_allowed=sql)
    with SignozEmulator(dataset, behaviour) as emulator, source_for(emulator) as source:
        return source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())


def _messages(result: PollResult) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.message] = counts.get(event.message, 0) + event.count
    return counts


def _before_and_after_json_bodies() -> Dataset:
    """Three rows written as text before the collector's `body_json_enabled`, one after it."""
    dataset = Dataset()
    old = [
        _log(T0_NS + index * SECOND, _text(text))
        for index, text in enumerate(("payment declined", "cart lost"))
    ]
    old.append(_log(T0_NS + 2 * SECOND, _text("stock service unreachable"), {"message": "stock unreachable"}))
    load_otlp_lines(otlp_lines([], old), dataset, where="before json bodies")
    dataset.body_json_enabled = True
    new = [_log(T0_NS + 3 * SECOND, _map(("message", _text("card expired")), ("order", {"intValue": "7"})))]
    load_otlp_lines(otlp_lines([], new), dataset, where="after json bodies")
    return dataset


def test_rows_written_before_json_bodies_are_read_by_their_text_where_sql_runs():
    result = _poll(_before_and_after_json_bodies(), sql=True, use_json_body=True)
    assert _messages(result) == {
        "payment declined": 1,
        "cart lost": 1,
        "stock service unreachable": 1,
        "card expired": 1,
    }


def test_rows_written_before_json_bodies_read_raw_are_skipped_not_grouped_under_an_empty_message():
    result = _poll(_before_and_after_json_bodies(), sql=False, use_json_body=True)
    # the row with a `message` attribute reads as it; the two without any text are reported, with why
    assert _messages(result) == {"stock unreachable": 1, "card expired": 1}
    reasons = [skipped.reason for skipped in result.skipped]
    assert len(reasons) == 2
    assert all("written before" in reason and "body_v2" in reason for reason in reasons)


def _file_poll(tmp_path: Path, logs: list[dict[str, Any]]) -> PollResult:
    path = tmp_path / "logs.otlp.jsonl"
    path.write_text("\n".join(otlp_lines([], logs)) + "\n")
    return OtlpFileSource(path).poll(EVERYTHING, frozenset())


# a map body without a message field, in two key orders: the collector writes it with its keys sorted
# (pcommon Value.AsString marshals the map as encoding/json does), so one record reads one way
_ORDERS = (
    _map(("order", {"intValue": "7"}), ("level", _text("error")), ("code", _text("X"))),
    _map(("code", _text("X")), ("level", _text("error")), ("order", {"intValue": "7"})),
)


def test_a_file_map_body_reads_the_same_whatever_its_key_order(tmp_path: Path):
    result = _file_poll(tmp_path, [_log(T0_NS + index * SECOND, body) for index, body in enumerate(_ORDERS)])
    assert _messages(result) == {'{"code":"X","level":"error","order":7}': 2}


def test_a_file_record_with_an_empty_body_reads_its_message_attribute(tmp_path: Path):
    logs = [
        _log(T0_NS, None, {"message": "stock unreachable"}),
        _log(T0_NS + SECOND, _text(""), {"msg": "cart lost"}),
    ]
    assert _messages(_file_poll(tmp_path, logs)) == {"stock unreachable": 1, "cart lost": 1}


def _old_rows_with_something_to_group_by() -> Dataset:
    """Rows written as an empty text before `body_json_enabled`, each with no message attribute but something
    else grouping reads: a bare `raise ValueError()` (OTel Python sends `exception.message` ""), a Java
    exception whose null message the appender leaves out (its stack only), and a .NET template."""
    dataset = Dataset()
    rows = [
        _log(T0_NS, _text(""), {"exception.type": "ValueError", "exception.message": ""}),
        _log(T0_NS + SECOND, _text(""), {"exception.stacktrace": "java.lang.IllegalStateException\n\tat A"}),
        _log(T0_NS + 2 * SECOND, _text(""), {"{OriginalFormat}": "Payment {PaymentId} failed"}),
    ]
    load_otlp_lines(otlp_lines([], rows), dataset, where="before json bodies")
    dataset.body_json_enabled = True
    return dataset


def test_an_old_row_with_an_exception_type_stack_or_template_is_read_raw_with_an_empty_message():
    result = _poll(_old_rows_with_something_to_group_by(), sql=False, use_json_body=True)
    assert result.skipped == []
    assert sorted((event.error_type or "", event.message) for event in result.events) == [
        ("", ""),
        ("", ""),
        ("ValueError", ""),
    ]
    assert sum(event.count for event in result.events) == 3


def _raw_row(body: Any, strings: dict[str, str] | None = None) -> dict[str, Any]:
    return {"timestamp": T0_NS, "id": "0", "body": body, "attributes_string": strings or {}}


def test_a_json_body_with_an_empty_message_is_read_as_no_message_not_skipped():
    # a body the collector wrote to `body_v2` with an empty message: its text is in no other column
    assert RawLog.model_validate(_raw_row({"message": ""})).body == ""


def test_only_a_json_body_of_nothing_without_anything_to_group_by_is_skipped():
    with pytest.raises(ValidationError, match="written before"):
        RawLog.model_validate(_raw_row({}))
    assert RawLog.model_validate(_raw_row({}, {"exception.type": "KeyError"})).body == ""


def test_a_json_body_of_nothing_with_an_error_code_is_read_by_its_code():
    # the first tier groups by an error code: a row holding one has something to be grouped by
    assert RawLog.model_validate(_raw_row({}, {"error.code": "PAYMENT_DECLINED"})).body == ""


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "models"])
def test_a_file_context_record_with_an_empty_body_reads_its_message_then_msg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
):
    def info(at: int, body: dict[str, Any] | None, attributes: dict[str, str]) -> dict[str, Any]:
        return {**_log(at, body, attributes), "severityText": "INFO", "severityNumber": 9}

    logs = [
        info(T0_NS, None, {"message": "reserving stock", "msg": "not this"}),
        info(T0_NS + SECOND, _text(""), {"msg": "charging card"}),
        _log(T0_NS + 2 * SECOND, _text("payment declined")),
    ]
    path = tmp_path / "logs.otlp.jsonl"
    lines = otlp_lines([], logs)
    assert all(lean_line(line) is not None for line in lines)  # read lean unless the models are made to
    path.write_text("\n".join(lines) + "\n")
    with monkeypatch.context() as patched:
        if not lean:
            patched.setattr(otlp_file, "lean_line", lambda raw: None)  # the models' reading of every line
        result = OtlpFileSource(path).poll(EVERYTHING, frozenset())
    [event] = result.events
    assert [record.body for record in event.context] == ["reserving stock", "charging card"]
