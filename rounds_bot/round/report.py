"""The round report: what happened in one round, as Markdown for the terminal and the job summary."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from pydantic import Field

from rounds_bot.models import Frozen
from rounds_bot.render.markdown import environment, trusted
from rounds_bot.render.step_summary import append_to_summary, appending_to_summary
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
        """Nothing filed, updated or reopened, and no count changed (a round that only counted occurrences it
        held back, deferred or paused is not quiet: the report's first line says how many it counted)."""
        return not (self.new or self.updated or self.regressed or self.occurrences_counted)


MAX_SKIPPED_SHOWN = 20


#: about how many characters of the report are given out at once: whole lines, so a stream that rewrites what
#: it is given line by line (click strips terminal colour codes when stdout is not a terminal) sees each line
#: whole, and few enough writes that each costs nothing next to the text
PIECE_SIZE = 64 * 1024


def render_report(report: RoundReport) -> str:
    """The report whole, for callers that keep it (a test, an issue's text): its pieces joined."""
    return "".join(report_pieces(report))


def report_pieces(report: RoundReport) -> Iterator[str]:
    """The report's Markdown in pieces of whole lines as the template renders it, row by row: a first round's
    report can be megabytes (20,000 new signatures: 6 MB), and it is written out, never held whole. Jinja's
    `Template.generate` yields the output statement by statement ("For very large templates it can be useful
    to not render the whole template at once", Jinja API docs, `Template.generate`); the template keeps its
    tables' rows at its own level for that, since a macro's output is one string."""
    template = environment().get_template("report.md.j2")
    rendered = template.generate(
        r=report,
        trend=trusted(report.trend) if report.trend else None,
        skipped=report.skipped[:MAX_SKIPPED_SHOWN],
        more_skipped=max(len(report.skipped) - MAX_SKIPPED_SHOWN, 0),
    )
    return in_whole_lines(rendered, PIECE_SIZE)


def in_whole_lines(fragments: Iterable[str], size: int, at_once: int = 512) -> Iterator[str]:
    """`fragments` given out again in pieces that each end at a line's end: once `size` characters are
    gathered, at the last line end of the first batch of `at_once` fragments from there on that has one; the
    last piece is what is left, whole lines or not. Joined, the pieces are the fragments joined."""
    source = iter(fragments)
    gathered: list[str] = []
    length = 0
    # the template gives a table row as a dozen fragments: joined a batch at a time, not looked at one by one
    while batch := list(islice(source, at_once)):
        text = "".join(batch)
        gathered.append(text)
        length += len(text)
        if length < size:
            continue
        # the first batch with a line end once `size` is reached ends the piece: only it is looked in
        end = text.rfind("\n") + 1
        if end == 0:
            continue
        gathered[-1] = text[:end]
        yield "".join(gathered)
        rest = text[end:]
        gathered, length = ([rest], len(rest)) if rest else ([], 0)
    last = "".join(gathered)
    if last:
        yield last


def append_to_step_summary(markdown: str) -> Path | None:
    """In GitHub Actions, the report also goes to the job summary."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    append_to_summary(path, markdown + "\n")  # cut to what GitHub takes of a step; stdout has it whole
    return path


@contextmanager
def step_summary_pieces() -> Iterator[Callable[[str], None]]:
    """In GitHub Actions, where the report's pieces go to the job summary as they are written to stdout:
    appended, cut to what GitHub takes of a step, when the block ends (as `append_to_step_summary` appends the
    pieces joined). Outside Actions, nowhere."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        yield _nowhere
        return
    with appending_to_summary(Path(target)) as addition:
        yield addition.add


def _nowhere(piece: str) -> None:
    """Outside Actions a piece of the report goes to stdout alone."""
