"""The round report: what happened in one round, as Markdown for the terminal and the job summary."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from rounds_bot.models import Frozen
from rounds_bot.render.markdown import environment, trusted
from rounds_bot.render.step_summary import append_to_summary
from rounds_bot.sources.base import SkippedRecord


@dataclass(frozen=True, slots=True)
class SignatureLine:
    """A signature's line in the report. A plain frozen record with slots, not a model: a round with
    thousands of new signatures keeps one or two per signature to its end (a model's field dictionary is
    most of one), and the report's model takes it as it is (pydantic validates a dataclass's fields only
    when it is given as a mapping, and passes an instance through)."""

    signature_id: str
    title: str
    service: str
    tier: str
    round_count: int
    total_count: int
    issue: str | None = None
    note: str = ""


class RoundReport(Frozen):
    run_id: str
    source: str
    tracker: str
    window_start: str
    window_end: str
    events_read: int = 0
    occurrences_counted: int = 0
    already_counted: int = 0
    new: list[SignatureLine] = Field(default_factory=list)
    updated: list[SignatureLine] = Field(default_factory=list)
    regressed: list[SignatureLine] = Field(default_factory=list)
    deferred: list[SignatureLine] = Field(default_factory=list, description="over a cap: next round")
    diagnosed: list[SignatureLine] = Field(default_factory=list, description="model calls made this round")
    waiting: list[SignatureLine] = Field(default_factory=list, description="not diagnosed, with the reason")
    model_calls: int = 0
    diagnosis_mode: str = ""
    skipped: list[SkippedRecord] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    tier_counts: dict[str, int] = Field(default_factory=dict)
    spent_usd: float = 0.0
    budget_remaining_usd: float | None = None
    requests: int = 0
    trend: str = Field(default="", description="new and ongoing signatures over the last rounds, as Markdown")

    @property
    def quiet(self) -> bool:
        return not (self.new or self.updated or self.regressed)


MAX_SKIPPED_SHOWN = 20


def render_report(report: RoundReport) -> str:
    template = environment().get_template("report.md.j2")
    return template.render(
        r=report,
        trend=trusted(report.trend) if report.trend else None,
        skipped=report.skipped[:MAX_SKIPPED_SHOWN],
        more_skipped=max(len(report.skipped) - MAX_SKIPPED_SHOWN, 0),
    )


def append_to_step_summary(markdown: str) -> Path | None:
    """In GitHub Actions, the report also goes to the job summary."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    append_to_summary(path, markdown + "\n")  # cut to what GitHub takes of a step; stdout has it whole
    return path
