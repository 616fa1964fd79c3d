"""A trailing clause that only carries redacted values is context, not the log statement.

A service appends `(user x@y)` or `token=...` to a line now and then; redaction makes the value
`[REDACTED:kind]`. The clause must not make a template, and so an issue, of its own; what is not
such a clause stays part of the statement; and a database an earlier version wrote, whose templates
hold the clause, keeps receiving the clause's events.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rounds_bot.grouping import shapes
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.fingerprint import CONTEXT_HINT, HASH_VERSION
from rounds_bot.grouping.normalize import normalize_uncached
from rounds_bot.grouping.skeletons import skeleton, skeleton_with_context, split_context
from rounds_bot.grouping.state import SignatureState
from rounds_bot.models import ErrorEvent
from rounds_bot.store import Store
from tests.signature_samples import a_signature

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)
_STATES = ["index", "coupon", "batch", "cache", "limit", "quote", "ship", "card", "token", "label", "queue"]
_NEXT = [
    "token",
    "import",
    "refund",
    "payment",
    "item",
    "user",
    "worker",
    "address",
    "invoice",
    "tax",
    "load",
]


def event(number: int, message: str, service: str = "payments") -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{number}",
        timestamp=EPOCH + timedelta(seconds=number),
        service=service,
        kind="span_error",
        message=message,
    )


def split_bugs() -> list[tuple[str, str]]:
    """(bug, message) lines as the scale data writes them: two statements, each now and then with
    a redacted clause appended (the lines split into three and two signatures before)."""
    lines = [("route", f"invalid route487 'r{n}' in export {n}") for n in range(30)]
    lines += [
        ("route", "invalid route487 'x' in export 7 token=[REDACTED:github_token]"),
        ("route", "invalid route487 'y' in export 8 (user [REDACTED:email])"),
    ]
    lines += [
        ("state", f"index599 {n} is in state {_STATES[n % 11]}, expected {_NEXT[n * 7 % 11]} before charge")
        for n in range(40)
    ]
    lines.append(
        ("state", "index599 41 is in state coupon, expected import before charge (user [REDACTED:email])")
    )
    return lines


def signatures_per_bug(engine: GroupingEngine, lines: list[tuple[str, str]]) -> dict[str, set[str]]:
    events = [event(n, message) for n, (_, message) in enumerate(lines)]
    found: dict[str, set[str]] = {}
    for (bug, _), assignment in zip(lines, engine.assign_all(events), strict=True):
        found.setdefault(bug, set()).add(assignment.signature_id)
    return found


def test_a_statement_with_a_redacted_clause_appended_now_and_then_is_one_signature() -> None:
    found = signatures_per_bug(GroupingEngine(), split_bugs())
    assert {bug: len(ids) for bug, ids in found.items()} == {"route": 1, "state": 1}


def test_before_the_rule_the_same_lines_split_into_a_signature_per_clause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shapes, "skeleton", skeleton_with_context)  # the reading `rounds-fp:3` had
    found = signatures_per_bug(GroupingEngine(), split_bugs())
    assert {bug: len(ids) for bug, ids in found.items()} == {"route": 3, "state": 2}


@pytest.mark.parametrize(
    ("message", "statement", "context"),
    [
        ("charge failed (user [REDACTED:email])", "charge failed", "(user [REDACTED:email])"),
        ("charge failed ([REDACTED:email])", "charge failed", "([REDACTED:email])"),
        ("charge failed token=[REDACTED:github_token]", "charge failed", "token=[REDACTED:github_token]"),
        ("charge failed, user: [REDACTED:email]", "charge failed", "user: [REDACTED:email]"),
        (
            "charge failed token=[REDACTED:github_token] (user [REDACTED:email])",
            "charge failed",
            "token=[REDACTED:github_token] (user [REDACTED:email])",
        ),
        (
            "charge failed (user=[REDACTED:email], key: [REDACTED:stripe_key])",
            "charge failed",
            "(user=[REDACTED:email], key: [REDACTED:stripe_key])",
        ),
    ],
)
def test_a_trailing_clause_of_redacted_values_after_a_label_or_key_is_left_out(
    message: str, statement: str, context: str
) -> None:
    assert split_context(message) == (statement, context)
    assert skeleton(message) == skeleton_with_context(statement)


@pytest.mark.parametrize(
    "message",
    [
        "(user [REDACTED:email])",  # nothing but the clause: it is the whole statement
        "token=[REDACTED:github_token]",
        "login failed: [REDACTED:jwt]",  # a colon right after prose ends the statement's own words
        "session [REDACTED:jwt] expired",  # a placeholder inside the statement
        "charge failed for user [REDACTED:email]",  # no delimiter: the words are the statement's
        "charge failed (the user [REDACTED:email])",  # more than a label
        "charge failed (user [REDACTED:email]) at shard 3",  # followed by more of the statement
        "charge failed (user [REDACTED:email]).",
        "charge failed(user [REDACTED:email])",  # glued to a word
        "charge failed (requested 7)",  # a clause of other values
        "charge failed (user bob)",
        # a long run of placeholders that does not end the message is given up, not backtracked into
        "charge failed (" + "[REDACTED:email]  ,  " * 150 + "at shard)",
        "charge failed" + ", token=[REDACTED:github_token]" * 100 + " at shard",
    ],
)
def test_what_is_not_such_a_clause_stays_in_the_statement(message: str) -> None:
    normalized = normalize_uncached(message)
    assert split_context(normalized) == (normalized, "")
    assert skeleton(normalized) == skeleton_with_context(normalized)


@pytest.mark.parametrize("run", [" ", "\t", "( ", ", "])
def test_a_long_run_of_white_space_that_does_not_end_the_message_is_read_in_one_pass(run: str) -> None:
    # read as the pattern once was, each character of the run would start a clause that runs to the
    # run's end: this text would take minutes
    text = "[REDACTED:email] a" + run * 100_000 + "x"
    assert split_context(text) == (text, "")


@pytest.mark.parametrize(
    ("plain", "other"),
    [
        ("tax limit 5 exceeded", "tax limit 5 exceeded (requested 7)"),
        ("charge failed", "charge failed (user bob)"),
        ("session expired", "session [REDACTED:jwt] expired"),
        ("authentication failed: [REDACTED:jwt]", "authentication expired: [REDACTED:jwt]"),
        ("charge failed", "charge failed (user [REDACTED:email]) at shard 3"),
    ],
)
def test_lines_that_differ_by_more_than_such_a_clause_stay_apart(plain: str, other: str) -> None:
    engine = GroupingEngine()
    first, second = engine.assign_all([event(1, plain), event(2, other)])
    assert first.signature_id != second.signature_id


def test_why_grouped_says_what_was_left_out_and_why() -> None:
    engine = GroupingEngine()
    plain, with_clause = engine.assign_all(
        [
            event(1, "charge 17 declined by gateway"),
            event(2, "charge 18 declined by gateway (user [REDACTED:email])"),
        ]
    )
    assert with_clause.signature_id == plain.signature_id
    assert with_clause.tier == "fingerprint"
    assert f"  - context: (user [REDACTED:email])  ({CONTEXT_HINT})" in with_clause.explanation.splitlines()
    assert "context" not in plain.explanation


def saved_by_the_earlier_reading(
    monkeypatch: pytest.MonkeyPatch, lines: list[tuple[str, str]]
) -> tuple[list[SignatureState], list[str]]:
    """What the version before the rule saved of `lines`: the engine as it read messages then (the
    clause kept), its states marked with the version it was."""
    with monkeypatch.context() as patch:
        patch.setattr(shapes, "skeleton", skeleton_with_context)
        before = GroupingEngine()
        events = [event(n, message) for n, (_, message) in enumerate(lines)]
        old = [a.signature_id for a in before.assign_all(events)]
        states = [
            before.state(sid).model_copy(update={"fingerprint_version": HASH_VERSION})
            for sid in dict.fromkeys(old)
        ]
    return states, old


def test_a_database_written_before_the_rule_keeps_sending_the_clause_events_where_they_went(
    monkeypatch: pytest.MonkeyPatch, fresh_db: Store
) -> None:
    lines = split_bugs()
    states, old = saved_by_the_earlier_reading(monkeypatch, lines)
    assert len(states) == 5  # one signature per clause, as the earlier version made them
    with fresh_db.transaction():
        for state in states:
            fresh_db.save(a_signature(state.signature_id, service=state.service, grouping_state=state))
    after = GroupingEngine(lookup=fresh_db.grouping_lookup())
    again = after.assign_all([event(100 + n, message) for n, (_, message) in enumerate(lines)])
    assert [a.signature_id for a in again] == old
    clause = next(a for a, (_, m) in zip(again, lines, strict=True) if m.endswith("(user [REDACTED:email])"))
    assert "rule: the fingerprint an earlier version gave these frames" in clause.explanation


def test_after_the_upgrade_a_clause_no_stored_template_holds_joins_its_statement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = split_bugs()
    states, old = saved_by_the_earlier_reading(monkeypatch, lines)
    plain = old[0]  # `invalid route487 <str> in export <int>`
    after = GroupingEngine(known=states)
    fresh_kind, fresh_statement = after.assign_all(
        [
            event(200, "invalid route487 'z' in export 9 (user [REDACTED:phone])"),
            event(201, "quota 3 exceeded for plan 'pro' (user [REDACTED:email])"),
        ]
    )
    assert fresh_kind.signature_id == plain
    assert fresh_statement.tier == "new"
    (same,) = after.assign_all([event(202, "quota 4 exceeded for plan 'team'")])
    assert same.signature_id == fresh_statement.signature_id
