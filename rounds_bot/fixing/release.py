"""During a round: which release carries a merged fix, and whether a recurrence is a regression.

Resolution waits for a release, not for the merge. The release that carries a fix is the first
`service.version` of the fixed service seen after the merge that is newer than every version seen before it
(`versions.py`), in any signature of that service: in this round's occurrences or, for a release that ran
before the merge was observed, in the first-seen times the rounds before it kept (`store/versions.py`).
Then, for each occurrence of the fixed signature:

    on that release or a later one   a regression: the issue is reopened with the `regression` label
    on an older version              noted, not a regression: old instances still run until the rollout ends
    before any release was seen      noted (with no versions at all, the quiet period starts again)

Once a fix is resolved the same holds; a signature without versions then falls back to the round's own rule
(a closed issue whose problem comes back is reopened). Pure: the round logs what this returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal

from pydantic import Field

from rounds_bot.clock import parse_iso
from rounds_bot.lifecycle import FixRecord
from rounds_bot.models import Frozen
from rounds_bot.versions import at_or_above, is_newer


class Seen(Frozen):
    """What one round saw of one signature, by version."""

    services: frozenset[str]
    first_seen: dict[str, datetime] = Field(default_factory=dict, description="version -> first occurrence")
    counts: dict[str, int] = Field(default_factory=dict, description="version -> occurrences")
    unversioned: int = 0


class Release(Frozen):
    signature_id: str
    pr_number: int
    version: str
    first_seen: datetime


class FixVerdict(Frozen):
    """What a recurrence of a fixed signature means."""

    signature_id: str
    pr_number: int
    kind: Literal["regressed", "noted"]
    reason: str
    versions: list[str]
    count: int


class ReleaseWatch(Frozen):
    releases: list[Release] = Field(default_factory=list)
    verdicts: dict[str, FixVerdict] = Field(default_factory=dict)


def watch_releases(
    fixes: Iterable[FixRecord],
    seen: Mapping[str, Seen],
    service_of: Mapping[str, str],
    known: Mapping[str, Mapping[str, datetime]] | None = None,
) -> ReleaseWatch:
    """Releases found this round and a verdict for every fixed signature that occurred again. `known`: each
    service's versions and when each was first seen, before this round (`Store.versions_seen`)."""
    watch = ReleaseWatch()
    for fix in _latest_live(fixes):
        release = _known_release(fix)
        if release is None:
            service = service_of.get(fix.signature_id, "")
            versions = dict((known or {}).get(service, {}))
            for other in seen.values():
                if service in other.services:
                    for version, first in other.first_seen.items():
                        versions[version] = min(versions.get(version, first), first)
            release = find_release(fix, versions)
            if release is not None:
                watch.releases.append(release)
        mine = seen.get(fix.signature_id)
        verdict = _judge(fix, release, mine) if mine is not None else None
        if verdict is not None:
            watch.verdicts[fix.signature_id] = verdict
    return watch


def _latest_live(fixes: Iterable[FixRecord]) -> list[FixRecord]:
    latest: dict[str, FixRecord] = {}
    for fix in fixes:
        latest[fix.signature_id] = fix
    return [fix for fix in latest.values() if fix.live and fix.merged_at]


def _known_release(fix: FixRecord) -> Release | None:
    if fix.released_version is None or fix.released_at is None:
        return None
    return Release(
        signature_id=fix.signature_id,
        pr_number=fix.pr_number,
        version=fix.released_version,
        first_seen=parse_iso(fix.released_at),
    )


def find_release(fix: FixRecord, versions: Mapping[str, datetime]) -> Release | None:
    """The first version (of `versions`: version -> first seen) after the merge newer than all before it."""
    merged = parse_iso(fix.merged_at or "")
    candidates = sorted(
        (first, version)
        for version, first in versions.items()
        if first >= merged and is_newer(version, fix.versions_before)
    )
    if not candidates:
        return None
    first, version = candidates[0]
    return Release(signature_id=fix.signature_id, pr_number=fix.pr_number, version=version, first_seen=first)


def versions_before(
    service_versions: Iterable[str], first_seen: Mapping[str, datetime], merged: datetime
) -> list[str]:
    """The versions a service ran before a merge: every version its signatures carry, except those first seen
    at or after the merge (a release deployed before rounds observed the merge is not "before" it). A version
    without a first-seen time (the database was rebuilt since) counts as before."""
    return sorted(
        version
        for version in {*service_versions, *first_seen}
        if version not in first_seen or first_seen[version] < merged
    )


def _judge(fix: FixRecord, release: Release | None, mine: Seen) -> FixVerdict | None:
    count = sum(mine.counts.values()) + mine.unversioned
    pr = f"pull request {fix.pr_number}"  # plain words: the reason is escaped where it is shown
    if release is None:
        if fix.status == "resolved" and not fix.versions_before:
            return None
        shown = ", ".join(sorted(mine.counts)) or "no version recorded"
        reason = f"it occurred again ({shown}) before any release newer than the merge of {pr} was seen"
        return _verdict(fix, "noted", reason, sorted(mine.counts), count)
    above = sorted(v for v in mine.counts if at_or_above(v, release.version, fix.versions_before))
    if above:
        reason = (
            f"it recurred on {', '.join(above)}, at or above {release.version}, the first release after {pr} "
            "was merged"
        )
        return _verdict(fix, "regressed", reason, above, sum(mine.counts[v] for v in above))
    older = ", ".join(sorted(mine.counts)) or "no version recorded"
    reason = f"it occurred on {older}, older than {release.version} (which carries the fix in {pr}): noted"
    return _verdict(fix, "noted", reason, sorted(mine.counts), count)


def _verdict(
    fix: FixRecord, kind: Literal["regressed", "noted"], reason: str, versions: list[str], count: int
) -> FixVerdict:
    return FixVerdict(
        signature_id=fix.signature_id,
        pr_number=fix.pr_number,
        kind=kind,
        reason=reason,
        versions=versions,
        count=count,
    )
