"""The round's look at problems rounds proposed a fix for (`fixing/release.py` decides; this feeds it).

fixed = watch_fixed(store, tallies, run_id)   the release that carries each merged fix, once seen; a verdict
                                              for each fixed signature seen again (planning reads it); the
                                              facts to log (FixReleased, RecurrenceNoted) and report notes
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rounds_bot.clock import iso
from rounds_bot.events import Fact
from rounds_bot.fixing.release import FixVerdict, Seen, watch_releases
from rounds_bot.round.commit import FactToLog
from rounds_bot.store import Store
from rounds_bot.tally import Tally


@dataclass(frozen=True)
class Fixed:
    verdicts: dict[str, FixVerdict] = field(default_factory=dict)
    facts: list[FactToLog] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def watch_fixed(store: Store, tallies: dict[str, Tally], run_id: str) -> Fixed:
    fixes = [fix for fix in store.fix_records() if fix.live]
    if not fixes:
        return Fixed()
    service_of = {}
    for fix in fixes:
        signature = store.signature(fix.signature_id)
        service_of[fix.signature_id] = signature.service if signature is not None else ""
    known = {service: store.versions_seen(service) for service in set(service_of.values())}
    watch = watch_releases(fixes, {sid: _seen(tally) for sid, tally in tallies.items()}, service_of, known)
    facts, notes = [], []
    for release in watch.releases:
        payload = {"pr": release.pr_number, "version": release.version, "first_seen": iso(release.first_seen)}
        facts.append(
            FactToLog(Fact.FIX_RELEASED, f"fixreleased:{release.pr_number}", release.signature_id, payload)
        )
        notes.append(f"{release.signature_id}: the fix in #{release.pr_number} shipped in {release.version}")
    for verdict in watch.verdicts.values():
        if verdict.kind == "noted":
            payload = {"pr": verdict.pr_number, "versions": verdict.versions, "count": verdict.count}
            key = f"recurrence:{verdict.signature_id}:{run_id}"
            facts.append(FactToLog(Fact.RECURRENCE_NOTED, key, verdict.signature_id, payload))
            notes.append(f"{verdict.signature_id}: {verdict.reason}")
    return Fixed(verdicts=watch.verdicts, facts=facts, notes=notes)


def _seen(tally: Tally) -> Seen:
    versioned = sum(count for _, count in tally.by_version.values())
    return Seen(
        services=frozenset(tally.services),
        first_seen={version: first for version, (first, _) in tally.by_version.items()},
        counts={version: count for version, (_, count) in tally.by_version.items()},
        unversioned=max(tally.count - versioned, 0),
    )
