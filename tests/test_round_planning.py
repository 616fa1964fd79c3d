"""Planning is pure: given the candidates and their issues, it decides; filing says what it filed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from signature_samples import a_signature, an_assignment

from rounds_bot.controls import Controls, Mute
from rounds_bot.models import ErrorEvent
from rounds_bot.round.filing import Filed
from rounds_bot.round.planning import Lookups, RoundCandidate, plan_issues
from rounds_bot.tally import Tally
from rounds_bot.tracker.base import IssueRef

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def candidate(sid: str, *, seen: int = 1, known: bool = False, total: int = 0) -> RoundCandidate:
    tally = None
    if seen:
        tally = Tally(assignment=an_assignment(sid, tier="fingerprint", title=sid, normalized_message=sid))
        tally.add(ErrorEvent(event_id=sid, timestamp=NOW), seen, NOW, NOW)
    before = a_signature(sid, total_count=total) if known else None
    after = a_signature(sid, total_count=total + seen)
    return RoundCandidate(sid, tally, before, after)


def issue(sid: str, state: str = "open", reason: str | None = None) -> IssueRef:
    return IssueRef(signature_id=sid, ref=f"#{sid}", state=state, state_reason=reason)


def plan(candidates, issues, *, cap=10, wanted=(), controls=None, stopped=None):
    controls = controls or Controls()
    lookups = Lookups(issues, stopped=stopped)
    return plan_issues(candidates, lookups, controls=controls, new_issue_cap=cap, wanted=set(wanted), now=NOW)


def kinds(planned) -> dict[str, str]:
    return {p.signature_id: p.kind for p in planned.plans}


def test_new_signatures_are_filed_up_to_the_cap_and_the_rest_deferred():
    planned = plan(
        [candidate("a"), candidate("b"), candidate("c", known=True)], {"a": None, "b": None, "c": None}, cap=1
    )
    assert kinds(planned) == {"a": "new", "b": "deferred", "c": "deferred"}


def test_a_known_signature_without_an_issue_is_filed_late():
    planned = plan([candidate("a", known=True)], {"a": None})
    assert kinds(planned) == {"a": "filed-late"}


def test_open_issues_are_updated_closed_ones_reopened_and_not_planned_ones_muted():
    planned = plan(
        [candidate("o", known=True), candidate("c", known=True), candidate("n", known=True)],
        {"o": issue("o"), "c": issue("c", "closed", "completed"), "n": issue("n", "closed", "not_planned")},
    )
    assert kinds(planned) == {"o": "updated", "c": "regressed", "n": "muted"}
    assert all(p.issue is not None for p in planned.plans)


def test_an_unseen_signature_is_planned_only_when_wanted_and_its_issue_is_open():
    unseen = [candidate("w", seen=0, known=True), candidate("x", seen=0, known=True)]
    planned = plan(unseen, {"w": issue("w"), "x": issue("x")}, wanted=["w"])
    assert kinds(planned) == {"w": "updated"}


def test_when_the_tracker_stopped_looking_up_the_rest_wait_with_a_note():
    planned = plan([candidate("a"), candidate("b"), candidate("c")], {"a": None}, stopped="budget spent")
    assert kinds(planned) == {"a": "new", "b": "deferred", "c": "deferred"}
    assert planned.notes == ["2 signatures wait for the next round: budget spent"]


def test_a_mute_holds_until_it_lapses_and_the_lapse_is_returned_not_written():
    mute = Mute(
        signature_id="m", by="alice", since="2026-11-01T10:00:00+00:00", until_occurrences=5, count_at=10
    )
    controls = Controls(mutes={"m": mute})
    holding = plan([candidate("m", seen=2, known=True, total=10)], {"m": issue("m")}, controls=controls)
    assert kinds(holding) == {"m": "muted"} and holding.lapsed_mutes == [] and holding.notes == []
    lapsed = plan([candidate("m", seen=6, known=True, total=10)], {"m": issue("m")}, controls=controls)
    assert kinds(lapsed) == {"m": "updated"} and lapsed.lapsed_mutes == ["m"]
    assert lapsed.notes == ["m is no longer ignored: 6 more occurrences reached the 5 asked for"]


def test_filing_settles_plans_without_mutating_them():
    planned = plan(
        [candidate("a"), candidate("b"), candidate("u", known=True)], {"a": None, "b": None, "u": issue("u")}
    )
    filed = Filed(issues={"a": issue("a")}, not_reached={"b", "u"})
    settled = filed.settle(planned.plans)
    assert [(p.signature_id, p.kind, p.issue.ref if p.issue else None) for p in settled] == [
        ("a", "new", "#a"),
        ("b", "deferred", None),
        ("u", "updated", "#u"),  # it has an issue: it stays an update, done next round
    ]
    assert [p.kind for p in planned.plans] == ["new", "new", "updated"] and planned.plans[0].issue is None


def test_a_plan_filing_left_as_it_was_is_settled_as_itself():
    """Settling copies only the plans filing changed: one whose issue stayed the same is the plan itself
    (a frozen record equal to its copy), so a round keeps one object for it, not two."""
    planned = plan([candidate("a"), candidate("u", known=True)], {"a": None, "u": issue("u")})
    same = planned.plans[1].issue
    settled = Filed(issues={"a": issue("a"), "u": same}).settle(planned.plans)
    assert settled[1] is planned.plans[1] and settled[0] is not planned.plans[0]
    assert settled[0].issue == issue("a") and settled[1] == planned.plans[1]


def test_a_mute_with_a_time_limit_lapses_when_it_runs_out():
    mute = Mute(signature_id="m", by="alice", since="x", until=(NOW - timedelta(minutes=1)).isoformat())
    planned = plan([candidate("m", known=True)], {"m": issue("m")}, controls=Controls(mutes={"m": mute}))
    assert kinds(planned) == {"m": "updated"} and planned.lapsed_mutes == ["m"]
