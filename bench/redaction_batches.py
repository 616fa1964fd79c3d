"""What a round's messages and stack traces cost to redact one at a time (`text.redact_into`) and a batch at a
time (`text_proof.TextProof`: a few hundred texts scanned in one call), CPU seconds, in one process.

The events of a synthetic OTLP/JSON file (`bench/scale_data.py`), or of `--file`, are read as a first round
reads them; their messages and traces are redacted in the boundary's batches (1,000 events), both ways, twice
each, alternated (the memory of frames emptied before each pass), and the two ways' texts and counts are
checked equal.

    python bench/redaction_batches.py [--records 100000] [--bugs 2000] [--file PATH]
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_data import file_arguments, write_otlp

from rounds_bot.redact.boundary import BOUNDARY_BATCH
from rounds_bot.redact.engine import forget_remembered_lines
from rounds_bot.redact.event import MESSAGE_CHARS, STACKTRACE_CHARS
from rounds_bot.redact.text import cut, redact_into, redact_text
from rounds_bot.redact.text_proof import TextProof
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource

Batch = list[str]


def batches(path: Path) -> list[Batch]:
    """The messages and traces of the file's events, cut to their caps, a boundary's batch at a time."""
    now = datetime.now(UTC) + timedelta(days=1)
    window = Window(start=now - timedelta(days=30), end=now)
    polled = OtlpFileSource(path).poll_new(window, frozenset(), lambda ids: set())  # nothing counted yet
    events = list(polled.events)
    made: list[Batch] = []
    for start in range(0, len(events), BOUNDARY_BATCH):
        texts: Batch = []
        for event in events[start : start + BOUNDARY_BATCH]:
            texts.append(cut(event.message, MESSAGE_CHARS))
            if event.stacktrace:
                texts.append(cut(event.stacktrace, STACKTRACE_CHARS))
        made.append(list(dict.fromkeys(texts)))  # a text is redacted once (`Redactor.text` remembers it)
    return made


def alone(texts: Batch, counts: Counter[str]) -> list[str]:
    return [redact_into(text, counts) for text in texts]


def batched(proof: TextProof) -> Callable[[Batch, Counter[str]], list[str]]:
    def redact(texts: Batch, counts: Counter[str]) -> list[str]:
        proof.prove(texts)
        return [proof.redact_into(text, counts) for text in texts]

    return redact


def timed(
    way: Callable[[Batch, Counter[str]], list[str]], made: list[Batch]
) -> tuple[float, list[str], Counter[str]]:
    forget_remembered_lines()
    gc.collect()
    counts: Counter[str] = Counter()
    done: list[str] = []
    started = time.process_time()
    for texts in made:
        done += way(texts, counts)
    return time.process_time() - started, done, counts


def main() -> None:
    parser = file_arguments(__doc__)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        path = args.file or write_otlp(Path(work) / "data.jsonl", args.records, args.bugs)
        made = batches(path)
    proof = TextProof()
    redact_text("ready")
    proof.prove(["ready"])  # the engine and the joined scan's databases are built before anything is timed
    texts = sum(len(each) for each in made)
    megabytes = sum(len(text) for each in made for text in each) / 1e6
    seconds: dict[str, list[float]] = {"one at a time": [], "a batch at a time": []}
    results = []
    for _ in range(2):
        for name, way in (("one at a time", alone), ("a batch at a time", batched(proof))):
            spent, done, counts = timed(way, made)
            seconds[name].append(spent)
            results.append((done, counts))
    assert all(result == results[0] for result in results), "the two ways redact differently"
    print(f"{texts:,} messages and traces, {megabytes:.1f} MB, in {len(made):,} batches")
    for name, runs_of in seconds.items():
        runs = " ".join(f"{each:.2f}" for each in runs_of)
        print(f"{name:>18}: {runs} s CPU (best {megabytes / min(runs_of):.0f} MB/s)")
    ratio = min(seconds["a batch at a time"]) / min(seconds["one at a time"])
    print(f"a batch at a time / one at a time: {ratio:.2f} (the same texts and counts)")


if __name__ == "__main__":
    main()
