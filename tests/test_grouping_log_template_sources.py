"""The template a logging library exports beside an error log's body reaches the event's attributes from every
source, and through the redaction boundary, so grouping can read it: SigNoz grouped in ClickHouse, read as
whole raw rows, or read by name (a record SigNoz cannot render whole), and an OTLP file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from signoz_emulator import Behaviour, SignozEmulator
from signoz_emulator.data import Dataset, load_otlp_lines
from signoz_fixtures import SECOND, T0_NS, RecordedSleep, source_for
from signoz_rows import attributes, otlp_lines

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.log_template import TEMPLATE_ATTRIBUTES
from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.signoz.times import ns_to_datetime

WINDOW = Window(start=ns_to_datetime(T0_NS), end=ns_to_datetime(T0_NS + 600 * SECOND))
NAN = {"key": "ratio", "value": {"doubleValue": "NaN"}}
TEMPLATES = {
    "{OriginalFormat}": "Payment {PaymentId} failed for customer {Email}",
    "message_template.text": "Refund {RefundId} failed for customer {Email}",
    "log.body.template": "Charge {} failed for customer {}",
}


def _record(at: int, key: str, n: int, *more: dict[str, Any]) -> dict[str, Any]:
    body = TEMPLATES[key].replace("{PaymentId}", str(n)).replace("{RefundId}", str(n))
    body = (
        body.replace("{Email}", f"user{n}@example.com").replace("{}", str(n), 1).replace("{}", f"u{n}@x.io")
    )
    return {
        "timeUnixNano": str(at),
        "severityText": "ERROR",
        "severityNumber": 17,
        "body": {"stringValue": body},
        "attributes": [*attributes({key: TEMPLATES[key], "order.id": str(n)}), *more],
    }


def _records(*more: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _record(T0_NS + (index * 3 + n) * SECOND, key, n, *more)
        for index, key in enumerate(TEMPLATES)
        for n in range(1, 3)
    ]


def _carried(events: list[ErrorEvent]) -> set[tuple[str, object]]:
    """The template attributes the source's log events carry."""
    return {
        (key, e.attributes[key])
        for e in events
        if e.kind == "log"
        for key in TEMPLATES
        if key in e.attributes
    }


def _signoz(logs: list[dict[str, Any]], sql: bool) -> list[ErrorEvent]:
    dataset = Dataset()
    load_otlp_lines(otlp_lines([], logs), dataset, where="templates")
    behaviour = Behaviour(api_key="test-key", clickhouse_sql_allowed=sql, version="v0.138.0")
    with (
        SignozEmulator(dataset, behaviour) as emulator,
        source_for(emulator, sleep=RecordedSleep()) as source,
    ):
        result = source.poll(WINDOW, frozenset())
    assert result.failures == []
    return result.events


@pytest.mark.parametrize(
    ("how", "sql", "more"),
    [
        ("grouped in ClickHouse", True, ()),
        ("raw rows, whole", False, ()),
        ("raw rows, by name", False, (NAN,)),
    ],
)
def test_signoz_carries_the_template_to_the_event(
    how: str, sql: bool, more: tuple[dict[str, Any], ...]
) -> None:
    events = _signoz(_records(*more), sql)
    assert _carried(events) == set(TEMPLATES.items()), how


def test_the_names_a_record_is_read_by_include_every_template_attribute() -> None:
    from rounds_bot.sources.signoz.builder_queries import NAMED_LOG_ATTRIBUTES

    assert set(TEMPLATE_ATTRIBUTES) <= set(NAMED_LOG_ATTRIBUTES)


def test_an_otlp_file_carries_the_template_to_the_event(tmp_path: Path) -> None:
    path = tmp_path / "logs.otlp.jsonl"
    path.write_text("\n".join(otlp_lines([], _records())) + "\n")
    events = OtlpFileSource(path).poll(Window(start=ns_to_datetime(0), end=WINDOW.end), frozenset()).events
    assert _carried(events) == set(TEMPLATES.items())
    found = {a.signature_id for a in GroupingEngine().assign_all(events)}
    assert len(found) == len(TEMPLATES)  # one problem per statement, two lines each


def test_the_redactor_still_runs_on_the_template_and_grouping_reads_what_it_left() -> None:
    """A template holds no values, but one that holds a secret all the same (a key pasted into the format
    string) loses it at the boundary, before grouping reads it: no issue shows it."""
    secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
    template = f"Payment {{PaymentId}} failed with key {secret}"
    events = [
        ErrorEvent.model_validate(
            {
                "event_id": f"e{n}",
                "timestamp": ns_to_datetime(T0_NS),
                "service": "shop",
                "kind": "log",
                "message": f"Payment {n} failed with key {secret}",
                "attributes": {"{OriginalFormat}": template},
            }
        )
        for n in range(3)
    ]
    redactor = Redactor()
    safe = [redactor.event(event) for event in events]
    assert all(secret not in str(event.attributes["{OriginalFormat}"]) for event in safe)
    assignments = GroupingEngine().assign_all(safe)
    assert len({a.signature_id for a in assignments}) == 1
    assert "log-template:" in assignments[0].explanation
    assert all(secret not in a.explanation and secret not in a.title for a in assignments)


def test_the_lines_of_a_file_source_group_as_the_template_says(tmp_path: Path) -> None:
    """End to end through the redaction boundary: a file of one statement's lines with different values."""
    logs = [_record(T0_NS + n * SECOND, "{OriginalFormat}", n) for n in range(1, 30)]
    path = tmp_path / "logs.otlp.jsonl"
    path.write_text(json.dumps(json.loads(otlp_lines([], logs)[1])) + "\n")
    events = OtlpFileSource(path).poll(Window(start=ns_to_datetime(0), end=WINDOW.end), frozenset()).events
    redactor = Redactor()
    found = {a.signature_id for a in GroupingEngine().assign_all([redactor.event(e) for e in events])}
    assert len(found) == 1
