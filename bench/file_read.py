"""Measures the first step of a first round over an OTLP/JSON file: reading it into events (lean decoding,
building each error's event, writing them to the round's spill) and reading the spill back.

Printed, in CPU seconds of this process beside the parse floor measured in the same run (every line read and
parsed with orjson, nothing else): the read, with and without the spill (events kept in a list instead, to
show what writing them costs), one pass over the spill, and its key pass (`EventSpill.keys`); then the
spill's bytes per event on disk and the process's peak RSS after the spilled read and its passes. Nothing is
counted before (an empty database), as in a first round.

    python bench/file_read.py [--records 100000] [--bugs 2000] [--file PATH]
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_data import write_otlp

from rounds_bot.round.run import ROUND_GC_THRESHOLDS
from rounds_bot.sources import otlp_reading
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.spill import EventSpill, keys_of

T = TypeVar("T")
EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))


def cpu(step: Callable[[], T]) -> tuple[float, T]:
    started = time.process_time()
    result = step()
    return time.process_time() - started, result


def floor(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for line in handle if orjson.loads(line))


def read(path: Path) -> PollResult:
    return OtlpFileSource(path).poll_new(EVERYTHING, frozenset(), lambda ids: set())


class _Listed(list):  # type: ignore[type-arg]
    """The events in a list: the read without the spill."""

    newest = None


def read_without_spill(path: Path) -> PollResult:
    spill = vars(otlp_reading)["EventSpill"]
    setattr(otlp_reading, "EventSpill", _Listed)  # noqa: B010 (a module's name, replaced for one read)
    try:
        return read(path)
    finally:
        setattr(otlp_reading, "EventSpill", spill)  # noqa: B010


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--file", type=Path, help="an OTLP/JSON file to read instead of a generated one")
    parser.add_argument(
        "--no-list", action="store_true", help="skip the read into a list (it holds every event in memory)"
    )
    args = parser.parse_args()
    gc.set_threshold(*ROUND_GC_THRESHOLDS)  # as a round reads
    with tempfile.TemporaryDirectory() as folder:
        path = args.file or write_otlp(Path(folder) / "otlp.jsonl", args.records, args.bugs)
        floor_s, _ = cpu(lambda: floor(path))
        read_s, polled = cpu(lambda: read(path))
        assert isinstance(polled, PollResult)
        events = polled.events
        assert isinstance(events, EventSpill)
        pass_s, count = cpu(lambda: sum(1 for _ in events))
        keys_s, _ = cpu(lambda: sum(1 for _ in keys_of(events)))
        spilled = events.bytes_on_disk
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        listed_s = 0.0 if args.no_list else cpu(lambda: read_without_spill(path))[0]
    print(f"{path}: {count} events")
    print(f"parse floor (orjson, every line)   {floor_s:6.2f} s CPU")
    if not args.no_list:
        print(f"read, events in a list             {listed_s:6.2f} s CPU  {listed_s / floor_s:5.1f}x floor")
    print(f"read, events spilled               {read_s:6.2f} s CPU  {read_s / floor_s:5.1f}x floor")
    print(f"one pass over the spill            {pass_s:6.2f} s CPU  {pass_s / floor_s:5.1f}x floor")
    print(f"key pass over the spill            {keys_s:6.2f} s CPU")
    print(f"spill on disk                      {spilled / max(count, 1):6.0f} bytes per event")
    print(f"peak RSS of the spilled read       {peak:6.0f} MB")


if __name__ == "__main__":
    main()
