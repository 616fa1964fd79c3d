"""One eval run, end to end: the rows, the table, and the files under the output folder.

<out>/table.md          the case counts and the table, as printed
<out>/results.jsonl     one line per case and row: its scores, or its problem
<out>/recordings/...    what a live run answered, to replay later
<out>/empty-checkout/   the (empty) checkout of cases without sources
<out>/sources/<case>/   the files of cases whose sources are in the case folder's store
<out>/fixes/<row>/<case>/  with `fix`: the scratch copy each recorded fix was tested in
<out>/proposals/<row>/<case>/  with `fix` and a live row: the scratch repository its fix was made in
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.eval.baseline import ORIGIN as BASELINE
from rounds_bot.eval.cases import LoadedCase
from rounds_bot.eval.recordings import load_recordings
from rounds_bot.eval.runner import CaseRun, Eval
from rounds_bot.eval.table import render_table
from rounds_bot.fixing.editor import FixEditor


def run_eval(
    cases: list[LoadedCase],
    output: Path,
    *,
    recordings: Path | None = None,
    diagnoser: Diagnoser | None = None,
    live_label: str | None = None,
    max_cost_usd: float = 0.0,
    fix: bool = False,
    fixer: FixEditor | None = None,
) -> str:
    """Run every row over `cases`, write the results under `output`, and return the printed text. With
    `fix`, recorded fixes are tested; with a `fixer` too, the live row proposes one where it can be tested."""
    output.mkdir(parents=True, exist_ok=True)
    runner = Eval(cases, output, fix=fix)
    rows: dict[str, list[CaseRun]] = {BASELINE: runner.baseline()}
    for label, found in load_recordings(recordings).items():
        rows[label] = runner.replay(label, found)
    if diagnoser is not None:
        label = live_label or diagnoser.name
        rows[label] = runner.live(
            label, diagnoser, max_cost_usd=max_cost_usd, record=output / "recordings", fixer=fixer
        )
    text = case_counts(runner.cases) + "\n" + render_table(rows, fix_asked=fix)
    (output / "table.md").write_text(text, encoding="utf-8")
    with (output / "results.jsonl").open("w", encoding="utf-8") as handle:
        for runs in rows.values():
            for run in runs:
                handle.write(run.model_dump_json() + "\n")
    return text


def case_counts(cases: list[LoadedCase]) -> str:
    """`N cases: by kind ...; by source ...; with sources N`."""
    kinds = Counter(loaded.case.kind if loaded.case else "broken" for loaded in cases)
    sources = Counter(loaded.case.origin.dataset if loaded.case else "broken" for loaded in cases)
    with_sources = sum(not loaded.sources_missing for loaded in cases)
    return (
        f"{len(cases)} cases; by kind: {_counts(kinds)}; by source: {_counts(sources)}; "
        f"with their sources (or needing none): {with_sources}\n"
    )


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(counter.items())) or "none"
