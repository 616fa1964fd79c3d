"""The grouping step of a first round at scale: `GroupingEngine.assign_all` over the errors of the synthetic
OTLP/JSON file `bench/scale.py` reads (`bench/scale_data.py`), on an empty signature database looked up as a
round looks it up (written to by no one meanwhile: `Store.grouping_lookup(unchanged_while_used=True)`).

    python bench/grouping_round.py [--records 100000] [--bugs 2000] [--profile | --memory] [--placements]

Prints the CPU time of the assignments (and with `--profile`, the profiled time of `assign_each` and its
five costliest callees), the errors per second, how many traces were read and how many were read with their
message cut out (and, placing, how many were placed by the hashes kept for their text with the message cut
out, `grouping/cut_digests.py`), and the bytes the engine's memos hold at the end (`grouping/memo.py`) beside
their budget;
with `--memory`, the bytes Python allocated (tracemalloc) at the peak of the assignments and still held after
them, above what was held before (slower: the CPU time is then not comparable). With `--placements`, the
events are placed as a round places them (`place_each`: the full assignment only for the first event of
each signature), and that is what is timed.
The events are the source's, not redacted: grouping reads them the same way.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rounds_bot.grouping import components, exception_chain, frames
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.memo import ENGINE_BUDGET, MB, BoundedMemo
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from scale_data import write_otlp


def memo_bytes(engine: GroupingEngine) -> int:
    """The bytes the engine's memos and the memos all engines share hold, as they estimate them."""
    candidates = engine._candidates
    holders = (candidates, candidates._traces, candidates.cut_digests, engine._explainer, engine._shapes)
    memos = [value for holder in holders for value in vars(holder).values() if isinstance(value, BoundedMemo)]
    memos += [exception_chain._STACKS, components._STACK_LINES, frames._COMPONENTS, frames._MODULE_PATHS]
    return sum(memo.held for memo in memos)


def assign(engine: GroupingEngine, events: list[ErrorEvent], memory: bool, placements: bool = False) -> int:
    """The assignments of all events, as one batch; measuring memory, only the first per signature is kept
    (what a round keeps), so what is still held after them is the engine's. With `placements`, the events
    are placed as a round places them (`place_each`: an assignment only for a signature not kept yet)."""
    if placements:
        kept: dict[str, Assignment] = {}
        count = 0
        for placed in engine.place_each(events, kept):
            if placed.assignment is not None:
                kept.setdefault(placed.signature_id, placed.assignment)
            count += 1
        return count
    if not memory:
        return len(engine.assign_all(events))
    firsts: dict[str, Assignment] = {}
    count = 0
    for assignment in engine.assign_each(events):
        firsts.setdefault(assignment.signature_id, assignment)
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument(
        "--placements", action="store_true", help="place the events as a round does (`place_each`)"
    )
    args = parser.parse_args()
    end = datetime.now(UTC) - timedelta(minutes=1)
    with tempfile.TemporaryDirectory() as folder:
        path = write_otlp(Path(folder) / "errors.jsonl", args.records, args.bugs, end)
        window = Window(start=end - timedelta(hours=2), end=end + timedelta(minutes=1))
        events = list(OtlpFileSource(path).poll(window).events)
        store = Store.open(Path(folder) / "signatures.db")
        engine = GroupingEngine(lookup=store.grouping_lookup(unchanged_while_used=True))
        gc.collect()
        if args.memory:
            tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        profile = cProfile.Profile() if args.profile else None
        started = time.process_time()
        if profile is not None:
            profile.enable()
        assigned = assign(engine, events, args.memory, args.placements)
        if profile is not None:
            profile.disable()
        spent = time.process_time() - started
        held, peak = tracemalloc.get_traced_memory()
        traces = engine._candidates._traces
        print(f"{len(events):,} errors ({args.records:,} records, {args.bugs:,} bugs), {assigned:,} assigned")
        timed = "place_each" if args.placements else "assign_all"
        print(
            f"{timed}: {spent:.2f} s CPU{' (profiled)' if profile else ''},"
            f" {len(events) / spent:,.0f} errors/s"
        )
        print(
            f"signatures: {len(engine.signature_ids()):,}; trace texts parsed {traces.parses:,}, traces given"
            f" from a text with their message cut out {traces.from_cuts:,}, traces placed by the hashes kept"
            f" for their text with the message cut out {engine._candidates.cut_digests.hits:,}"
        )
        print(
            f"memos hold {memo_bytes(engine) / MB:.1f} MB"
            f" (the budget of all the engine's memos: {ENGINE_BUDGET / MB:.0f} MB)"
        )
        if args.memory:
            print(
                f"allocated during the assignments: {(peak - before) / MB:.1f} MB at the peak,"
                f" {(held - before) / MB:.1f} MB still held after them (the first assignment of each"
                " signature kept, as a round keeps it)"
            )
        if profile is not None:
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats("grouping", 12)
            print(out.getvalue())


if __name__ == "__main__":
    main()
