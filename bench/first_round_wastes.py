"""Two per-record costs of a first round, each timed alone, the slow way and the fast way alternated:

- grouping over an empty database (`GroupingEngine.place_each`, as a round places the errors of the synthetic
  file `bench/scale.py` reads), its look-ups asking the database, and answered without a query
  (`Store.grouping_lookup(unchanged_while_used=True)`);
- triage over timelines of that many occurrences, read back as `Occurrence`s, and read through the
  timeline's figures (`tally.Timeline`).

    python bench/first_round_wastes.py [--records 100000] [--bugs 2000] [--repeats 2]

Prints the CPU time of each way per repeat and the ratio of the best times.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tally import Timeline
from rounds_bot.triage import SignatureActivity, TriagePolicy, triage

sys.path.insert(0, str(Path(__file__).parent))
from scale_data import write_otlp


def placed(engine: GroupingEngine, events: list[ErrorEvent]) -> int:
    kept: dict[str, Assignment] = {}
    for placement in engine.place_each(events, kept):
        if placement.assignment is not None:
            kept.setdefault(placement.signature_id, placement.assignment)
    return len(kept)


def cpu(work: Callable[[], object]) -> float:
    gc.collect()
    started = time.process_time()
    work()
    return time.process_time() - started


def grouping(folder: Path, records: int, bugs: int, repeats: int) -> None:
    end = datetime.now(UTC) - timedelta(minutes=1)
    path = write_otlp(folder / "errors.jsonl", records, bugs, end)
    window = Window(start=end - timedelta(hours=2), end=end + timedelta(minutes=1))
    events = list(OtlpFileSource(path).poll(window).events)
    times: dict[bool, list[float]] = {False: [], True: []}
    for repeat in range(repeats):
        for shortcut in (False, True):
            store = Store.open(folder / f"signatures-{repeat}-{shortcut}.db")
            engine = GroupingEngine(lookup=store.grouping_lookup(unchanged_while_used=shortcut))
            times[shortcut].append(cpu(lambda engine=engine: placed(engine, events)))
            store.close()
    report(f"place_each, {len(events):,} errors", times)


def timelines(records: int, bugs: int) -> list[Timeline]:
    rng = random.Random(26)
    start = datetime(2026, 3, 1, tzinfo=UTC)
    made = [Timeline() for _ in range(bugs)]
    for _ in range(records):
        made[rng.randrange(bugs)].note(start + timedelta(microseconds=rng.randrange(3_600_000_000)), 1, False)
    return made


def triaging(records: int, bugs: int, repeats: int) -> None:
    made = timelines(records, bugs)
    now = datetime(2026, 3, 1, 2, tzinfo=UTC)

    def listed() -> object:
        acts = (SignatureActivity(signature_id=str(i), occurrences=list(t)) for i, t in enumerate(made))
        return triage(acts, now=now, code_revision="r", policy=TriagePolicy())

    def figured() -> object:
        acts = (SignatureActivity(signature_id=str(i), figures=t) for i, t in enumerate(made))
        return triage(acts, now=now, code_revision="r", policy=TriagePolicy())

    assert listed() == figured()
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats):
        times[False].append(cpu(listed))
        times[True].append(cpu(figured))
    report(f"triage, {records:,} occurrences of {bugs:,} signatures", times)


def report(what: str, times: dict[bool, list[float]]) -> None:
    slow, fast = min(times[False]), min(times[True])
    shown = ", ".join(f"{t:.3f}" for t in times[False]), ", ".join(f"{t:.3f}" for t in times[True])
    print(f"{what}: slow {shown[0]} s, fast {shown[1]} s CPU; best fast/slow = {fast / slow:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    triaging(args.records, args.bugs, args.repeats + 1)
    with tempfile.TemporaryDirectory() as folder:
        grouping(Path(folder), args.records, args.bugs, args.repeats)


if __name__ == "__main__":
    main()
