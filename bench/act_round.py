"""What acting on a first round's new signatures costs: the CPU seconds of `round/run.py:act` and of its
steps (planning, the diagnosis step's triage, evidence, marker memory, filing), and of the commit that
writes what the round learned, beside the whole round's,
and the peak resident memory before and after acting, for one first round over a synthetic OTLP/JSON file
(`bench/scale_data.py`) with the dry-run tracker and diagnosis off.

    python bench/act_round.py --records 100000 --bugs 2000
    python bench/act_round.py --file errors.jsonl          # an existing file (times within the last week)

The steps are timed in this process with `time.process_time` (not profiled: the figures are the round's own
CPU time), so two versions measured one after the other on one machine compare; the machine's other work
shows in the wall-clock time only. The peak resident memory is the process's high-water mark (it never falls),
read as the act step starts and as it ends. With `--profile`, act also runs under cProfile and its costliest
functions are listed (the CPU seconds then include the profiler's).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import os
import pstats
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_data import write_otlp

#: the steps `act` calls, as `round/run.py` imports them, in the order they run
STEPS = (
    "gather_candidates",
    "look_up_issues",
    "plan_issues",
    "run_diagnosis_step",
    "gather_evidence",
    "marker_memory",
    "file_issues",
)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Collections:
    """CPU seconds the cyclic garbage collector spent, by generation (`gc.callbacks`)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.runs = [0, 0, 0]
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds[info["generation"]] += time.process_time() - self._started
            self.runs[info["generation"]] += 1

    def total(self) -> float:
        return sum(self.seconds)


class Timings:
    """CPU seconds per wrapped function, and the peak memory around the outermost one."""

    def __init__(self, collections: Collections) -> None:
        self.seconds: dict[str, float] = {}
        self.peaks: dict[str, float] = {}
        self.collections = collections
        self.collecting: dict[str, float] = {}

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.peaks.setdefault(f"{name} start", peak_mb())
            started, collecting = time.process_time(), self.collections.total()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - started
                spent = self.collections.total() - collecting
                self.collecting[name] = self.collecting.get(name, 0.0) + spent
                self.peaks[f"{name} end"] = peak_mb()

        return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--file", type=Path, help="an OTLP/JSON file to read instead of a synthetic one")
    parser.add_argument("--profile", action="store_true", help="also profile act (its CPU time grows)")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="act-round-"))
    data = options.file or write_otlp(folder / "errors.jsonl", options.records, options.bugs)
    os.environ.update(
        ROUNDS_SOURCE=f"otlp-file:{data}",
        SIGNATURES_DB_PATH=str(folder / "signatures.db"),
        ROUNDS_OUTPUT_DIR=str(folder / "drafts"),
        ROUNDS_TRACKER="dry-run",
        ROUNDS_DIAGNOSER="off",
        ROUNDS_CURSOR_OVERLAP_SECONDS="3600",
        ERROR_LOOKBACK_MINUTES="10080",
    )
    from rounds_bot.cli import main as rounds
    from rounds_bot.round import run

    collections = Collections()
    timings = Timings(collections)
    for name in STEPS:
        setattr(run, name, timings.wrap(name, getattr(run, name)))
    profile = cProfile.Profile() if options.profile else None
    act = profile_of(profile, run.act) if profile is not None else run.act
    run.act = timings.wrap("act", act)  # type: ignore[method-assign]
    run.commit = timings.wrap("commit", run.commit)  # type: ignore[attr-defined]
    started, wall = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the round's own report
        rounds(["run"], standalone_mode=False)
    round_cpu, round_wall = time.process_time() - started, time.perf_counter() - wall
    drafts = sum(1 for _ in (folder / "drafts").glob("*.md"))
    print(f"{data.name}: {drafts:,} drafts written")
    print(f"{'step':24} {'CPU s':>8} {'of round':>9} {'of it, collector':>17}")
    for name in ("act", *STEPS):
        seconds = timings.seconds.get(name, 0.0)
        label = name if name == "act" else f"  {name}"
        collecting = timings.collecting.get(name, 0.0)
        print(f"{label:24} {seconds:8.2f} {seconds / round_cpu:8.1%} {collecting:17.2f}")
    seconds, collecting = timings.seconds.get("commit", 0.0), timings.collecting.get("commit", 0.0)
    print(f"{'commit':24} {seconds:8.2f} {seconds / round_cpu:8.1%} {collecting:17.2f}")
    print(f"{'round':24} {round_cpu:8.2f} {'':>9} {collections.total():17.2f} ({round_wall:.1f} s wall)")
    print(
        f"peak RSS: {timings.peaks.get('act start', 0):.0f} MB as act starts, "
        f"{timings.peaks.get('act end', 0):.0f} MB as it ends, {peak_mb():.0f} MB after the round"
    )
    if profile is not None:
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).sort_stats("tottime")
        stats.print_stats(25)
        if os.environ.get("ACT_CUMULATIVE"):
            stats.sort_stats("cumulative").print_stats(int(os.environ["ACT_CUMULATIVE"]))
        if os.environ.get("ACT_CALLERS"):
            stats.print_callers(os.environ["ACT_CALLERS"])
        print(out.getvalue())


def profile_of(profile: cProfile.Profile, function: Callable[..., Any]) -> Callable[..., Any]:
    def profiled(*args: Any, **kwargs: Any) -> Any:
        return profile.runcall(function, *args, **kwargs)

    return profiled


if __name__ == "__main__":
    main()
