"""Rebuild the signature database from the bot's issues alone.

GitHub is the record of facts: every issue rounds files carries a hidden marker (`marker.py`) with the
signature and its running state. Listing the issues that carry the bot's label (100 per request: 1,000
issues cost 10 requests) gives back, per signature: its identity and grouping state, its counts and
first/last seen, its services, versions and environments, its issue and whether that issue is open,
resolved or muted. The representative stack trace and the "why grouped" explanation are read back from
the body.

What cannot come back: occurrence buckets (spike baselines restart), the ids of occurrences already counted
and the sources' cursors, so the first round after a rebuild reads its lookback window again.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from rounds_bot.events import Fact
from rounds_bot.github.journal import Journal, mirrored_issue
from rounds_bot.github.labels import BOT_LABEL
from rounds_bot.github.rest import GitHubApi
from rounds_bot.models import ErrorEvent, Frozen
from rounds_bot.render.marker import MarkerState, read_marker
from rounds_bot.store import Store

_FENCE_BREAK = "`\u200b``"  # how render.py keeps untrusted text from closing a fence


class RebuildResult(Frozen):
    issues_read: int
    signatures: int
    open: int = 0
    resolved: int = 0
    muted: int = 0
    unreadable: list[str] = Field(default_factory=list, description="bot issues without a readable marker")
    duplicates: list[str] = Field(default_factory=list, description="later issues carrying a known signature")
    requests: int = 0


def rebuild_database(
    api: GitHubApi, store: Store, journal: Journal | None = None, *, label: str = BOT_LABEL
) -> RebuildResult:
    """Fill `store` (and the tracker's journal) from the issues labelled `label`; one transaction."""
    before = api.requests_made
    listing = api.list_issues(label, since=None)
    chosen: dict[str, tuple[dict[str, Any], MarkerState]] = {}
    unreadable: list[str] = []
    duplicates: list[str] = []
    for item in sorted(listing.items, key=lambda i: i["number"]):
        if "pull_request" in item:
            continue
        marker = read_marker(item.get("body") or "")
        if marker is None:
            unreadable.append(f"#{item['number']}")
        elif marker.signature_id in chosen:
            duplicates.append(f"#{item['number']}")
        else:
            chosen[marker.signature_id] = (item, marker)

    counts = {"open": 0, "resolved": 0, "muted": 0}
    with store.transaction():
        for signature_id, (item, marker) in chosen.items():
            store.upsert_signature(signature_row(item, marker))
            status = _status(item)
            counts[status] += 1
            _log(store, signature_id, item, status)
    if journal is not None:
        _refill_journal(journal, chosen, listing.items)
    return RebuildResult(
        issues_read=len(listing.items),
        signatures=len(chosen),
        unreadable=unreadable,
        duplicates=duplicates,
        requests=api.requests_made - before,
        **counts,
    )


def signature_row(item: dict[str, Any], marker: MarkerState) -> dict[str, Any]:
    """The `signatures` row a round would have written, from an issue and its marker."""
    body = item.get("body") or ""
    last_seen = marker.last_seen or item.get("updated_at") or datetime.now(UTC).isoformat()
    representative = ErrorEvent(
        event_id=f"rebuilt:{item['number']}",
        timestamp=datetime.fromisoformat(last_seen.replace("Z", "+00:00")),
        service=marker.service,
        error_type=marker.error_type or None,
        message=section(body, "Representative message") or marker.normalized_message,
        stacktrace=section(body, "Representative stack trace"),
    )
    return {
        "id": marker.signature_id,
        "service": marker.service,
        "title": marker.title or _title_without_service(item.get("title") or "", marker.service),
        "error_type": marker.error_type,
        "normalized_message": marker.normalized_message,
        "fingerprint_hash": marker.fingerprint_hash,
        "fingerprint_version": marker.fingerprint_version,
        "first_tier": marker.first_tier or "fingerprint",
        "explanation": section(body, "Why grouped") or "",
        "representative": representative.model_dump_json(),
        "grouping_state": json.dumps(marker.grouping_state) if marker.grouping_state else "",
        "first_seen": marker.first_seen,
        "last_seen": marker.last_seen,
        "total_count": marker.total_count,
        "services": json.dumps(sorted(marker.services or [marker.service])),
        "versions": json.dumps(sorted(marker.versions)),
        "environments": json.dumps(sorted(marker.environments)),
        "related": json.dumps(sorted(marker.related)),
        "issue_ref": f"#{item['number']}",
        "created_run": "rebuilt",
    }


def section(body: str, summary: str) -> str | None:
    """The fenced text inside `<details><summary>{summary}...</summary>` of a rendered issue body."""
    pattern = re.compile(
        r"<summary>" + re.escape(summary) + r"[^<]*</summary>\s*```\n(?P<text>.*?)\n```", re.DOTALL
    )
    match = pattern.search(body)
    return match["text"].replace(_FENCE_BREAK, "```") if match else None


def _title_without_service(title: str, service: str) -> str:
    return title.removeprefix(f"[{service}] ")


def _status(item: dict[str, Any]) -> str:
    if item.get("state") != "closed":
        return "open"
    return "muted" if item.get("state_reason") in ("not_planned", "duplicate") else "resolved"


def _log(store: Store, signature_id: str, item: dict[str, Any], status: str) -> None:
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
    if status != "open":
        closed = datetime.fromisoformat((item.get("closed_at") or item["updated_at"]).replace("Z", "+00:00"))
        kind = "IncidentSuppressed" if status == "muted" else "IncidentResolved"
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
