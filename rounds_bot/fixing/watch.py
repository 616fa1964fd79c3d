"""After a round: what became of rounds' pull requests, and whether a shipped fix worked.

    adopt_offers(...)       a pull request a person opened from a branch rounds could only offer (the
                            repository does not let Actions open pull requests): a FixProposed (`offers.py`)
    observe_pulls(watch)    each proposal's pull request, read from GitHub: merged -> FixApplied (with the
                            rate before the merge and the service's versions known then); closed ->
                            FixAbandoned
    evaluate_fixes(watch)   each merged fix whose problem stayed away for ROUNDS_FIX_QUIET_HOURS, counted
                            from the release that carries it (the round finds it), else from the last
                            occurrence after the merge: ONE evaluation comment with the rates, the issue
                            closed as completed, IncidentResolved

A recurrence on the fix's release or later is the round's business (`release.py`): the issue is reopened with
the `regression` label and the fix no longer waits here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from rounds_bot.clock import iso, parse_iso
from rounds_bot.events import Fact
from rounds_bot.fixing.evaluation import EVALUATION_MARK, evaluation_comment, measure
from rounds_bot.fixing.offers import adopt_offers
from rounds_bot.github.pulls import PullsApi
from rounds_bot.lifecycle import FixRecord
from rounds_bot.signature import Signature
from rounds_bot.store import Store


@dataclass
class Watch:
    store: Store
    pulls: PullsApi
    now: datetime
    quiet: timedelta
    notes: list[str] = field(default_factory=list)


def watch_fixes(watch: Watch) -> list[str]:
    watch.notes += adopt_offers(watch.store, watch.pulls, watch.now)
    observe_pulls(watch)
    evaluate_fixes(watch)
    return watch.notes


def observe_pulls(watch: Watch) -> None:
    for fix in watch.store.fix_records():
        if fix.status != "proposed":
            continue
        pull = watch.pulls.get_pull(fix.pr_number)
        if pull.get("merged_at"):
            _applied(watch, fix, parse_iso(str(pull["merged_at"]).replace("Z", "+00:00")), pull)
        elif pull.get("state") == "closed":
            _log(
                watch,
                Fact.FIX_ABANDONED,
                f"fixabandoned:{fix.pr_number}",
                fix,
                closed_at=pull.get("closed_at"),
            )
            watch.notes.append(f"#{fix.pr_number} was closed without merging: the fix is abandoned")


def _applied(watch: Watch, fix: FixRecord, merged: datetime, pull: dict[str, object]) -> None:
    signature = watch.store.signature(fix.signature_id)
    versions = sorted(
        {
            v
            for s in watch.store.signatures()
            if signature and s.service == signature.service
            for v in s.versions
        }
    )
    rates = measure(watch.store, fix.signature_id, merged=merged, released=None, now=merged)
    _log(
        watch,
        Fact.FIX_APPLIED,
        f"fixapplied:{fix.pr_number}",
        fix,
        merged_at=iso(merged),
        merge_commit=pull.get("merge_commit_sha"),
        versions_before=versions,
        rate_before=rates.before,
    )
    watch.notes.append(
        f"#{fix.pr_number} was merged at {iso(merged)}: rounds waits for the release that has it"
    )


def evaluate_fixes(watch: Watch) -> None:
    for fix in watch.store.fix_records():
        signature = watch.store.signature(fix.signature_id)
        if fix.status != "merged" or signature is None or not fix.merged_at:
            continue
        quiet_from = _quiet_since(fix, signature)
        waited = watch.now - quiet_from
        if waited < watch.quiet:
            hours = waited.total_seconds() / 3600
            watch.notes.append(
                f"{fix.signature_id}: quiet for {hours:.1f} of {watch.quiet.total_seconds() / 3600:g} h"
            )
            continue
        _resolve(watch, fix, signature, quiet_from)


def _quiet_since(fix: FixRecord, signature: Signature) -> datetime:
    """From the release that carries the fix; without one, from the merge or the last occurrence after it."""
    if fix.released_at is not None:
        return parse_iso(fix.released_at)
    merged = parse_iso(fix.merged_at or "")
    return max(merged, signature.last_seen)


def _resolve(watch: Watch, fix: FixRecord, signature: Signature, quiet_from: datetime) -> None:
    merged = parse_iso(fix.merged_at or "")
    released = parse_iso(fix.released_at) if fix.released_at else None
    rates = measure(watch.store, fix.signature_id, merged=merged, released=released, now=watch.now)
    number = int(fix.issue.lstrip("#") or 0)
    if number:
        _post_once(watch, number, fix, evaluation_comment(fix, rates, quiet_from, watch.now))
        issue = watch.pulls.get_issue(number)
        if issue is not None and (issue.get("state"), issue.get("state_reason")) != ("closed", "completed"):
            watch.pulls.set_issue_state(number, "closed", "completed")
    _log(
        watch,
        Fact.INCIDENT_RESOLVED,
        f"resolved:{fix.signature_id}:{fix.pr_number}",
        fix,
        rate_after=rates.after_merge,
        rate_after_release=rates.after_release,
        quiet_since=iso(quiet_from),
    )
    watch.notes.append(f"{fix.signature_id}: resolved by #{fix.pr_number}; {fix.issue} closed as completed")


def _post_once(watch: Watch, number: int, fix: FixRecord, body: str) -> None:
    mark = EVALUATION_MARK.format(pr=fix.pr_number)
    for comment in watch.pulls.list_comments(number, since=None):
        if mark in (comment.get("body") or "") and (comment.get("user") or {}).get("type") == "Bot":
            return
    watch.pulls.create_comment(number, body)


def _log(watch: Watch, kind: Fact, key: str, fix: FixRecord, **payload: object) -> None:
    with watch.store.transaction():
        watch.store.append_event(
            kind,
            key,
            signature_id=fix.signature_id,
            run_id="fix",
            at=watch.now,
            payload={"pr": fix.pr_number, **payload},
        )


__all__ = ["Watch", "evaluate_fixes", "observe_pulls", "watch_fixes"]
