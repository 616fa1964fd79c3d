"""An incident's life and its fixes, derived by folding the event log: the same facts give the same state.

    fold_fixes(facts)            one `FixRecord` per pull request rounds opened, with its status
    fold_incident(sid, facts)    one signature's `IncidentRecord`: status, issue, regressions, its last fix

A fix moves through these statuses, each caused by one fact:

    FixProposed ──> proposed ──FixApplied──> merged ──IncidentResolved──> resolved
                        │                      │  └──Regressed──> regressed      │
                        └──FixAbandoned──> abandoned                  Regressed──┘

FixReleased (the first newer service.version seen after the merge) does not change the status; it says which
version carries the fix, also when it was logged after a regression found in the same round. IncidentResolved
says what the quiet period was judged from: the release, or (for a service that reports no version) the
merge. A FixProposed restored from an issue's marker (`github/rebuild.py`) carries the revisions and last
push it had; a restored FixFailed or FixOffered carries a `count`. FixOffered (a branch pushed whose pull
request GitHub did not let rounds open) is no fix yet: it becomes one when a person opens the pull request
and rounds adopts it with a FixProposed (`fixing/offers.py`). A FixFailed that says the attempt never started
(`blocked`: the test command could not run, or the tests failed without any change) is not a failed fix.
The functions are pure: the store keeps their results in derived tables and `rounds db replay` recomputes
those tables from the log alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol

from pydantic import Field

from rounds_bot.events import STATUS_AFTER, Fact
from rounds_bot.models import Frozen

FixStatus = Literal["proposed", "merged", "resolved", "regressed", "abandoned"]

#: the facts a signature's derived state depends on (an Updated count changes none of it)
LIFECYCLE_FACTS = frozenset(
    {
        *STATUS_AFTER,
        Fact.ISSUE_FILED,
        Fact.FIX_PROPOSED,
        Fact.FIX_APPLIED,
        Fact.FIX_ABANDONED,
        Fact.FIX_RELEASED,
        Fact.FIX_FAILED,
        Fact.FIX_OFFERED,
    }
)


class FactLike(Protocol):
    """What the fold reads of a logged fact (the store's `Logged` has these)."""

    @property
    def kind(self) -> str: ...

    @property
    def signature_id(self) -> str | None: ...

    @property
    def at(self) -> str: ...

    @property
    def payload(self) -> Mapping[str, Any]: ...


class FixRecord(Frozen):
    """One pull request rounds opened for a signature, and what became of it."""

    signature_id: str
    pr_number: int
    pr_url: str = ""
    issue: str = ""
    branch: str = ""
    status: FixStatus = "proposed"
    proposed_at: str
    updated_at: str = Field(description="when the branch was last pushed")
    revisions: int = Field(default=1, description="how often rounds pushed to the branch")
    files: list[str] = Field(default_factory=list)
    merged_at: str | None = None
    versions_before: list[str] = Field(
        default_factory=list, description="the versions the problem was seen on before the merge"
    )
    released_version: str | None = Field(default=None, description="the first newer version after the merge")
    released_at: str | None = None
    rate_before: float | None = Field(default=None, description="occurrences an hour before the merge")
    before_from: str | None = Field(
        default=None, description="where the rate before the merge starts: 7 days before it, or less"
    )
    before_occurrences: int | None = Field(default=None, description="occurrences counted before the merge")
    rate_after: float | None = Field(default=None, description="occurrences an hour since the merge")
    rate_after_release: float | None = Field(default=None, description="... since the release")
    resolved_at: str | None = None
    judged_from: Literal["release", "merge"] | None = Field(
        default=None, description="what the quiet period was counted from when it was resolved"
    )
    regressed_at: str | None = None
    regression: str | None = Field(default=None, description="what the regression was seen on")
    closed_at: str | None = Field(default=None, description="when it was closed without merging")

    @property
    def live(self) -> bool:
        """Merged or resolved: what a recurrence is judged against."""
        return self.status in ("merged", "resolved")


class IncidentRecord(Frozen):
    """A signature's state as the log says: status, issue, regressions, and its latest fix."""

    signature_id: str
    status: str = "unknown"
    issue: str | None = None
    detected_at: str | None = None
    resolved_at: str | None = None
    regressions: int = 0
    fix_pr: int | None = None
    fix_status: FixStatus | None = None
    failed_fixes: int = 0
    offered_fixes: int = Field(default=0, description="branches pushed whose pull request a person must open")


def fold_fixes(facts: Iterable[FactLike]) -> list[FixRecord]:
    """Every fix rounds proposed, in the order the pull requests were first opened."""
    records: dict[int, FixRecord] = {}
    latest: dict[str, int] = {}
    for fact in facts:
        sid = fact.signature_id
        if sid is None:
            continue
        number = _pr(fact.payload)
        if fact.kind == Fact.FIX_PROPOSED and number is not None:
            records[number] = _proposed(records.get(number), sid, number, fact)
            latest[sid] = number
            continue
        target = number if number in records else latest.get(sid)
        if target is None:
            continue
        changed = _apply(records[target], fact)
        if changed is not None:
            records[target] = changed
    return list(records.values())


def _proposed(record: FixRecord | None, sid: str, number: int, fact: FactLike) -> FixRecord:
    payload = fact.payload
    files = [str(name) for name in payload.get("files") or []]
    if record is None:
        revisions = payload.get("revisions")
        return FixRecord(
            signature_id=sid,
            pr_number=number,
            pr_url=str(payload.get("url") or ""),
            issue=str(payload.get("issue") or ""),
            branch=str(payload.get("branch") or ""),
            proposed_at=fact.at,
            updated_at=str(payload.get("updated_at") or fact.at),
            revisions=revisions if isinstance(revisions, int) and revisions > 0 else 1,
            files=files,
        )
    merged = sorted({*record.files, *files})
    revisions = record.revisions + 1
    return record.model_copy(update={"updated_at": fact.at, "revisions": revisions, "files": merged})


def _apply(record: FixRecord, fact: FactLike) -> FixRecord | None:
    """The record after one fact about its signature, or None when the fact does not concern it."""
    payload, kind = fact.payload, fact.kind
    if kind == Fact.FIX_APPLIED and record.status == "proposed":
        return record.model_copy(
            update={
                "status": "merged",
                "merged_at": str(payload.get("merged_at") or fact.at),
                "versions_before": [str(v) for v in payload.get("versions_before") or []],
                "rate_before": _rate(payload.get("rate_before")),
                "before_from": str(payload["before_from"]) if payload.get("before_from") else None,
                "before_occurrences": _count(payload.get("before_occurrences")),
            }
        )
    if kind == Fact.FIX_ABANDONED and record.status == "proposed":
        return record.model_copy(update={"status": "abandoned", "closed_at": fact.at})
    # a release is a fact about the version, whatever became of the fix since: a regression found in the same
    # round is logged before it (`round/commit.py`)
    shipped = record.status in ("merged", "resolved", "regressed") and record.merged_at is not None
    if kind == Fact.FIX_RELEASED and shipped and record.released_version is None:
        first_seen = str(payload.get("first_seen") or fact.at)
        return record.model_copy(
            update={"released_version": str(payload.get("version")), "released_at": first_seen}
        )
    if kind == Fact.INCIDENT_RESOLVED and record.status == "merged" and _pr(payload) == record.pr_number:
        return record.model_copy(
            update={
                "status": "resolved",
                "resolved_at": fact.at,
                "rate_after": _rate(payload.get("rate_after")),
                "rate_after_release": _rate(payload.get("rate_after_release")),
                "judged_from": _judged_from(payload.get("judged_from"), record),
            }
        )
    if kind == Fact.REGRESSED and record.live:
        reason = payload.get("reason")
        return record.model_copy(
            update={"status": "regressed", "regressed_at": fact.at, "regression": str(reason or "") or None}
        )
    return None


def fold_incident(signature_id: str, facts: Iterable[FactLike]) -> IncidentRecord:
    """One signature's derived state from its facts (oldest first)."""
    mine = [fact for fact in facts if fact.signature_id == signature_id]
    status, issue, detected, resolved, regressions, failed, offered = "unknown", None, None, None, 0, 0, 0
    for fact in mine:
        kind = fact.kind
        if kind in STATUS_AFTER:
            status = STATUS_AFTER[Fact(kind)]
        if kind == Fact.ISSUE_FILED:
            issue = str(fact.payload.get("issue") or "") or issue
        elif kind == Fact.INCIDENT_DETECTED and detected is None:
            detected = fact.at
        elif kind == Fact.INCIDENT_RESOLVED:
            resolved = fact.at
        elif kind == Fact.REGRESSED:
            regressions += 1
        elif kind == Fact.FIX_FAILED and not fact.payload.get("blocked"):
            failed += _attempts(fact.payload)
        elif kind == Fact.FIX_OFFERED:
            offered += _attempts(fact.payload)
    fixes = fold_fixes(mine)
    last = fixes[-1] if fixes else None
    return IncidentRecord(
        signature_id=signature_id,
        status=status,
        issue=issue,
        detected_at=detected,
        resolved_at=resolved,
        regressions=regressions,
        fix_pr=last.pr_number if last else None,
        fix_status=last.status if last else None,
        failed_fixes=failed,
        offered_fixes=offered,
    )


def _pr(payload: Mapping[str, Any]) -> int | None:
    value = payload.get("pr")
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else None


def _rate(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _judged_from(value: Any, record: FixRecord) -> Literal["release", "merge"]:
    """As logged; facts from before it was logged were judged from the release when there was one."""
    if value in ("release", "merge"):
        return "release" if value == "release" else "merge"
    return "release" if record.released_at is not None else "merge"


def _attempts(payload: Mapping[str, Any]) -> int:
    """One attempt, or as many as a fact restored from a marker says it stands for."""
    return (_count(payload.get("count")) or 0) if payload.get("restored") else 1


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
