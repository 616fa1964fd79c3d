"""`rounds changelog`: every fix rounds proposed, newest first, folded from the event log, for human review.

Each fix shows its status (proposed, merged, resolved, regressed, abandoned), its signature, issue and pull
request, when it was merged and which release carried it, and the occurrence rates measured before the merge,
after it and after the release. The rate before the merge covers at most 7 days: the details say how long it
really covers when rounds had counted the problem for less, and a fix resolved without any version
information says it was judged from the merge time. Branches rounds pushed but could not open a pull request
for (the repository does not let GitHub Actions create pull requests) are listed after them, with the link
that opens one, until a person does (`offers.py`). Markdown for reading, JSON (`--json`) for tools.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence

from rounds_bot.fixing.evaluation import before_label, recorded_before
from rounds_bot.fixing.offers import OfferedFix, fold_offers
from rounds_bot.lifecycle import LIFECYCLE_FACTS, FactLike, FixRecord, FixStatus, fold_fixes
from rounds_bot.render import markdown as md
from rounds_bot.versions import ordered

STATUS_ORDER: tuple[FixStatus, ...] = ("proposed", "merged", "resolved", "regressed", "abandoned")


def changelog_fixes(facts: Iterable[FactLike]) -> list[FixRecord]:
    """The fixes in the log, newest proposal first."""
    wanted = [fact for fact in facts if fact.kind in LIFECYCLE_FACTS]
    return sorted(fold_fixes(wanted), key=lambda f: (f.proposed_at, f.pr_number), reverse=True)


def changelog_offers(facts: Iterable[FactLike]) -> list[OfferedFix]:
    """Branches whose pull request is left to a person, newest first."""
    return sorted(fold_offers(facts), key=lambda offer: offer.offered_at, reverse=True)


def changelog_json(fixes: list[FixRecord], offers: Sequence[OfferedFix] = ()) -> str:
    counts: Counter[str] = Counter(fix.status for fix in fixes)
    document = {
        "fixes": [fix.model_dump(mode="json") for fix in fixes],
        "counts": {status: counts[status] for status in STATUS_ORDER},
        "offered": [offer.model_dump(mode="json") for offer in offers],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def changelog_markdown(
    fixes: list[FixRecord], repository: str = "", offers: Sequence[OfferedFix] = ()
) -> str:
    title = f"# Fixes proposed by rounds{f' in {md.escape(repository)}' if repository else ''}"
    if not fixes and not offers:
        return f"{title}\n\nrounds has not proposed a fix yet.\n"
    if not fixes:
        return "\n".join([title, "", *_offered(offers)]) + "\n"
    counts: Counter[str] = Counter(fix.status for fix in fixes)
    tally = ", ".join(f"{counts[s]} {s}" for s in STATUS_ORDER if counts[s])
    lines = [
        title,
        "",
        f"{len(fixes)} fix{'es' if len(fixes) != 1 else ''}, newest first: {tally}. Rates are occurrences "
        "an hour: before the merge (over the 7 days before it, or the shorter time rounds had counted the "
        "problem, as the details say), since the merge, and since the first release that carries the fix."
        + _offers_mentioned(offers),
        "",
        "| proposed | status | signature | issue | pull request | merged | release | before | after merge "
        "| after release |",
        "|---|---|---|---|---|---|---|---:|---:|---:|",
        *(_row(fix) for fix in fixes),
        "",
        "## Details",
        "",
        *(_details(fix) for fix in fixes),
    ]
    if offers:
        lines += ["", *_offered(offers)]
    return "\n".join(lines) + "\n"


def _offers_mentioned(offers: Sequence[OfferedFix]) -> str:
    if not offers:
        return ""
    many = len(offers) != 1
    branches = f"{len(offers)} pushed branch{'es' if many else ''} {'wait' if many else 'waits'}"
    return f" {branches} for a person to open the pull request (below)."


def _offered(offers: Sequence[OfferedFix]) -> list[str]:
    """The branches pushed whose pull request a person has to open (GitHub Actions may not open one)."""
    return [
        "## Branches pushed, pull request left to a person",
        "",
        "The repository does not let GitHub Actions open pull requests, so rounds pushed these branches and "
        "commented a link on the issue; rounds follows each one once a person opens its pull request.",
        "",
        *(_offer(offer) for offer in offers),
    ]


def _offer(offer: OfferedFix) -> str:
    files = ", ".join(str(md.code(path)) for path in offer.files) or "no file recorded"
    opens = f": {md.link('open the pull request', offer.link)}" if offer.link else ""
    issue = md.issue_ref(offer.issue) if offer.issue else "—"
    what = f"{md.code(offer.signature_id)} ({issue}), branch {md.code(offer.branch)}"
    return f"- {_day(offer.offered_at)} {what}: {files}{opens}"


def _row(fix: FixRecord) -> str:
    cells = [
        _day(fix.proposed_at),
        f"**{fix.status}**",
        str(md.code(fix.signature_id, in_table=True)),
        fix.issue or "—",
        f"#{fix.pr_number}",
        _day(fix.merged_at),
        str(md.code(fix.released_version, in_table=True)) if fix.released_version else "—",
        _rate(fix.rate_before),
        _rate(fix.rate_after),
        _rate(fix.rate_after_release),
    ]
    return "| " + " | ".join(cells) + " |"


def _details(fix: FixRecord) -> str:
    files = ", ".join(str(md.code(path)) for path in fix.files) or "no file recorded"
    revisions = f"{fix.revisions} push{'es' if fix.revisions != 1 else ''}"
    parts = [f"- #{fix.pr_number} ({fix.status}), branch {md.code(fix.branch)}: {files}; {revisions}"]
    if fix.merged_at:
        parts.append(f"merged {_day(fix.merged_at)}")
    before = recorded_before(fix)
    if before is not None:
        parts.append(f"{before.occurrences} occurrences in the {before_label(before)}")
    if fix.released_version:
        parts.append(f"released in {md.code(fix.released_version)} ({_day(fix.released_at)})")
    elif fix.status == "merged" and fix.versions_before:
        newest = ", ".join(str(md.code(version)) for version in ordered(fix.versions_before)[-3:])
        parts.append(f"waits for a release newer than {newest}")
    elif fix.status == "merged":
        parts.append("no version information: its quiet period counts from the merge")
    if fix.resolved_at:
        judged = " (no version information: judged from the merge time)" if fix.judged_from == "merge" else ""
        parts.append(f"resolved {_day(fix.resolved_at)}{judged}")
    if fix.regressed_at:
        parts.append(f"regressed {_day(fix.regressed_at)}: {md.escape(fix.regression or 'it came back')}")
    if fix.closed_at:
        parts.append(f"closed without merging {_day(fix.closed_at)}")
    return "; ".join(parts)


def _day(moment: str | None) -> str:
    """`2026-03-02T09:55:00+00:00` -> `2026-03-02 09:55`."""
    return moment[:16].replace("T", " ") if moment else "—"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
