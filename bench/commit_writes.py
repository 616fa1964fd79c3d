"""What a round's commit costs to write what it counted, in CPU seconds, each way beside the other:

- seen: the occurrences counted (random ids, as OpenTelemetry's are), remembered in `seen_events`: converted
  row by row (`Store.mark_seen`) or as the round keeps them, in their stored form (`Store.mark_seen_stored`);
- reach: the occurrences of a first round that reaches back a week (`ERROR_LOOKBACK_MINUTES`), of which
  the commit keeps the last hour's (the next window's overlap): all written, then the older forgotten, or
  only those kept written (`Counted.stored(since=...)`, as the commit does), then the older forgotten;
- saved: the round's signatures: each saved in turn (`Store.save`) or together (`Store.save_many`);
- counts: the occurrences per bucket and the versions first seen of each signature: written a signature at a
  time (`Store.add_occurrences`, `Store.note_versions`) or all together, as the commit does
  (`Store.add_occurrences_of`, `Store.note_versions_of`);
- derived: the incidents and fixes of the round's signatures folded again from the facts a first round logs
  for each (detected, filed), as the commit's `Store.derived_once` does on leaving (one way: run the script
  with each version to compare them);
- lines: a file source's line memory of as many records (at most `line_memory.MAX_RECORDS`, 20 to a line, as
  the synthetic files have them) written as one JSON text in the source's state (the form before) or as rows
  (`Store.set_source_state`), and read back as the next round reads it (every line recalled, and one pass
  over all of them): CPU seconds and the most memory Python held above the start (tracemalloc's peak).

    python bench/commit_writes.py                         # 100k occurrences, 3k signatures
    python bench/commit_writes.py --records 20000 --bugs 2000

The signatures are those a round makes of a synthetic file; each way writes into a fresh database file, in
one transaction, as the commit does. CPU time, best of three, so a busy machine blurs it less.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rounds_bot.clock import bucket_of
from rounds_bot.events import Fact
from rounds_bot.round.counted import Counted
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.signature import Signature
from rounds_bot.sources.line_memory import MAX_RECORDS, LineMemory, Read, digest_of, packed_from_text
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store
from rounds_bot.tracker.dryrun import DryRunTracker

sys.path.insert(0, str(Path(__file__).parent))
from scale_data import write_otlp

#: how far a first round reaches back, and what its commit keeps of that (the next window's overlap)
REACH = timedelta(days=7)
KEPT = timedelta(hours=1)


def best_of_three(folder: Path, name: str, write: Callable[[Store], None]) -> float:
    best = float("inf")
    for attempt in range(3):
        store = Store.open(folder / f"{name}-{attempt}.db")
        started = time.process_time()
        with store.transaction():
            write(store)
        best = min(best, time.process_time() - started)
        store.close()
    return best


def compare(folder: Path, what: str, ways: dict[str, Callable[[Store], None]]) -> None:
    (plain, plain_write), (quick, quick_write) = ways.items()
    before = best_of_three(folder, plain, plain_write)
    after = best_of_three(folder, quick, quick_write)
    print(
        f"{what:6s} {plain:12s} {before:6.3f} s CPU   {quick:12s} {after:6.3f} s CPU   {before / after:5.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=100_000, help="occurrences counted")
    parser.add_argument("--bugs", type=int, default=3_000, help="distinct bugs of the synthetic file")
    args = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="rounds-commit-writes-") as name:
        folder = Path(name)
        data = write_otlp(folder / "telemetry.jsonl", min(args.records, 4 * args.bugs), args.bugs, now)
        rounded = Store.memory()
        run_round(load_settings(), OtlpFileSource(data), DryRunTracker(folder), rounded, now=now)
        signatures: list[Signature] = rounded.signatures()
        counted = Counted()
        ids = random.Random(7)  # random, as a round's are: each id lands on any page of the table
        for n in range(args.records):
            event_id = f"{ids.getrandbits(128):032x}"
            counted.append(event_id, signatures[n % len(signatures)].id, now - timedelta(microseconds=n))
        print(f"{len(counted)} occurrences, {len(signatures)} signatures")
        week = Counted()  # the same ids, spread over the week a first round reaches back
        for n in range(args.records):
            event_id = f"{ids.getrandbits(128):032x}"
            week.append(event_id, signatures[n % len(signatures)].id, now - REACH * (n / args.records))
        forget_before = now - KEPT

        def save_each(store: Store) -> None:
            for signature in signatures:
                store.save(signature)

        compare(
            folder,
            "seen",
            {
                "mark_seen": lambda store: store.mark_seen(counted),
                "stored": lambda store: store.mark_seen_stored(counted.stored()),
            },
        )
        compare(
            folder,
            "reach",
            {
                "all, forget": lambda store: remember(store, week.stored(), forget_before),
                "kept only": lambda store: remember(store, week.stored(since=forget_before), forget_before),
            },
        )
        compare(
            folder,
            "saved",
            {
                "save each": save_each,
                "save_many": lambda store: store.save_many(signatures),
            },
        )
        counts = [
            (
                signature.id,
                {bucket_of(moment): n for moment, n in rounded.occurrence_counts(signature.id).items()},
                {(signature.service, v): signature.first_seen for v in sorted(signature.versions)},
            )
            for signature in signatures
        ]

        def count_each(store: Store) -> None:
            for signature_id, buckets, versions in counts:
                store.add_occurrences(signature_id, buckets)
                store.note_versions(versions)

        def count_together(store: Store) -> None:
            store.add_occurrences_of((signature_id, buckets) for signature_id, buckets, _ in counts)
            store.note_versions_of(versions for _, _, versions in counts)

        compare(folder, "counts", {"each": count_each, "together": count_together})
        refresh(folder, signatures, now)
        lines(folder, min(args.records, MAX_RECORDS), now)
        counted.close()
        week.close()


def remember(store: Store, rows: Iterator[tuple[str | bytes, int]], forget_before: datetime) -> None:
    """The commit's two steps for the occurrences: remember `rows`, then forget those before the moment."""
    store.mark_seen_stored(rows)
    store.forget_seen_before(forget_before)


def refresh(folder: Path, signatures: list[Signature], now: datetime) -> None:
    store = Store.open(folder / "derived.db")
    ids = [signature.id for signature in signatures]
    with store.transaction(), store.derived_once():
        store.save_many(signatures)
        for sid in ids:
            store.append_event(
                Fact.INCIDENT_DETECTED, f"detected:{sid}", signature_id=sid, run_id="r", at=now
            )
            payload = {"issue": f"{sid}.md"}
            store.append_event(
                Fact.ISSUE_FILED, f"filed:{sid}", signature_id=sid, run_id="r", at=now, payload=payload
            )
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        with store.transaction():
            store.refresh_derived_of(ids, ids)
        best = min(best, time.process_time() - started)
    store.close()
    print(f"derived refresh_derived_of {best:6.3f} s CPU   ({len(ids)} signatures, two facts each)")


def lines(folder: Path, records: int, now: datetime) -> None:
    """The line memory of `records` records written and read back as one JSON text and as rows."""
    ids, micros = random.Random(11), int(now.timestamp() * 1e6)
    memory = LineMemory({})
    for line in range(records // 20):
        offered = [(ids.getrandbits(128), micros - line) for _ in range(20)]
        memory.keep(digest_of(f"line {line}".encode()), Read.of(offered, neighbours=line % 2 == 0))
    state = memory.state()
    as_text = {**state, "lines": {digest: _text_form(value) for digest, value in state["lines"].items()}}
    source = "otlp-file:telemetry.jsonl"

    def write_text(store: Store) -> None:  # the form before: the whole state as one JSON text
        row = {"source": source, "state": json.dumps(as_text, sort_keys=True)}
        store.db.table("source_states").upsert(row, pk="source")

    def read_text(store: Store) -> None:
        [text] = store.db.execute("select state from source_states where source = ?", [source]).fetchone()
        loaded = json.loads(text)  # the form before: its lines unpacked from their text
        loaded["lines"] = {digest: packed_from_text(value) for digest, value in loaded["lines"].items()}
        _recall_all(LineMemory.restore(loaded), state["lines"])

    ways = {
        "json text": (write_text, read_text),
        "rows": (
            lambda store: store.set_source_state(source, state),
            lambda store: _recall_all(LineMemory.restore(store.source_state(source)), state["lines"]),
        ),
    }
    for name, (write, read) in ways.items():
        figures = []
        for traced in (False, True):  # CPU without tracemalloc, which slows Python down; then memory
            store = Store.open(folder / f"lines-{name.replace(' ', '-')}-{traced}.db")
            with store.transaction():
                figures.append(_measured(lambda: write(store), traced))  # noqa: B023 (called at once)
            figures.append(_measured(lambda: read(store), traced))  # noqa: B023
            store.close()
        (wrote, _), (read_cpu, _), (_, wrote_peak), (_, read_peak) = figures
        print(
            f"lines  {name:10s} write {wrote:6.3f} s CPU {wrote_peak:6.1f} MB   "
            f"next round's read {read_cpu:6.3f} s CPU {read_peak:6.1f} MB   ({records // 20} lines)"
        )


def _text_form(value: tuple[bool, bytes, bytes]) -> list[Any]:
    neighbours, ids, micros = value
    return [int(neighbours), base64.b64encode(ids).decode(), base64.b64encode(micros).decode()]


def _recall_all(memory: LineMemory, digests: dict[str, Any]) -> None:
    """As a quiet round reads the memory: one pass over every line, then each line recalled."""
    sum(len(read.records) for read in memory.reads())
    for digest in digests:
        memory.recall(digest)


def _measured(work: Callable[[], None], traced: bool) -> tuple[float, float]:
    """CPU seconds of `work`; traced, the most memory Python held above what it held before (MB)."""
    if traced:
        tracemalloc.start()
    started, before = time.process_time(), tracemalloc.get_traced_memory()[0]
    work()
    cpu, peak = time.process_time() - started, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return cpu, (peak - before) / 2**20


if __name__ == "__main__":
    main()
