"""A log record's event id is what the release before gave it, while its message reads a map body with its
keys sorted: a round's overlap window re-reads records an earlier release already counted, and a record whose
id changed with the upgrade would be counted once more. The id hashes the body and the attribute values
spelled in the record's own key order; only the message (what grouping reads) sorts a map body's keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rounds_bot.sources import otlp_file
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.otlp_lean import lean_line

EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
RESOURCE = {"attributes": [{"key": "service.name", "value": {"stringValue": "checkout"}}]}

#: the id the release before this change gave `_pino_record` (its sha256 of the record's fields, the map
#: body and the array-of-map attribute spelled in the record's own key order)
EARLIER_ID = "753f6181ba72bdc3f6ab90464bd29df5"
#: the id the release before gave `_pino_record` with an empty body value and a `message` attribute
EARLIER_EMPTY_BODY_ID = "a42da3f8c4a4a4ce6efad3b478b248d2"


def _pair(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def _pino_record() -> dict[str, Any]:
    """An error as pino sends it through the OTLP bridge: a map body, its keys in the logger's order, and an
    attribute holding an array of maps."""
    body = [
        _pair("order", {"intValue": "7"}),
        _pair("level", {"stringValue": "error"}),
        _pair("code", {"stringValue": "card_declined"}),
    ]
    item = [_pair("sku", {"stringValue": "A-1"}), _pair("qty", {"intValue": "2"})]
    return {
        "timeUnixNano": "1700000000000000000",
        "severityNumber": 17,
        "severityText": "ERROR",
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "body": {"kvlistValue": {"values": body}},
        "attributes": [_pair("items", {"arrayValue": {"values": [{"kvlistValue": {"values": item}}]}})],
    }


def _poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, lean: bool, record: dict[str, Any] | None = None
) -> PollResult:
    scope = {"scope": {"name": "pino"}, "logRecords": [record or _pino_record()]}
    line = json.dumps({"resourceLogs": [{"resource": RESOURCE, "scopeLogs": [scope]}]})
    assert lean_line(line) is not None  # read lean unless the models are made to read it
    path = tmp_path / "logs.otlp.jsonl"
    path.write_text(line + "\n")
    with monkeypatch.context() as patched:
        if not lean:
            patched.setattr(otlp_file, "lean_line", lambda raw: None)  # the models' reading of every line
        return OtlpFileSource(path).poll(EVERYTHING)


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "models"])
def test_a_map_body_record_keeps_the_event_id_of_the_release_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    result = _poll(tmp_path, monkeypatch, lean=lean)
    assert [event.event_id for event in result.events] == [EARLIER_ID]


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "models"])
def test_a_map_body_record_reads_its_message_with_sorted_keys_and_its_attributes_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    (event,) = _poll(tmp_path, monkeypatch, lean=lean).events
    assert event.message == '{"code":"card_declined","level":"error","order":7}'
    assert event.attributes["items"] == '[{"sku":"A-1","qty":2}]'


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "models"])
def test_an_empty_body_value_reads_as_no_message_but_keeps_its_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool
) -> None:
    """`"body": {}` is an AnyValue with no field set, an empty body (OTLP common.proto): its message is its
    `message` attribute, not "null", while its id hashes the body as the release before spelled it."""
    record = {**_pino_record(), "body": {}, "attributes": [_pair("message", {"stringValue": "cart lost"})]}
    (event,) = _poll(tmp_path, monkeypatch, lean=lean, record=record).events
    assert event.message == "cart lost"
    assert event.event_id == EARLIER_EMPTY_BODY_ID
