"""The round's evidence step: for each signature about to be filed or updated, where in the code it happened
(git, the checkout) and when (its occurrences so far, with this round's). A look-up: nothing is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from rounds_bot.clock import parse_iso
from rounds_bot.code.locate import CodeContext, CodeLocator
from rounds_bot.config import Settings
from rounds_bot.round.planning import IssuePlan
from rounds_bot.store import Store


@dataclass(frozen=True)
class Evidence:
    """What an issue shows of where and when a problem happens."""

    code: CodeContext = field(default_factory=CodeContext)
    occurrences: dict[datetime, int] = field(default_factory=dict)


def gather_evidence(settings: Settings, store: Store, plans: list[IssuePlan]) -> dict[str, Evidence]:
    to_file = [plan for plan in plans if plan.kind != "deferred"]
    if not to_file:
        return {}
    locator = CodeLocator.for_settings(settings)
    return {plan.signature_id: _evidence(locator, store, plan) for plan in to_file}


def _evidence(locator: CodeLocator, store: Store, plan: IssuePlan) -> Evidence:
    counts = store.occurrence_counts(plan.signature_id)
    for bucket, count in (plan.tally.buckets if plan.tally else {}).items():
        moment = parse_iso(bucket)
        counts[moment] = counts.get(moment, 0) + count
    return Evidence(code=locator.locate(plan.signature), occurrences=counts)
