"""Keep each issue's marker in step with the fixes and the ignore the event log holds, between rounds.

The round renders the marker whenever it writes an issue body (`marker_memory.py`), but a fix is proposed,
merged, released and evaluated, and `/rounds ignore` is answered, by other jobs, on issues the round may not
touch again for weeks. A database lost in between would forget them (`rounds db rebuild` reads only the
markers). `sync_markers` rewrites just the marker's `fixes`, `failed_fixes`, `offered_fixes` and `mute` keys
of each issue whose remembered part differs from the log's, and leaves the rest of the body as it is.

It costs nothing while nothing changed: the database keeps a digest of what each marker was last made to
carry (meta `marker_lifecycle`), and only an issue whose digest differs is read (one request) and, when its
marker really is stale, written (one more).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rounds_bot.errors import TrackerError
from rounds_bot.github.rest import GitHubApi
from rounds_bot.marker import MarkerMemory, read_marker, replace_marker
from rounds_bot.marker_memory import lifecycle_memory
from rounds_bot.render.issue import MAX_BODY_CHARS
from rounds_bot.store import Store

SYNCED_KEY = "marker_lifecycle"


def digest(lifecycle: dict[str, Any]) -> str:
    """A short digest of a marker's fix and ignore part (`MarkerMemory.lifecycle()`)."""
    text = json.dumps(lifecycle, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def synced(store: Store) -> dict[str, str]:
    """Signature id -> the digest of what its issue's marker was last made to carry."""
    try:
        found = json.loads(store.meta(SYNCED_KEY) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def remember_synced(store: Store, digests: dict[str, str]) -> None:
    """Inside the caller's transaction."""
    store.set_meta(SYNCED_KEY, json.dumps(dict(sorted(digests.items())), separators=(",", ":")))


def sync_markers(store: Store, api: GitHubApi) -> list[str]:
    """Rewrite the stale markers; the notes say what could not be done (bookkeeping that worked is silent)."""
    wanted = lifecycle_memory(store)
    known = synced(store)
    done = dict(known)
    notes: list[str] = []
    for signature_id in sorted({*wanted, *known}):
        memory = wanted.get(signature_id, MarkerMemory())
        lifecycle = memory.lifecycle()
        if known.get(signature_id) == digest(lifecycle) or (not lifecycle and signature_id not in known):
            continue
        signature = store.signature(signature_id)
        ref = signature.issue_ref if signature is not None else None
        if not ref or not ref.lstrip("#").isdigit():
            continue
        try:
            note = _sync_one(api, int(ref.lstrip("#")), signature_id, memory)
        except TrackerError as exc:
            notes.append(f"markers not brought up to date from {ref} on: {exc}")
            break
        if note:
            notes.append(note)
        if lifecycle:
            done[signature_id] = digest(lifecycle)
        else:
            done.pop(signature_id, None)
    if done != known:
        with store.transaction():
            remember_synced(store, done)
    return notes


def _sync_one(api: GitHubApi, number: int, signature_id: str, memory: MarkerMemory) -> str | None:
    issue = api.get_issue(number)
    if issue is None or "pull_request" in issue:
        return f"#{number} is gone: its marker cannot remember {signature_id}'s fixes or ignore"
    body = issue.get("body") or ""
    marker = read_marker(body)
    if marker is None or marker.signature_id != signature_id:
        return f"#{number} has no marker of {signature_id} any more: its fixes and ignore are not remembered"
    if marker.memory.lifecycle() == memory.lifecycle():
        return None
    updated = replace_marker(body, marker.remembering(memory))
    if updated is not None and len(updated) > MAX_BODY_CHARS:
        lighter = memory.model_copy(
            update={"fixes": [fix.model_copy(update={"files": []}) for fix in memory.fixes]}
        )
        updated = replace_marker(body, marker.remembering(lighter))
    if updated is None or len(updated) > MAX_BODY_CHARS:
        return f"#{number}: its body is too long for its marker to remember the fixes; a round rewrites it"
    api.edit_issue(number, body=updated)
    return None
