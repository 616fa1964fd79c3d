"""What a round's path costs per record outside redaction and grouping, step by step, in CPU seconds, and the
process's peak memory after each step:

- read: the source reads the file lean, builds an event for each error record and keeps it in the spill;
- not counted: the grouping step's pass that sorts the events into counted and to group (ids asked about in
  batches, here of an empty database);
- a pass: one read of the events to group, in order, as the grouping engine reads them (twice a round);
- tally: each event tallied, its occurrence kept and its trace noted, as the grouping step does once it has
  an assignment (one signature per service here; the pass over the events is included).

    python bench/per_record.py                          # 100k records, 2k distinct bugs
    python bench/per_record.py --records 1000000        # about 1.5 GB of OTLP/JSON, in a temporary folder
    python bench/per_record.py --data FILE              # an OTLP/JSON file already written

Beside each step, the floor: every line of the file parsed with orjson (the least any reading costs).
Run it on two trees (PYTHONPATH) to compare them; CPU time, so a busy machine blurs it less than wall time.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from rounds_bot.models import Assignment, ErrorEvent
from rounds_bot.round.cascade import TraceErrors
from rounds_bot.round.counted import Counted
from rounds_bot.round.occurrences import _not_counted
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tally import Tally

sys.path.insert(0, str(Path(__file__).parent))
from scale_data import write_otlp

EVERYTHING = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def step(name: str, work: Callable[[], Any], floor: float, figures: list[str]) -> Any:
    started = time.process_time()
    result = work()
    seconds = time.process_time() - started
    print(
        f"{name:12s} {seconds:8.2f} s CPU  {seconds / floor:6.1f}x floor  peak {peak_mb():6.0f} MB",
        flush=True,
    )
    figures.append(f"{name.replace(' ', '_')}_cpu_s={seconds:.2f}")
    return result


def parse_floor(path: Path) -> float:
    started = time.process_time()
    with path.open("rb") as lines:
        for line in lines:
            orjson.loads(line)
    return time.process_time() - started


def tally_all(events: list[ErrorEvent] | Any) -> int:
    assignment = Assignment(
        signature_id="sig",
        tier="new",
        fingerprint_hash="h",
        fingerprint_version="v",
        explanation="",
        title="t",
        normalized_message="m",
    )
    tallies: dict[str, Tally] = {}
    traces, counted = TraceErrors(), Counted()
    for event in events:
        tally = tallies.get(event.service)
        if tally is None:
            tally = tallies[event.service] = Tally(assignment=assignment)
        tally.add(event, event.count, event.timestamp, event.timestamp)
        counted.append(event.event_id, event.service, event.timestamp)
        traces.add(event, event.service)
    return len(tallies)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--data", type=Path, help="an OTLP/JSON file to read instead of a synthetic one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rounds-per-record-") as folder:
        data = args.data or write_otlp(Path(folder) / "telemetry.jsonl", args.records, args.bugs)
        floor = parse_floor(data)
        print(f"{data}: orjson parse floor {floor:.2f} s CPU", flush=True)
        figures = [f"floor_cpu_s={floor:.2f}"]
        polled = step("read", lambda: OtlpFileSource(data).poll(EVERYTHING), floor, figures)
        counted = step(
            "not counted", lambda: _not_counted(Store.memory(), EVERYTHING, polled), floor, figures
        )
        picked = counted[0]
        step("a pass", lambda: sum(1 for _ in picked), floor, figures)
        step("tally", lambda: tally_all(picked), floor, figures)
        print(f"{len(polled.events)} events, {len(picked)} to group")
        print(" ".join([*figures, f"events={len(polled.events)}", f"peak_mb={peak_mb():.0f}"]))


if __name__ == "__main__":
    main()
