"""What the redaction boundary costs an event outside its texts, part by part, in CPU time: the joined proof
of the ids (`Redactor.foresee`, a microsecond figure per id), an event's redaction with its texts already
remembered (names, ids and attributes: what a bug's later records cost), and the round's spill written and
read back (per 1,000 events, as a large round's spill holds them).

The events are those a first round reads from a synthetic OTLP/JSON file (`bench/scale_data.py`) or from
`--file`, built once before anything is timed; each figure is the best of three passes.

    python bench/boundary_parts.py [--records 100000] [--bugs 2000] [--file PATH]

CPU seconds of this process: other work on a shared machine does not count. Compare runs of two trees
made back to back.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_data import file_arguments, write_otlp

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact_poll
from rounds_bot.redact import event as event_module
from rounds_bot.redact.boundary import BOUNDARY_BATCH
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.spill import EventSpill

#: ids an event holds that `foresee` proves (event, trace, span; parent span and group id when given)
_IDS = ("event_id", "trace_id", "span_id", "parent_span_id", "source_group_id")


def best(step: Callable[[], object]) -> float:
    """The least CPU seconds of three runs of `step`."""
    seconds = []
    for _ in range(3):
        started = time.process_time()
        step()
        seconds.append(time.process_time() - started)
    return min(seconds)


def first_poll(path: Path) -> PollResult:
    """What a first round's poll of `path` returns, raw (nothing counted before)."""
    now = datetime.now(UTC) + timedelta(days=1)
    window = Window(start=now - timedelta(days=30), end=now)
    return OtlpFileSource(path).poll_new(window, frozenset(), lambda ids: set())


def main() -> None:
    parser = file_arguments(__doc__)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        polled = first_poll(args.file or write_otlp(Path(work) / "data.jsonl", args.records, args.bugs))
    events: list[ErrorEvent] = list(polled.events)
    safe = list(redact_poll(Redactor(), polled).events)
    gc.freeze()  # the events read are kept throughout; the collector need not walk them
    batches = [events[start : start + BOUNDARY_BATCH] for start in range(0, len(events), BOUNDARY_BATCH)]
    ids = sum(getattr(event, name) is not None for event in events for name in _IDS)

    proof = Redactor()
    proof.identity("0" * 32)  # the engine is built before anything is timed

    def prove_all() -> None:
        for batch in batches:
            proof.foresee(batch)

    proved = best(prove_all)

    # every text remembered (a memory as large as the events' texts): what is left is the rest of an event
    event_module.MEMO_CHARS = sum(len(e.message) + len(e.stacktrace or "") for e in events) * 2
    warm = Redactor()
    for event in events:
        warm.event(event)

    def redact_all() -> None:
        for batch in batches:
            warm.events(batch)  # as the boundary redacts a batch

    redacted = best(redact_all)

    def spilled() -> None:
        spill = EventSpill(in_memory=0)
        for event in safe:
            spill.append(event)
        for _ in spill:
            pass
        spill.close()

    spill_seconds = best(spilled)
    print(f"events: {len(events):,}, ids proven: {ids:,}")
    print(f"id proof:          {proved / ids * 1e6:.2f} us per id (Redactor.foresee)")
    print(f"event, texts kept: {redacted / len(events) * 1e6:.2f} us per event (names, ids, attributes)")
    print(f"spill:             {spill_seconds / len(safe) * 1e6:.2f} ms per 1,000 events written and read")
    print(
        f"proof_us_per_id={proved / ids * 1e6:.2f} event_us={redacted / len(events) * 1e6:.2f} "
        f"spill_ms_per_1000={spill_seconds / len(safe) * 1e6:.2f}"
    )


if __name__ == "__main__":
    main()
