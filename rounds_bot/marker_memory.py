"""What an issue's marker remembers beyond the signature: its latest good diagnosis and the model calls paid
for it, its fix pull requests and how many fix attempts failed or were left to a person, and an active
`/rounds ignore`, and its cascade links. A database rebuilt from the issues (`github/rebuild.py`) reads them
back, so the diagnosis stays in the issue body, is not paid for again, and the month's spending still counts
against the monthly budget; the fixes are followed to their evaluation, the ignore holds, and the next update
still names the cascade ("Caused by #12") before a round sees its traces again.

    marker_memory(store, ids, links)     what each signature's marker carries (the round renders it)
    lifecycle_memory(store)              the fix and ignore part of it, for every signature that has one
    restore_memory(store, sid, memory)   the diagnosis and spending written back
    restore_lifecycle(store, sid, ...)   the fixes, attempts and ignore written back as events, under the
                                         idempotency keys the live code uses where they are known
    restore_cascade(store, sid, memory)  the cascade links written back, as the store keeps them
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from rounds_bot.clock import parse_iso
from rounds_bot.controls import COMMAND_SOURCE, Mute, load_controls
from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome
from rounds_bot.events import Fact
from rounds_bot.lifecycle import FixRecord, IncidentRecord
from rounds_bot.marker import (
    MAX_MARKED_FILES,
    MAX_MARKED_FIXES,
    MAX_MARKED_LINKS,
    MAX_MARKED_REASON_CHARS,
    MAX_MARKED_VERSIONS,
    MarkedCascade,
    MarkedDiagnosis,
    MarkedFix,
    MarkedMute,
    MarkedSpend,
    MarkerMemory,
)
from rounds_bot.store import Booking, CascadeLinks, DiagnosisRecord, Store
from rounds_bot.versions import parsed

REBUILT_RUN = "rebuilt"
# The answer is also in the body, rendered; carried twice, a long one could push the body past GitHub's
# limit. Longer answers are left out of the marker: a rebuild then diagnoses that signature again.
MAX_MARKED_ANSWER_CHARS = 8_000


def marker_memory(
    store: Store,
    signature_ids: Iterable[str],
    latest: Mapping[str, DiagnosisRecord] | None = None,
    links: Mapping[str, CascadeLinks] | None = None,
) -> MarkerMemories:
    """Each signature's diagnosis and spending as its marker carries them (after this round's calls).
    `latest` is each signature's latest good diagnosis (`Store.latest_good_diagnoses`) when the caller
    has read it already; it is read here otherwise. `links` are the cascade links as the round will keep
    them (`round/cascade.carry_over`); without them, those the store keeps now."""
    ids = list(signature_ids)
    if latest is None:
        latest = store.latest_good_diagnoses(ids)
    if links is None:
        links = store.cascade_links()
    mutes = load_controls(store).mutes if ids else {}
    # read together: a round files thousands of issues
    fixes, incidents, bookings = store.fix_records_of(ids), store.incidents_of(ids), store.bookings_of(ids)
    return MarkerMemories(ids, latest, links, mutes, fixes, incidents, bookings)


class MarkerMemories(Mapping[str, MarkerMemory]):
    """The memory of each of a round's markers, read from the store together and built as each issue is
    rendered: a round filing thousands of issues holds the rows, not a model per marker. Reading one twice
    builds it twice, equal (nothing it is built from changes)."""

    def __init__(
        self,
        ids: list[str],
        latest: Mapping[str, DiagnosisRecord],
        links: Mapping[str, CascadeLinks],
        mutes: Mapping[str, Mute],
        fixes: Mapping[str, list[FixRecord]],
        incidents: Mapping[str, IncidentRecord],
        bookings: Mapping[str, list[Booking]],
    ) -> None:
        self._ids = dict.fromkeys(ids)
        self._latest, self._links, self._mutes = latest, links, mutes
        self._fixes, self._incidents, self._bookings = fixes, incidents, bookings

    def __getitem__(self, signature_id: str) -> MarkerMemory:
        if signature_id not in self._ids:
            raise KeyError(signature_id)
        record = self._latest.get(signature_id)
        fixes, incident, mute = (
            self._fixes[signature_id],
            self._incidents.get(signature_id),
            self._mutes.get(signature_id),
        )
        links, bookings = self._links.get(signature_id), self._bookings[signature_id]
        if record is None and mute is None and not (fixes or bookings or links or _attempts(incident)):
            # what a first round's thousands of new signatures remember: nothing (each part below would be
            # empty); frozen, so one is shared rather than built again for each
            return NOTHING_REMEMBERED
        return _remembered(record, fixes, incident, mute, links, bookings)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


def _remembered(
    record: DiagnosisRecord | None,
    fixes: list[FixRecord],
    incident: IncidentRecord | None,
    mute: Mute | None,
    links: CascadeLinks | None,
    bookings: list[Booking],
) -> MarkerMemory:
    """A marker's memory, built from its signature's rows."""
    return _lifecycle(fixes, incident, mute).model_copy(
        update={
            "diagnosis": _marked(record) if record is not None else None,
            "spend": [
                MarkedSpend(at=paid.at, usd=paid.usd, model=paid.model, note=paid.note) for paid in bookings
            ],
            "cascade": marked_cascade(links or CascadeLinks()),
        }
    )


#: the memory of a marker that remembers nothing beyond its signature
NOTHING_REMEMBERED = MarkerMemory()


def _attempts(incident: IncidentRecord | None) -> bool:
    """Whether a marker remembers fix attempts of an incident (none without one)."""
    return incident is not None and bool(incident.failed_fixes or incident.offered_fixes)


def lifecycle_memory(store: Store) -> dict[str, MarkerMemory]:
    """The fixes, fix attempts and ignore each marker should carry, for every signature with any of them
    (without diagnosis and spending: `marker_sync.py` rewrites only this part of a marker)."""
    fixes: dict[str, list[FixRecord]] = {}
    for fix in store.fix_records():
        fixes.setdefault(fix.signature_id, []).append(fix)
    incidents = {
        incident.signature_id: incident
        for incident in store.incident_records()
        if incident.failed_fixes or incident.offered_fixes
    }
    mutes = load_controls(store).mutes
    return {
        sid: _lifecycle(fixes.get(sid, []), incidents.get(sid), mutes.get(sid))
        for sid in sorted({*fixes, *incidents, *mutes})
    }


def _lifecycle(fixes: list[FixRecord], incident: IncidentRecord | None, mute: Mute | None) -> MarkerMemory:
    return MarkerMemory(
        fixes=[marked_fix(fix) for fix in fixes[-MAX_MARKED_FIXES:]],
        failed_fixes=incident.failed_fixes if incident is not None else 0,
        offered_fixes=incident.offered_fixes if incident is not None else 0,
        mute=_marked_mute(mute) if mute is not None else None,
    )


def marked_fix(fix: FixRecord) -> MarkedFix:
    """A fix as the marker keeps it: what the issue cannot give back, within the marker's limits."""
    return MarkedFix(
        pr=fix.pr_number,
        branch=fix.branch,
        status=fix.status,
        proposed_at=fix.proposed_at,
        updated_at=fix.updated_at if fix.updated_at != fix.proposed_at else "",
        revisions=fix.revisions,
        files=fix.files[:MAX_MARKED_FILES],
        merged_at=fix.merged_at,
        versions_before=_kept_versions(fix.versions_before),
        rate_before=fix.rate_before,
        before_from=fix.before_from,
        before_occurrences=fix.before_occurrences,
        released_version=fix.released_version,
        released_at=fix.released_at,
        rate_after=fix.rate_after,
        rate_after_release=fix.rate_after_release,
        resolved_at=fix.resolved_at,
        judged_from=fix.judged_from,
        regressed_at=fix.regressed_at,
        regression=fix.regression[:MAX_MARKED_REASON_CHARS] if fix.regression else None,
        closed_at=fix.closed_at,
    )


def marked_cascade(links: CascadeLinks) -> MarkedCascade | None:
    """A signature's cascade links as the marker keeps them: each way, the MAX_MARKED_LINKS with the most
    traces; None when it has none."""
    if not links:
        return None
    return MarkedCascade(caused_by=_strongest(links.caused_by), causes=_strongest(links.causes))


def _strongest(counts: Mapping[str, int]) -> dict[str, int]:
    kept = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:MAX_MARKED_LINKS]
    return dict(sorted(kept))


def restore_cascade(store: Store, signature_id: str, memory: MarkerMemory) -> bool:
    """Write back the cascade links a marker remembers (after the signature's row is saved, inside the
    caller's transaction); returns whether it had any. A link to a signature that is gone is dropped by
    the next round, as the live store's would be (`round/cascade.carry_over`)."""
    cascade = memory.cascade
    if not cascade:
        return False
    store.set_cascade_links(
        {signature_id: CascadeLinks(caused_by=dict(cascade.caused_by), causes=dict(cascade.causes))}
    )
    return True


def _kept_versions(versions: list[str]) -> list[str]:
    """Versions that can be ordered need only the newest (nothing older is "newer than all of them"); others
    are kept up to MAX_MARKED_VERSIONS."""
    if len(versions) <= MAX_MARKED_VERSIONS:
        return versions
    orderable = {version: key for version in versions if (key := parsed(version)) is not None}
    if len(orderable) == len(versions):
        return [max(orderable, key=orderable.__getitem__)]
    return sorted(versions)[-MAX_MARKED_VERSIONS:]


def _marked_mute(mute: Mute) -> MarkedMute:
    return MarkedMute(
        by=mute.by,
        since=mute.since,
        until=mute.until,
        until_occurrences=mute.until_occurrences,
        count_at=mute.count_at,
        key=mute.key,
    )


def restore_memory(store: Store, signature_id: str, memory: MarkerMemory) -> list[str]:
    """Write back what a marker remembers (inside the caller's transaction); returns what could not be."""
    problems: list[str] = []
    for paid in memory.spend:
        try:
            at = parse_iso(paid.at)
        except ValueError:
            problems.append(f"a paid model call has an unreadable time ({paid.at[:40]!r}); not counted")
            continue
        store.book_cost(
            run_id=REBUILT_RUN,
            signature_id=signature_id,
            usd=paid.usd,
            model=paid.model,
            note=paid.note,
            at=at,
        )
    marked = memory.diagnosis
    if marked is None:
        return problems
    try:
        answer = Diagnosis.model_validate(marked.answer)
        parse_iso(marked.at)
    except ValueError as exc:
        problems.append(f"its diagnosis could not be read back ({exc.__class__.__name__}); diagnosed again")
        return problems
    store.record_diagnosis(
        DiagnosisRecord(
            cache_key=marked.cache_key,
            signature_id=signature_id,
            revision=marked.revision,
            at=marked.at,
            status="ok",
            trigger=marked.trigger,
            outcome=DiagnosisOutcome(status="ok", diagnosis=answer, detail="read back from the issue"),
        )
    )
    return problems


def _marked(record: DiagnosisRecord) -> MarkedDiagnosis | None:
    if record.outcome.diagnosis is None:
        return None
    answer = record.outcome.diagnosis.model_dump(mode="json")
    if len(json.dumps(answer)) > MAX_MARKED_ANSWER_CHARS:
        return None
    return MarkedDiagnosis(
        cache_key=record.cache_key,
        revision=record.revision,
        at=record.at,
        trigger=record.trigger,
        answer=answer,
    )


# (when, kind, idempotency key, payload) of one fact to restore
_Restored = tuple[str, Fact, str, dict[str, Any]]


def restore_lifecycle(
    store: Store, signature_id: str, memory: MarkerMemory, *, issue_ref: str, issue_url: str, at: datetime
) -> int:
    """The fixes, fix attempts and ignore a marker remembers, appended to the log as the facts that give
    them back, oldest first (inside the caller's transaction; appending twice adds nothing). `at`: when the
    issue was filed, for the attempts, whose own times the marker does not keep. Returns the facts added."""
    facts: list[_Restored] = []
    for fix in memory.fixes:
        facts += _fix_facts(signature_id, fix, issue_ref, _pull_url(issue_url, issue_ref, fix.pr))
    if memory.failed_fixes:
        count = {"restored": True, "count": memory.failed_fixes}
        facts.append(("", Fact.FIX_FAILED, f"rebuilt:fixfailed:{signature_id}", count))
    if memory.offered_fixes:
        count = {"restored": True, "count": memory.offered_fixes}
        facts.append(("", Fact.FIX_OFFERED, f"rebuilt:fixoffered:{signature_id}", count))
    mute = memory.mute
    if mute is not None:
        payload = {
            "source": COMMAND_SOURCE,
            "by": mute.by,
            "until": mute.until,
            "until_occurrences": mute.until_occurrences,
            "count_at": mute.count_at,
            "restored": True,
        }
        key = mute.key or f"rebuilt:ignore:{signature_id}"
        facts.append((mute.since, Fact.INCIDENT_SUPPRESSED, key, payload))
    added = 0
    for when, kind, key, payload in sorted(facts, key=lambda fact: _moment(fact[0], at)):
        added += store.append_event(
            kind, key, signature_id=signature_id, run_id=REBUILT_RUN, at=_moment(when, at), payload=payload
        )
    return added


def _fix_facts(signature_id: str, fix: MarkedFix, issue_ref: str, url: str) -> list[_Restored]:
    pr = fix.pr
    proposed: dict[str, Any] = {
        "pr": pr,
        "url": url,
        "issue": issue_ref,
        "branch": fix.branch,
        "files": fix.files,
        "revisions": fix.revisions,
        "updated_at": fix.updated_at or fix.proposed_at,
        "restored": True,
    }
    facts: list[_Restored] = [(fix.proposed_at, Fact.FIX_PROPOSED, f"rebuilt:fixproposed:{pr}", proposed)]
    if fix.merged_at:
        applied: dict[str, Any] = {
            "pr": pr,
            "merged_at": fix.merged_at,
            "versions_before": fix.versions_before,
            "rate_before": fix.rate_before,
            "before_from": fix.before_from,
            "before_occurrences": fix.before_occurrences,
        }
        facts.append((fix.merged_at, Fact.FIX_APPLIED, f"fixapplied:{pr}", applied))
    if fix.released_version and fix.released_at:
        released: dict[str, Any] = {"pr": pr, "version": fix.released_version, "first_seen": fix.released_at}
        facts.append((fix.released_at, Fact.FIX_RELEASED, f"fixreleased:{pr}", released))
    if fix.status == "abandoned":
        facts.append((fix.closed_at or fix.proposed_at, Fact.FIX_ABANDONED, f"fixabandoned:{pr}", {"pr": pr}))
    if fix.resolved_at:
        resolved: dict[str, Any] = {
            "pr": pr,
            "rate_after": fix.rate_after,
            "rate_after_release": fix.rate_after_release,
            "judged_from": fix.judged_from or "release",
        }
        facts.append((fix.resolved_at, Fact.INCIDENT_RESOLVED, f"resolved:{signature_id}:{pr}", resolved))
    if fix.status == "regressed" and fix.regressed_at:
        regressed: dict[str, Any] = {"pr": pr, "reason": fix.regression, "restored": True}
        key = f"rebuilt:regressed:{signature_id}:{pr}"
        facts.append((fix.regressed_at, Fact.REGRESSED, key, regressed))
    return facts


def _pull_url(issue_url: str, issue_ref: str, pr: int) -> str:
    """`https://github.com/o/r/issues/3` -> `https://github.com/o/r/pull/7` (GitHub Enterprise alike)."""
    suffix = f"/issues/{issue_ref.lstrip('#')}"
    return f"{issue_url.removesuffix(suffix)}/pull/{pr}" if issue_url.endswith(suffix) else ""


def _moment(text: str, default: datetime) -> datetime:
    try:
        moment = parse_iso(text) if text else default
    except ValueError:
        return default
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
