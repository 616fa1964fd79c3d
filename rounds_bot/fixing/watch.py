"""After a round: what became of rounds' pull requests, and whether a shipped fix worked.

    adopt_offers(...)       a pull request a person opened from a branch rounds could only offer (the
                            repository does not let Actions open pull requests): a FixProposed (`offers.py`)
    observe_pulls(watch)    each proposal's pull request, read from GitHub: merged -> FixApplied (with the
                            rate before the merge and the versions the service ran before it), the issue kept
                            open (reopened when a person's `Fixes #N` closed it) with ONE comment saying what
                            rounds waits for; closed -> FixAbandoned
    find_releases(watch)    each merged fix whose release the rounds saw already: FixReleased
    evaluate_fixes(watch)   each merged fix whose problem stayed away for ROUNDS_FIX_QUIET_HOURS, counted
                            from the release that carries it: ONE evaluation comment with the rates, the issue
                            closed as completed, IncidentResolved. Without a release, a service that reports
                            versions waits (a merge is not a deployment); one that never reports any is
                            judged from the merge time, and the evaluation says so
    sync_markers(...)       each issue's marker made to remember its fixes and ignore (`marker_sync.py`)

A recurrence on the fix's release or later is the round's business (`release.py`): the issue is reopened with
the `regression` label and the fix no longer waits here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from rounds_bot.clock import iso, parse_iso
from rounds_bot.controls import load_controls
from rounds_bot.events import Fact
from rounds_bot.fixing.evaluation import (
    EVALUATION_MARK,
    WAITING_MARK,
    evaluation_comment,
    measure,
    span,
    waiting_comment,
)
from rounds_bot.fixing.offers import adopt_offers
from rounds_bot.fixing.release import Release, find_release, versions_before
from rounds_bot.github.marker_sync import sync_markers
from rounds_bot.github.pulls import PullsApi
from rounds_bot.lifecycle import FixRecord
from rounds_bot.signature import Signature
from rounds_bot.store import Store
from rounds_bot.versions import ordered


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
    find_releases(watch)
    evaluate_fixes(watch)
    watch.notes += sync_markers(watch.store, watch.pulls)
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
    store = watch.store
    signature = store.signature(fix.signature_id)
    service = signature.service if signature is not None else ""
    ran = {v for s in store.signatures() if signature and s.service == service for v in s.versions}
    seen = store.versions_seen(service) if service else {}
    rates = measure(store, fix.signature_id, merged=merged, released=None, now=merged)
    before = rates.before_period
    before_merge = versions_before(ran, seen, merged)
    record = fix.model_copy(
        update={"status": "merged", "merged_at": iso(merged), "versions_before": before_merge}
    )
    release = find_release(record, seen)
    if release is not None:
        record = record.model_copy(
            update={"released_version": release.version, "released_at": iso(release.first_seen)}
        )
    if signature is None or not _due(watch, record, signature):  # else evaluated and closed in this run
        _keep_open(watch, record, service, release)
    _log(
        watch,
        Fact.FIX_APPLIED,
        f"fixapplied:{fix.pr_number}",
        fix,
        merged_at=iso(merged),
        merge_commit=pull.get("merge_commit_sha"),
        versions_before=record.versions_before,
        rate_before=rates.before,
        before_from=iso(before.start),
        before_occurrences=before.occurrences,
    )
    if release is not None:
        _released(watch, record, release)
    else:
        watch.notes.append(
            f"#{fix.pr_number} was merged at {iso(merged)}: rounds waits for the release that has it"
        )


def _keep_open(watch: Watch, fix: FixRecord, service: str, release: Release | None) -> None:
    """The issue stays open until the fix is evaluated: reopened when the merge closed it, and told once what
    rounds waits for. An ignored issue, or one closed as not planned, is left alone."""
    number = _issue_number(fix)
    if not number or fix.signature_id in load_controls(watch.store).mutes:
        return
    issue = watch.pulls.get_issue(number)
    if issue is None or (issue.get("state") == "closed" and issue.get("state_reason") != "completed"):
        return
    reopened = issue.get("state") == "closed"
    if reopened:
        watch.pulls.set_issue_state(number, "open", "reopened")
    quiet_hours = watch.quiet.total_seconds() / 3600
    body = waiting_comment(fix, service, release, quiet_hours, reopened=reopened)
    _post_once(watch, number, WAITING_MARK.format(pr=fix.pr_number), body)


def find_releases(watch: Watch) -> None:
    """Merged fixes whose release ran in a round before the merge was seen, or since: from the first-seen
    times of the service's versions (`store/versions.py`)."""
    for fix in watch.store.fix_records():
        if fix.status != "merged" or not fix.merged_at or fix.released_version is not None:
            continue
        signature = watch.store.signature(fix.signature_id)
        if signature is None:
            continue
        release = find_release(fix, watch.store.versions_seen(signature.service))
        if release is not None:
            _released(watch, fix, release)


def _released(watch: Watch, fix: FixRecord, release: Release) -> None:
    _log(
        watch,
        Fact.FIX_RELEASED,
        f"fixreleased:{fix.pr_number}",
        fix,
        version=release.version,
        first_seen=iso(release.first_seen),
    )
    watch.notes.append(f"{fix.signature_id}: the fix in #{fix.pr_number} shipped in {release.version}")


def evaluate_fixes(watch: Watch) -> None:
    for fix in watch.store.fix_records():
        signature = watch.store.signature(fix.signature_id)
        if fix.status != "merged" or signature is None or not fix.merged_at:
            continue
        judged_from = _judged_from(fix)
        if judged_from is None:
            waited = watch.now - parse_iso(fix.merged_at)
            newest = ", ".join(ordered(fix.versions_before)[-3:])
            watch.notes.append(
                f"{fix.signature_id}: merged {span(waited.total_seconds() / 3600)} ago; waits for a release "
                f"newer than {newest} in the telemetry"
            )
            continue
        quiet_from = _quiet_since(fix, signature)
        waited = watch.now - quiet_from
        if waited < watch.quiet:
            hours = waited.total_seconds() / 3600
            basis = "" if judged_from == "release" else " (no version information: from the merge)"
            of = watch.quiet.total_seconds() / 3600
            watch.notes.append(f"{fix.signature_id}: quiet for {hours:.1f} of {of:g} h{basis}")
            continue
        _resolve(watch, fix, quiet_from, judged_from)


def _due(watch: Watch, fix: FixRecord, signature: Signature) -> bool:
    """The fix is evaluated in this run (a merge seen late, after its quiet period had run already)."""
    return _judged_from(fix) is not None and watch.now - _quiet_since(fix, signature) >= watch.quiet


def _judged_from(fix: FixRecord) -> Literal["release", "merge"] | None:
    """What the quiet period counts from: the release; the merge when the service never reported a version
    before it (no release can be told apart); None while a release is awaited."""
    if fix.released_at is not None:
        return "release"
    return None if fix.versions_before else "merge"


def _quiet_since(fix: FixRecord, signature: Signature) -> datetime:
    """From the release that carries the fix; without versions, from the merge or the last occurrence
    after it."""
    if fix.released_at is not None:
        return parse_iso(fix.released_at)
    merged = parse_iso(fix.merged_at or "")
    return max(merged, signature.last_seen)


def _resolve(
    watch: Watch, fix: FixRecord, quiet_from: datetime, judged_from: Literal["release", "merge"]
) -> None:
    merged = parse_iso(fix.merged_at or "")
    released = parse_iso(fix.released_at) if fix.released_at else None
    rates = measure(watch.store, fix.signature_id, merged=merged, released=released, now=watch.now)
    number = _issue_number(fix)
    if number:
        body = evaluation_comment(fix, rates, quiet_from, watch.now, judged_from)
        _post_once(watch, number, EVALUATION_MARK.format(pr=fix.pr_number), body)
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
        judged_from=judged_from,
    )
    basis = "" if judged_from == "release" else " (no version information: judged from the merge time)"
    watch.notes.append(
        f"{fix.signature_id}: resolved by #{fix.pr_number}; {fix.issue} closed as completed{basis}"
    )


def _issue_number(fix: FixRecord) -> int:
    text = fix.issue.lstrip("#")
    return int(text) if text.isdigit() else 0


def _post_once(watch: Watch, number: int, mark: str, body: str) -> None:
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


__all__ = ["Watch", "evaluate_fixes", "find_releases", "observe_pulls", "watch_fixes"]
