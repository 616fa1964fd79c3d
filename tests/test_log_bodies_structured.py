"""A log record whose body is one JSON object (a structured logger's line, collected as it was printed) is
read as the collector's `json_parser` would read it: its message field is the event's message, its other
fields are attributes, the body is kept as `log.body`. Two log statements of a service are then two
signatures, not one because their lines share keys; a signature an earlier release made from the whole
body keeps receiving its events."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.logged_traces import LOG_BODY, MESSAGE_FROM, TRACE_FROM
from rounds_bot.headline import headline
from rounds_bot.models import ErrorEvent
from rounds_bot.sources.log_bodies import StructuredBody, read_without_exception, structured_body

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _zap(n: int, message: str, order: int) -> str:
    """A line as zap's production logger writes it."""
    return json.dumps(
        {
            "level": "error",
            "ts": 1732700000.123 + n,
            "caller": "api/handler.go:42",
            "msg": message,
            "order_id": order,
            "error": f"charge card: card {order} declined",
        }
    )


# --- reading a body ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"level":"error","msg":"charge failed","order_id":7}', "msg", "charge failed"),  # zap, slog, pino
        (
            '{"@timestamp":"2026-11-27T12:00:00Z","message":"charge failed","log.level":"error"}',
            "message",
            "charge failed",
        ),
        (
            '{"@t":"2026-11-27T12:00:00Z","@mt":"Charge {OrderId} failed","@m":"Charge 7 failed"}',
            "@mt",
            "Charge {OrderId} failed",
        ),
        ('{"event":"charge failed","level":"error","order_id":7}', "event", "charge failed"),  # structlog
    ],
)
def test_a_structured_loggers_line_is_read_by_its_message_field(line: str, field: str, message: str) -> None:
    found = structured_body(line)
    assert found is not None and (found.message, found.field) == (message, field)
    assert field not in found.fields


def test_nested_fields_are_dotted_and_arrays_are_their_json_text() -> None:
    found = structured_body('{"msg":"m","http":{"status":502,"retry":true},"tags":["a",1],"gone":null}')
    assert found == StructuredBody("m", "msg", {"http.status": 502, "http.retry": True, "tags": '["a",1]'})


@pytest.mark.parametrize(
    "body",
    [
        "charge failed",
        '{"level":"error","order_id":7}',  # no message field
        '{"msg":"   "}',  # an empty one
        '{"msg": 7}',  # not text
        '["msg","charge failed"]',  # not an object
        '{"msg":"charge failed"',  # cut short
        '{"msg":"charge failed"} trailing words',
    ],
)
def test_anything_else_is_text_as_before(body: str) -> None:
    assert structured_body(body) is None
    attributes: dict[str, object] = {}
    assert read_without_exception(body, {}, attributes) == (None, body, None)  # type: ignore[arg-type]
    assert not attributes


def test_the_records_own_attributes_win_and_a_trace_field_gives_the_exception() -> None:
    line = json.dumps(
        {
            "msg": "charge failed",
            "order_id": 7,
            "err": {"type": "TypeError", "stack": "TypeError: x is undefined\n    at pay (/app/pay.js:3:9)"},
        }
    )
    attributes: dict[str, object] = {"order_id": "from the record"}
    read = read_without_exception(line, {"order_id": "from the record"}, attributes)  # type: ignore[arg-type]
    assert read == ("TypeError", "x is undefined", "TypeError: x is undefined\n    at pay (/app/pay.js:3:9)")
    assert attributes["order_id"] == "from the record" and attributes["err.type"] == "TypeError"
    assert attributes[LOG_BODY] == line and attributes[MESSAGE_FROM] == "msg"
    assert attributes[TRACE_FROM] == "err.stack" and "err.stack" not in attributes


# --- grouping ----------------------------------------------------------------------------------


def _read(n: int, message: str, order: int) -> ErrorEvent:
    """The event this release makes of a zap line."""
    body = _zap(n, message, order)
    attributes: dict[str, object] = {}
    read = read_without_exception(body, {}, attributes)  # type: ignore[arg-type]
    return ErrorEvent(
        event_id=f"r{n}",
        timestamp=T0,
        service="api",
        kind="log",
        severity="ERROR",
        message=read.message,
        attributes=attributes,  # type: ignore[arg-type]
    )


def _as_text(n: int, message: str, order: int) -> ErrorEvent:
    """The event an earlier release made of the same line: its whole body as the message."""
    return ErrorEvent(
        event_id=f"m{n}",
        timestamp=T0,
        service="api",
        kind="log",
        severity="ERROR",
        message=_zap(n, message, order),
    )


def test_two_log_statements_are_two_signatures_and_one_statement_one() -> None:
    placed = GroupingEngine().assign_all(
        [_read(1, "charge failed", 11), _read(2, "refund failed", 12), _read(3, "charge failed", 13)]
    )
    assert placed[0].signature_id == placed[2].signature_id != placed[1].signature_id
    assert headline(_read(1, "charge failed", 11)) == "charge failed"


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_whole_body_keeps_receiving_its_events(how: str) -> None:
    before = GroupingEngine()
    made = before.assign(_as_text(0, "charge failed", 10))
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all([_read(1, "charge failed", 11), _read(2, "charge failed", 12)])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)


def test_a_round_places_them_as_assigning_them_does() -> None:
    """`place_each`, the round's path, takes an event's known place first: the body's earlier reading still
    comes first. The earlier release put both statements' lines in one signature (their lines shared all but a
    word): it keeps receiving both, as it would have."""
    before = GroupingEngine()
    made = before.assign(_as_text(0, "charge failed", 10))
    engine = GroupingEngine(known=[before.state(made.signature_id)])
    events = [_read(1, "charge failed", 11), _read(2, "refund failed", 12)]
    placed = list(engine.place_each(events, {made.signature_id}))
    assert [p.signature_id for p in placed] == [made.signature_id] * 2


# --- logfmt ------------------------------------------------------------------------------------


def _logrus(n: int, message: str, order: int) -> str:
    """A line as logrus's text formatter writes it to a console that is not a terminal."""
    return f'time="2026-11-27T12:00:{n % 60:02d}Z" level=error msg="{message}" order_id={order}'


@pytest.mark.parametrize(
    ("line", "pairs"),
    [
        (
            'level=error ts=2026-11-27T12:00:01.123Z caller=handler.go:41 msg="charge failed" order_id=11',
            {"level": "error", "ts": "2026-11-27T12:00:01.123Z", "caller": "handler.go:41", "order_id": "11"},
        ),
        (
            'time="2026-11-27T12:00:01Z" level=error msg="say \\"hi\\""',
            {"time": "2026-11-27T12:00:01Z", "level": "error"},
        ),
    ],
)
def test_a_logfmt_line_is_read_by_its_msg_and_its_other_pairs(line: str, pairs: dict[str, str]) -> None:
    found = structured_body(line)
    assert found is not None and found.field == "msg" and found.fields == pairs
    assert found.message in ("charge failed", 'say "hi"')


@pytest.mark.parametrize(
    "line",
    [
        "msg=timeout",  # one pair: a message
        "failed to connect: host=db-1 msg=refused",  # prose before the pairs
        'level=error msg="unterminated',
        "level=error msg=ok retry",  # a key alone
        "level=error code=H12 desc=timeout",  # no message field
    ],
)
def test_a_line_that_is_not_all_pairs_with_a_message_is_text(line: str) -> None:
    assert structured_body(line) is None


def test_logfmt_statements_are_signatures_of_their_own_and_an_earlier_signature_keeps_them() -> None:
    def read(n: int, message: str) -> ErrorEvent:
        attributes: dict[str, object] = {}
        found = read_without_exception(_logrus(n, message, 10 + n), {}, attributes)  # type: ignore[arg-type]
        return ErrorEvent(
            event_id=f"l{n}",
            timestamp=T0,
            service="api",
            kind="log",
            severity="ERROR",
            message=found.message,
            attributes=attributes,  # type: ignore[arg-type]
        )

    fresh = GroupingEngine().assign_all(
        [read(1, "charge failed"), read(2, "user not found"), read(3, "charge failed")]
    )
    assert fresh[0].signature_id == fresh[2].signature_id != fresh[1].signature_id
    before = GroupingEngine()
    as_text = ErrorEvent(
        event_id="t0",
        timestamp=T0,
        service="api",
        kind="log",
        severity="ERROR",
        message=_logrus(0, "charge failed", 9),
    )
    made = before.assign(as_text)
    engine = GroupingEngine(lookup=KnownStates([before.state(made.signature_id)]))
    assert {a.signature_id for a in engine.assign_all([read(4, "charge failed")])} == {made.signature_id}
