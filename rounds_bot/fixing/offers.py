"""Fixes rounds pushed but could not open a pull request for, because the repository does not let GitHub
Actions create pull requests: the issue got ONE comment with a link that opens it (`answers.offered`).

    fold_offers(facts)      each FixOffered that no pull request was found for yet: for `rounds changelog`
    adopt_offers(...)       after a round: a pull request a person opened from such a branch becomes rounds'
                            own fix (a FixProposed with `adopted`), so the merge, the release and the
                            evaluation follow it like any other; one request per waiting offer and run

An offer nobody opened within ADOPTION_DAYS is no longer looked for (its line in the changelog stays).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from pydantic import Field

from rounds_bot.clock import parse_iso
from rounds_bot.events import Fact
from rounds_bot.github.pulls import PullsApi
from rounds_bot.lifecycle import FactLike
from rounds_bot.models import Frozen
from rounds_bot.store import Store

#: how long rounds keeps looking for the pull request a person opened from an offered branch
ADOPTION_DAYS = 30


class OfferedFix(Frozen):
    """A pushed branch whose pull request is left to a person."""

    signature_id: str
    issue: str = ""
    branch: str
    base: str = ""
    link: str = Field(default="", description="the page that opens its pull request")
    files: list[str] = Field(default_factory=list)
    offered_at: str


def fold_offers(facts: Iterable[FactLike]) -> list[OfferedFix]:
    """Offers whose branch no pull request was adopted from, oldest first."""
    offers: dict[str, OfferedFix] = {}
    for fact in facts:
        branch = str(fact.payload.get("branch") or "")
        if fact.kind == Fact.FIX_OFFERED and fact.signature_id and branch:
            offers[branch] = OfferedFix(
                signature_id=fact.signature_id,
                issue=str(fact.payload.get("issue") or ""),
                branch=branch,
                base=str(fact.payload.get("base") or ""),
                link=str(fact.payload.get("link") or ""),
                files=[str(name) for name in fact.payload.get("files") or []],
                offered_at=fact.at,
            )
        elif fact.kind == Fact.FIX_PROPOSED:
            offers.pop(branch, None)
    return list(offers.values())


def adopt_offers(store: Store, pulls: PullsApi, now: datetime) -> list[str]:
    """Pull requests people opened from offered branches, taken on as rounds' fixes; a note for each."""
    notes = []
    since = now - timedelta(days=ADOPTION_DAYS)
    for offer in fold_offers(store.facts([Fact.FIX_OFFERED, Fact.FIX_PROPOSED])):
        if parse_iso(offer.offered_at) < since:
            continue
        pull = pulls.pull_for_branch(offer.branch)
        if pull is None:
            continue
        _adopt(store, offer, pull, now)
        notes.append(
            f"#{pull['number']} was opened from the branch {offer.branch} rounds pushed: rounds follows it"
        )
    return notes


def _adopt(store: Store, offer: OfferedFix, pull: dict[str, object], now: datetime) -> None:
    number = int(str(pull["number"]))
    payload = {
        "pr": number,
        "url": str(pull.get("html_url") or ""),
        "branch": offer.branch,
        "files": offer.files,
        "issue": offer.issue,
        "adopted": True,
    }
    with store.transaction():
        store.append_event(
            Fact.FIX_PROPOSED,
            f"fixadopted:{number}",
            signature_id=offer.signature_id,
            run_id="fix",
            at=now,
            payload=payload,
        )
