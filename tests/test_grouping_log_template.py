"""An error log whose logging library exported the log statement's own template beside the formatted body
(OpenTelemetry .NET's `{OriginalFormat}`, Serilog's `message_template.text`, the OpenTelemetry Java
appenders' `log.body.template`) is grouped by that template, as Sentry groups a log entry by its format
string: one statement's lines are one problem whatever values they print, two statements are two even when
their lines read alike. A signature made before the template was read, from the body, keeps receiving them."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from known_states import KnownStates
from test_grouping_store import saved

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.log_template import MAX_TEMPLATE_CHARS, TEMPLATE_ATTRIBUTES
from rounds_bot.models import AttributeValue, ErrorEvent
from rounds_bot.round.occurrences import load_engine
from rounds_bot.settings import Settings
from rounds_bot.store import Store

T0 = datetime(2026, 11, 1, tzinfo=UTC)
PAYMENT = "Payment {PaymentId} failed for customer {Email}: {Reason}"
REASONS = ("card declined", "insufficient funds", "expired card", "do not honor", "issuer unavailable")


def _log(n: int, body: str, template: AttributeValue | None, key: str = "{OriginalFormat}") -> ErrorEvent:
    attributes: dict[str, AttributeValue] = {"otel.scope.name": "Shop.Payments"}
    if template is not None:
        attributes[key] = template
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        kind="log",
        severity="ERROR",
        message=body,
        attributes=attributes,
    )


def _payment(n: int, key: str = "{OriginalFormat}", template: AttributeValue | None = PAYMENT) -> ErrorEvent:
    """A line of the payment statement, as the exporter sends it: the body formatted, the template beside."""
    body = f"Payment {7000 + n * 37} failed for customer user{n}@example.com: {REASONS[n % len(REASONS)]}"
    return _log(n, body, template, key)


def _signatures(engine: GroupingEngine, events: list[ErrorEvent]) -> list[str]:
    return [assignment.signature_id for assignment in engine.assign_all(events)]


@pytest.mark.parametrize("key", TEMPLATE_ATTRIBUTES)
def test_fifty_lines_of_one_statement_are_one_problem(key: str) -> None:
    found = _signatures(GroupingEngine(), [_payment(n, key) for n in range(50)])
    assert len(set(found)) == 1


def test_without_the_template_the_same_lines_are_split_by_their_reasons() -> None:
    """What the template changes: the bodies alone make more than one problem of the statement."""
    found = _signatures(GroupingEngine(), [_payment(n, template=None) for n in range(50)])
    assert len(set(found)) > 1


def test_two_statements_whose_lines_read_alike_are_two_problems() -> None:
    """`Order {OrderId} failed` and `Order {OrderId} {Status}` print the same line for a failed order."""
    first = [_log(n, f"Order {n} failed", "Order {OrderId} failed") for n in range(10)]
    second = [_log(100 + n, f"Order {n} failed", "Order {OrderId} {Status}") for n in range(10)]
    found = _signatures(GroupingEngine(), first + second)
    assert len(set(found[:10])) == 1 and len(set(found[10:])) == 1
    assert found[0] != found[10]


def test_the_partition_does_not_depend_on_the_order_of_the_lines() -> None:
    events = [_payment(n) for n in range(30)]
    events += [_log(100 + n, f"Order {n} failed", "Order {OrderId} {Status}") for n in range(5)]
    events += [_log(200 + n, f"Order {n} failed", None) for n in range(5)]
    shuffled = list(events)
    random.Random(7).shuffle(shuffled)
    one = dict(zip((e.event_id for e in events), _signatures(GroupingEngine(), events), strict=True))
    other = dict(zip((e.event_id for e in shuffled), _signatures(GroupingEngine(), shuffled), strict=True))
    assert one == other


def test_a_template_without_a_placeholder_is_a_template() -> None:
    events = [
        _log(n, f"Payment gateway unreachable (attempt {n})", "Payment gateway unreachable") for n in (1, 2)
    ]
    events.append(_log(3, "Payment gateway unreachable (attempt 3)", "Payment gateway is down"))
    found = _signatures(GroupingEngine(), events)
    assert found[0] == found[1] != found[2]


def test_an_absurdly_long_template_is_cut_and_still_groups() -> None:
    long = "Payment {PaymentId} failed " + "because " * (MAX_TEMPLATE_CHARS // 4)
    events = [_log(n, f"Payment {n} failed " + "because " * 3, long) for n in range(3)]
    other = _log(9, "Payment 9 failed because", long[:100] + " other statement")
    assignments = GroupingEngine().assign_all([*events, other])
    assert len({a.signature_id for a in assignments[:3]}) == 1
    assert assignments[3].signature_id != assignments[0].signature_id
    assert len(assignments[0].explanation) < MAX_TEMPLATE_CHARS + 2_000


@pytest.mark.parametrize("template", ["", "   ", 42, True, 2.5, "{Message}", "{0}: {1}"])
def test_a_template_that_names_no_statement_leaves_the_line_grouped_by_its_body(
    template: AttributeValue,
) -> None:
    """Empty, not text, or only placeholders (a helper's `LogError("{Message}", text)`, called from anywhere):
    the line is grouped by its body, as without the attribute."""
    events = [_log(1, "Order 1 failed", template), _log(2, "Disk full on /dev/sda1", template)]
    without = [_log(1, "Order 1 failed", None), _log(2, "Disk full on /dev/sda1", None)]
    assert _signatures(GroupingEngine(), events) == _signatures(GroupingEngine(), without)


def test_the_explanation_names_the_template_and_the_rule() -> None:
    assignment = GroupingEngine().assign_all([_payment(1), _payment(2)])[1]
    assert assignment.tier == "fingerprint"
    assert "Payment <*> failed for customer <*>" in assignment.explanation
    assert "logging library" in assignment.explanation


# --- signatures made before the template was read ----------------------------------------------------


def _before(events: list[ErrorEvent]) -> GroupingEngine:
    """What an earlier release made of the lines: it did not read the template, so the lines without it."""
    engine = GroupingEngine()
    engine.assign_all(
        [event.model_copy(update={"attributes": {"otel.scope.name": "Shop.Payments"}}) for event in events]
    )
    return engine


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_its_body_made_before_keeps_receiving_the_statement(how: str) -> None:
    earlier = [_payment(n) for n in range(0, 50, len(REASONS))]  # one reason only: one signature then
    before = _before(earlier)
    (made,) = before.signature_ids()
    states = [before.state(made)]
    engine = GroupingEngine(known=states) if how == "given" else GroupingEngine(lookup=KnownStates(states))
    found = engine.assign_all([_payment(n) for n in range(50)])
    assert {a.signature_id for a in found} == {made}
    assert "before" in found[0].explanation.splitlines()[-1]
    # registered under the template: a later round finds it by the template, whatever the body
    later = GroupingEngine(lookup=KnownStates([engine.state(made)]))
    odd = _log(99, "Payment 1 failed for customer x@example.com: the bank said no, twice", PAYMENT)
    assert later.assign(odd).signature_id == made


def test_a_database_with_the_body_made_signature_files_no_second_problem(fresh_db: Store) -> None:
    before = _before([_payment(0)])
    saved(before, fresh_db)
    (made,) = before.signature_ids()
    engine = load_engine(Settings(), fresh_db)
    found = {a.signature_id for a in engine.assign_all([_payment(n) for n in range(50)])}
    assert found == {made}
    assert set(engine.signature_ids()) == {made}


def test_a_fresh_database_makes_one_problem_per_template(fresh_db: Store) -> None:
    engine = load_engine(Settings(), fresh_db)
    events = [_payment(n) for n in range(20)] + [
        _log(100 + n, f"Order {n} failed", "Order {OrderId} {Status}") for n in range(5)
    ]
    found = _signatures(engine, events)
    assert len(set(found)) == 2
    saved(engine, fresh_db)
    again = load_engine(Settings(), fresh_db)
    assert _signatures(again, events) == found


def test_a_round_places_them_as_assigning_them_does() -> None:
    before = _before([_payment(0)])
    (made,) = before.signature_ids()
    engine = GroupingEngine(known=[before.state(made)])
    events = [_payment(n) for n in range(10)] + [_log(100, "Order 1 failed", "Order {OrderId} {Status}")]
    placed = list(engine.place_each(events, {made}))
    assert [p.signature_id for p in placed[:10]] == [made] * 10
    assert placed[10].signature_id != made


def test_the_lines_placed_by_their_template_teach_the_miner_nothing_of_the_other_lines() -> None:
    """A line placed by its template is not counted among the batch's lines (`variability`): its body does not
    make a word of another line a value."""
    alone = _log(1, "job alpha failed: destination unreachable", None)
    names = ["beta", "gamma", "delta"]
    templated = [
        _log(n, f"job {name} failed: destination unreachable", "job {Name} failed: {Reason}")
        for n, name in enumerate(names, 2)
    ]
    by_itself = GroupingEngine().assign_all([alone])[0]
    beside = GroupingEngine().assign_all([alone, *templated])[0]
    assert "job alpha failed" in by_itself.explanation
    assert beside.fingerprint_hash == by_itself.fingerprint_hash


@pytest.mark.parametrize("key", TEMPLATE_ATTRIBUTES)
def test_a_template_the_caller_formatted_itself_groups_by_the_body_as_before(key: str) -> None:
    # C#'s `logger.LogError($"Failed to load profile for user {name}")` (analyzer CA2254): the library's
    # template is the formatted text, the same as the body, one per value
    names = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy")
    events = [_log(n, f"Failed to load profile for user {name}", None) for n, name in enumerate(names)]
    plain = _signatures(GroupingEngine(), events)
    formatted = [
        _log(n, f"Failed to load profile for user {name}", f"Failed to load profile for user {name}", key)
        for n, name in enumerate(names)
    ]
    assert _signatures(GroupingEngine(), formatted) == plain
    assert len(set(plain)) == 1
