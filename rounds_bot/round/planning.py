"""What each signature needs this round: file, update, reopen, stay quiet, or wait.

candidates = gather_candidates(...)   seen this round, deferred earlier, or wanted for a diagnosis
found      = look_up_issues(...)      the tracker's issue for each (network: its own step)
planned    = plan_issues(...)         pure: new / filed-late / updated / regressed / muted / deferred / held
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from rounds_bot.controls import Controls
from rounds_bot.fixing.release import FixVerdict
from rounds_bot.grouping.extension_errors import raised_in_browser_extension
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature
from rounds_bot.store import Store
from rounds_bot.tally import Tally
from rounds_bot.tracker.base import IssueRef, Tracker, TrackerStopped

PlanKind = Literal["new", "filed-late", "updated", "regressed", "muted", "deferred", "held"]
#: plans that reach no issue this round: deferred to the next, or held back (`held_back`)
UNFILED_KINDS = ("deferred", "held")
#: whether a signature without an issue is held back: counted, never filed nor diagnosed
HeldBack = Callable[[Signature], bool]


@dataclass(frozen=True, slots=True)
class RoundCandidate:
    """A signature the round may act on: before and after this round, and what it saw of it."""

    signature_id: str
    tally: Tally | None
    known: Signature | None  # as the database had it before this round
    after: Signature  # as it will be after this round


# slotted: a round with thousands of new signatures keeps a plan for each to its end, twice (as planned and
# as settled after filing)
@dataclass(frozen=True, slots=True)
class IssuePlan:
    signature_id: str
    kind: PlanKind
    tally: Tally | None
    signature: Signature  # as it will be after this round
    issue: IssueRef | None = None
    reason: str | None = None  # why a fixed problem is a regression (the reopening comment says it)


@dataclass(frozen=True)
class Planned:
    plans: list[IssuePlan]
    lapsed_mutes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Lookups:
    """The tracker's issue per candidate, in order; `stopped` says why the rest were not looked up."""

    issues: dict[str, IssueRef | None]
    stopped: str | None = None


def gather_candidates(
    store: Store, tallies: dict[str, Tally], after: dict[str, Signature], wanted: Iterable[str]
) -> list[RoundCandidate]:
    """The signatures seen this round, then those an earlier round's cap deferred, then `wanted` ones
    (a diagnosis to retry or asked for) even when they did not occur."""
    found: dict[str, RoundCandidate] = {}
    before = store.signatures_of(tallies)
    for signature_id, tally in tallies.items():
        found[signature_id] = RoundCandidate(
            signature_id, tally, before.get(signature_id), after[signature_id]
        )
    others = [sid for sid in dict.fromkeys([*store.unfiled_ids(), *sorted(wanted)]) if sid not in found]
    known = store.signatures_of(others)
    for signature_id in others:
        if signature_id in known:
            found[signature_id] = RoundCandidate(signature_id, None, known[signature_id], known[signature_id])
    return list(found.values())


def look_up_issues(tracker: Tracker, candidates: list[RoundCandidate]) -> Lookups:
    """Each candidate's issue, if it has one; a tracker out of request budget stops the look-ups cleanly."""
    issues: dict[str, IssueRef | None] = {}
    for candidate in candidates:
        known_ref = candidate.known.issue_ref if candidate.known else None
        try:
            issues[candidate.signature_id] = tracker.find(candidate.signature_id, known_ref=known_ref)
        except TrackerStopped as stop:
            return Lookups(issues, stopped=str(stop))
    return Lookups(issues)


def plan_issues(
    candidates: list[RoundCandidate],
    lookups: Lookups,
    *,
    controls: Controls,
    new_issue_cap: int,
    wanted: set[str],
    now: datetime,
    fix_verdicts: Mapping[str, FixVerdict] | None = None,
    held_back: HeldBack | None = None,
) -> Planned:
    """Decide, per candidate, whether to file, update, reopen, or wait for the next round.

    A signature without an issue that `held_back` names is not filed: "held" when it occurred this round, left
    out otherwise (an earlier round held it already). One that has an issue is planned as before.

    A signature whose fix was merged is judged by `fix_verdicts` (`fixing/release.py`): a recurrence on the
    fix's release or later is a regression even on an open issue; one on an older version only updates the
    issue, even a closed one."""
    plans: list[IssuePlan] = []
    lapsed: list[str] = []
    notes: list[str] = []
    filed_new = 0
    for position, candidate in enumerate(candidates):
        sid, tally, after = candidate.signature_id, candidate.tally, candidate.after
        if sid not in lookups.issues:
            # the tracker's request budget is spent: what is left waits for the next round
            waiting = candidates[position:]
            plans.extend(IssuePlan(c.signature_id, "deferred", c.tally, c.after) for c in waiting)
            notes.append(f"{len(waiting)} signatures wait for the next round: {lookups.stopped}")
            break
        issue = lookups.issues[sid]
        if issue is None:
            if held_back is not None and held_back(after):
                if tally is not None:
                    plans.append(IssuePlan(sid, "held", tally, after))
                continue
            if filed_new >= new_issue_cap:
                plans.append(IssuePlan(sid, "deferred", tally, after))
                continue
            filed_new += 1
            plans.append(IssuePlan(sid, "new" if candidate.known is None else "filed-late", tally, after))
            continue
        if tally is None and (sid not in wanted or issue.state == "closed"):
            continue
        mute_lapsed = _mute_lapsed(controls, sid, after, now)
        if mute_lapsed is not None:
            lapsed.append(sid)
            notes.append(f"{sid} is no longer ignored: {mute_lapsed}")
        muted = sid in controls.mutes and mute_lapsed is None
        verdict = (fix_verdicts or {}).get(sid) if tally is not None else None
        if muted or (issue.state == "closed" and issue.state_reason == "not_planned"):
            plans.append(IssuePlan(sid, "muted", tally, after, issue))
        elif verdict is not None and verdict.kind == "regressed":
            plans.append(IssuePlan(sid, "regressed", tally, after, issue, reason=verdict.reason))
        elif issue.state == "closed" and verdict is None:
            plans.append(IssuePlan(sid, "regressed", tally, after, issue))
        else:
            plans.append(IssuePlan(sid, "updated", tally, after, issue))
    held = sum(1 for plan in plans if plan.kind == "held")
    if held:
        notes.append(held_note(held))
    return Planned(plans, lapsed, notes)


def extension_errors_held(settings: Settings) -> HeldBack | None:
    """What a round holds back: errors raised in a browser extension (`grouping/extension_errors.py`), by
    the signature's representative and the in-app rules grouping used; None when turned off
    (ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS=false)."""
    if not settings.hold_browser_extension_errors:
        return None
    rules = InAppRules(tuple(settings.in_app_include), tuple(settings.in_app_exclude))
    return lambda signature: raised_in_browser_extension(signature.representative.stacktrace, rules)


def held_note(count: int) -> str:
    """The report's one line on the signatures held back this round."""
    signatures = "1 signature" if count == 1 else f"{count} signatures"
    return (
        f"{signatures} held back, not filed or diagnosed: raised in a browser extension (every frame of "
        "their stack traces is an extension's); ROUNDS_HOLD_BROWSER_EXTENSION_ERRORS=false files them"
    )


def _mute_lapsed(controls: Controls, signature_id: str, after: Signature, now: datetime) -> str | None:
    """Why an `/rounds ignore` on this signature is over (counts update, no comment, no reopening while
    it holds); None while it holds or when there is none."""
    mute = controls.mutes.get(signature_id)
    return mute.lapsed(now, after.total_count) if mute is not None else None


def hold_while_paused(candidates: list[RoundCandidate], controls: Controls) -> Planned:
    """`/rounds pause`: occurrences are counted; nothing reaches the tracker or the model until `resume`.

    Signatures without an issue are deferred, so the first round after `resume` files them.
    """
    pause = controls.pause
    assert pause is not None
    plans = [
        IssuePlan(c.signature_id, "deferred", c.tally, c.after)
        for c in candidates
        if c.tally is not None and (c.known is None or not c.known.issue_ref)
    ]
    note = (
        f"paused by @{pause.by} since {pause.since}: nothing was filed, updated, commented on or diagnosed "
        "(occurrences are still counted); a `resume` command on any issue restarts rounds"
    )
    return Planned(plans, notes=[note])
