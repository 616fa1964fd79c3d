"""Rebuild the signature database from the bot's issues alone.

GitHub is the record of facts: every issue rounds files carries a hidden marker (`marker.py`) with the
signature and its running state. Listing the issues that carry the bot's label (100 per request: 1,000
issues cost 10 requests) and keeping those rounds opened itself (`GitHubApi.wrote`: a marker is text
anyone can copy into an issue of their own) gives back, per signature: its identity and grouping state, its
counts and first/last seen, its services, versions and environments, its issue and whether that issue is open,
resolved or muted. The representative stack trace and the "why grouped" explanation are read back from
the body.

The marker also carries the latest good diagnosis and the model calls paid for (`marker_memory.py`): they
come back as a cached diagnosis and ledger rows, so nothing is diagnosed or paid for twice and the monthly
budget still counts them. It carries the fix pull requests (branch, merge, release, evaluation), how many fix
attempts failed or were left to a person, and an active `/rounds ignore`: they come back as the events that
gave them (under the live idempotency keys where the marker knows them, so the fix job does not log a merge
twice), oldest first; the issue's state then decides the signature's status only where those events do not
already say it. A merged fix is then still evaluated and closed, and an ignored issue stays quiet. It
carries the signature's cascade links (caused by / causes, with their trace counts): they come back into the
signature's row, so the next update still says "Caused by #12" before a round sees the shared traces again.

What cannot come back: occurrence buckets (spike baselines restart), the ids of occurrences already counted
and the sources' cursors, so the first round after a rebuild reads its lookback window again. Each rebuilt
signature remembers the moment its total was counted up to (the marker's last_seen): occurrences at or
before it are taken as counted, so reading the window again counts nothing twice.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from rounds_bot.clock import iso, parse_iso
from rounds_bot.events import Fact
from rounds_bot.github.journal import Journal, mirrored_issue
from rounds_bot.github.labels import BOT_LABEL
from rounds_bot.github.marker_sync import digest, remember_synced
from rounds_bot.github.rest import GitHubApi
from rounds_bot.grouping.state import SignatureState
from rounds_bot.marker import MarkerState, read_marker
from rounds_bot.marker_memory import restore_cascade, restore_lifecycle, restore_memory
from rounds_bot.models import ErrorEvent, Frozen
from rounds_bot.render.issue import body_section
from rounds_bot.signature import Signature
from rounds_bot.store import Store


class RebuildResult(Frozen):
    issues_read: int
    signatures: int
    open: int = 0
    resolved: int = 0
    muted: int = 0
    unreadable: list[str] = Field(default_factory=list, description="bot issues without a readable marker")
    duplicates: list[str] = Field(default_factory=list, description="later issues carrying a known signature")
    partial: list[str] = Field(
        default_factory=list, description="issues rebuilt without their diagnosis, and why"
    )
    not_ours: list[str] = Field(
        default_factory=list,
        description="issues with the label and a marker that rounds did not open (`GitHubApi.wrote`)",
    )
    requests: int = 0
    fixes: int = Field(default=0, description="fix pull requests the markers remembered")
    ignored: int = Field(default=0, description="active `/rounds ignore`s the markers remembered")


def rebuild_database(
    api: GitHubApi, store: Store, journal: Journal | None = None, *, label: str = BOT_LABEL
) -> RebuildResult:
    """Fill `store` (and the tracker's journal) from the issues labelled `label`; one transaction."""
    before = api.requests_made
    listing = api.list_issues(label, since=None)
    chosen: dict[str, tuple[dict[str, Any], MarkerState]] = {}
    unreadable: list[str] = []
    duplicates: list[str] = []
    partial: list[str] = []
    not_ours: list[str] = []
    for item in sorted(listing.items, key=lambda i: i["number"]):
        if "pull_request" in item:
            continue
        marker = read_marker(item.get("body") or "")
        if marker is None:
            unreadable.append(f"#{item['number']}")
        elif not api.wrote(item):  # a marker is text anyone can copy; only rounds' own issues are its record
            not_ours.append(f"#{item['number']}")
        elif marker.signature_id in chosen:
            duplicates.append(f"#{item['number']}")
        else:
            chosen[marker.signature_id] = (item, marker)

    counts = {"open": 0, "resolved": 0, "muted": 0, "fixes": 0, "ignored": 0}
    synced: dict[str, str] = {}
    with store.transaction():
        for signature_id, (item, marker) in chosen.items():
            store.save(signature_from_issue(item, marker))
            restore_cascade(store, signature_id, marker.memory)
            problems = restore_memory(store, signature_id, marker.memory)
            partial.extend(f"#{item['number']}: {problem}" for problem in problems)
            status = _status(item)
            counts[status] += 1
            counts["fixes"] += len(marker.fixes)
            counts["ignored"] += marker.mute is not None
            _log(store, signature_id, item, status, marker)
            lifecycle = marker.memory.lifecycle()
            if lifecycle:
                synced[signature_id] = digest(lifecycle)
        remember_synced(store, synced)
    if journal is not None:
        _refill_journal(journal, chosen, listing.items)
    return RebuildResult(
        issues_read=len(listing.items),
        signatures=len(chosen),
        unreadable=unreadable,
        duplicates=duplicates,
        partial=partial,
        not_ours=not_ours,
        requests=api.requests_made - before,
        **counts,
    )


def _status(item: dict[str, Any]) -> str:
    if item.get("state") != "closed":
        return "open"
    return "muted" if item.get("state_reason") in ("not_planned", "duplicate") else "resolved"


def _log(store: Store, signature_id: str, item: dict[str, Any], status: str, marker: MarkerState) -> None:
    at = datetime.fromisoformat((item.get("created_at") or "1970-01-01T00:00:00Z").replace("Z", "+00:00"))
    run = "rebuilt"
    ref = f"#{item['number']}"
    store.append_event(
        Fact.INCIDENT_DETECTED, f"detected:{signature_id}", signature_id=signature_id, run_id=run, at=at
    )
    store.append_event(
        Fact.ISSUE_FILED,
        f"filed:{signature_id}",
        signature_id=signature_id,
        run_id=run,
        at=at,
        payload={"issue": ref},
    )
    url = str(item.get("html_url") or "")
    restore_lifecycle(store, signature_id, marker.memory, issue_ref=ref, issue_url=url, at=at)
    restored = store.status(signature_id)  # an ignore restored above stays: it says more than a closed issue
    if status != "open" and restored not in (status, "muted"):
        closed = datetime.fromisoformat((item.get("closed_at") or item["updated_at"]).replace("Z", "+00:00"))
        kind = Fact.INCIDENT_SUPPRESSED if status == "muted" else Fact.INCIDENT_RESOLVED
        store.append_event(
            kind, f"rebuilt:{kind}:{signature_id}", signature_id=signature_id, run_id=run, at=closed
        )


def _refill_journal(
    journal: Journal, chosen: dict[str, tuple[dict[str, Any], MarkerState]], items: list[dict[str, Any]]
) -> None:
    """The next round then lists only what changed since the newest issue read here."""
    for signature_id, (item, _marker) in chosen.items():
        journal.remember(mirrored_issue(item, signature_id, item.get("body") or ""))
    newest = max((item.get("updated_at") or "" for item in items), default="")
    if newest:
        journal.set_meta("watermark", newest)


def signature_from_issue(issue: dict[str, Any], marker: MarkerState) -> Signature:
    """The signature a round would have stored, from one of the bot's issues and its marker."""
    body = issue.get("body") or ""
    fallback = issue.get("updated_at") or iso(datetime.now(UTC))
    last_seen = parse_iso(marker.last_seen or fallback)
    return Signature(
        id=marker.signature_id,
        service=marker.service,
        title=marker.title or (issue.get("title") or "").removeprefix(f"[{marker.service}] "),
        error_type=marker.error_type,
        normalized_message=marker.normalized_message,
        fingerprint_hash=marker.fingerprint_hash,
        fingerprint_version=marker.fingerprint_version,
        first_tier=marker.first_tier or "fingerprint",
        explanation=body_section(body, "Why grouped") or "",
        representative=ErrorEvent(
            event_id=f"rebuilt:{issue['number']}",
            timestamp=last_seen,
            service=marker.service,
            error_type=marker.error_type or None,
            message=body_section(body, "Representative message") or marker.normalized_message,
            stacktrace=body_section(body, "Representative stack trace"),
        ),
        grouping_state=(
            SignatureState.model_validate(marker.grouping_state) if marker.grouping_state else None
        ),
        first_seen=parse_iso(marker.first_seen) if marker.first_seen else last_seen,
        last_seen=last_seen,
        total_count=marker.total_count,
        services=frozenset(marker.services or [marker.service]),
        versions=frozenset(marker.versions),
        environments=frozenset(marker.environments),
        related=frozenset(marker.related),
        issue_ref=f"#{issue['number']}",
        created_run="rebuilt",
        counted_through=last_seen,
    )
