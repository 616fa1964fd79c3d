"""Raw log rows of a SigNoz that queries JSON bodies (its experimental `use_json_body` flag, off by default:
pkg/flagger/registry.go). Its list query then selects `body_v2 as body` (pkg/statementbuilder/
logsstatementbuilder/statement_builder.go bodyAliasExpression), so a row's `body` is the JSON object the
collector wrote (signoz-otel-collector exporter/clickhouselogsexporter/exporter.go processBody), its empty
`message` dropped (pkg/querier/postprocess.go postProcessLogBody); a named `body` is `body_v2.message`
(logstelemetryschema/field_mapper.go getColumn). rounds reads the record's message from it."""

from __future__ import annotations

from typing import Any

import httpx
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, source_for
from signoz_parity import poll_window
from signoz_rows import otlp_lines
from test_signoz_emulator import logs_query, v5

from rounds_bot.diagnosis.lookups.signoz_rows import log_record
from rounds_bot.diagnosis.lookups.tools import MAX_TEXT_CHARS, one_line

MINUTE = 60 * SECOND
KEY = "test-key"


def _json_log(at: int, order: int, message: str | None = None) -> dict[str, Any]:
    text = f"payment {order} declined by the bank" if message is None else message
    body = {"kvlistValue": {"values": [{"key": "message", "value": {"stringValue": text}},
                                       {"key": "order", "value": {"intValue": str(order)}}]}}  # fmt: skip
    return {"timeUnixNano": str(at), "severityText": "ERROR", "severityNumber": 17, "body": body}


def _dataset() -> Dataset:
    dataset = Dataset(body_json_enabled=True)
    logs = [_json_log(T0_NS + index * SECOND, 1000 + index) for index in range(3)]
    logs.append(_json_log(T0_NS + 4 * SECOND, 7, message=""))
    load_otlp_lines(otlp_lines([], logs), dataset, where="json bodies")
    return dataset


def _raw_logs(emulator: SignozEmulator, **spec: Any) -> list[dict[str, Any]]:
    body = v5(logs_query(**spec), start=T0_NS // 1_000_000, end=(T0_NS + MINUTE) // 1_000_000)
    answer = httpx.post(f"{emulator.url}/api/v5/query_range", json=body, headers={"SIGNOZ-API-KEY": KEY})
    assert answer.status_code == 200, answer.text
    return [row["data"] for row in answer.json()["data"]["data"]["results"][0]["rows"]]


def test_the_emulator_answers_a_json_body_as_signoz_does():
    with SignozEmulator(_dataset(), Behaviour(api_key=KEY, use_json_body=True)) as emulator:
        whole = _raw_logs(emulator)
        named = _raw_logs(emulator, selectFields=[{"name": "body", "fieldContext": "log", "signal": "logs"}])
    assert whole[0]["body"] == {"order": 7}  # its empty message dropped
    assert whole[1]["body"] == {"message": "payment 1002 declined by the bank", "order": 1002}
    assert [row["body"] for row in named[:2]] == ["", "payment 1002 declined by the bank"]


def test_error_logs_read_raw_from_a_signoz_that_queries_json_bodies_are_grouped_by_their_message():
    behaviour = Behaviour(api_key=KEY, use_json_body=True, clickhouse_sql_allowed=False)
    with SignozEmulator(_dataset(), behaviour) as emulator, source_for(emulator) as source:
        result = source.poll(poll_window(T0_NS, T0_NS + 20 * MINUTE), frozenset())
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.message] = counts.get(event.message, 0) + event.count
    # one group of the three payments (the raw reader keeps the newest as sample), one of the empty message
    assert counts == {"payment 1002 declined by the bank": 3, "": 1}
    assert not any("body" in str(skipped) for skipped in result.skipped)


def _looked_up(body: Any) -> str:
    return log_record({"timestamp": T0_NS, "id": "x", "severity_text": "ERROR", "body": body}).body


def test_a_looked_up_log_with_a_json_body_reads_as_its_message_then_its_other_fields():
    body = {"message": "boom", "error": "card declined", "order_id": 42}
    assert _looked_up(body) == 'boom {"error":"card declined","order_id":42}'
    assert _looked_up({"message": "card declined"}) == "card declined"


def test_a_looked_up_log_with_a_json_body_without_a_message_reads_as_its_json():
    assert _looked_up({"order": 7}) == '{"order":7}'
    assert _looked_up({"message": "", "order": 7}) == '{"order":7}'
    assert _looked_up({"message": {"code": 7}}) == '{"message":{"code":7}}'  # not text: not the message


def test_a_looked_up_json_body_is_cut_after_its_message_as_any_body_is():
    line = one_line(_looked_up({"message": "boom", "payload": "x" * 10 * MAX_TEXT_CHARS}))
    assert line.startswith('boom {"payload":"xxx')
    assert len(line) == MAX_TEXT_CHARS
