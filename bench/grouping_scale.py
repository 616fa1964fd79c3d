"""The parts of `bench/grouping.py` about scale: many known signatures, and the command line.

- tier 3 with many known signatures: adding them one by one to the TF-IDF index, loading their
  saved states (as the database keeps them: JSON text) into a fresh engine, and the time to find
  the nearest signatures (p50/p95/p99);
- quiet rounds over a signature database of 1,000 / 10,000 / 100,000 signatures: building it,
  its size per signature, and a round's grouping step when every event is already known (the
  same number of events of the same number of known problems, drawn from all the signatures);
- `rounds group` end to end against the same engine in this process, and `rounds --help`.

Run through `bench/grouping.py` (its `--skip-*` flags select the parts).
"""

from __future__ import annotations

import gc
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.similarity import SimilarityIndex
from rounds_bot.grouping.state import states_from_json
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import ErrorEvent
from rounds_bot.store import Store

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
#: the `rounds` command of this interpreter's environment (the console script pip installed)
_SCRIPT = Path(sys.executable).with_name("rounds")
ROUNDS = (
    [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-c", "from rounds_bot.cli import main; main()"]
)
SERVICE = "big"
FALLBACK_TYPES = [
    "java.lang.IllegalArgumentException",
    "java.lang.IllegalStateException",
    "java.lang.NullPointerException",
    "java.io.IOException",
    "java.util.NoSuchElementException",
]


@dataclass(frozen=True)
class Synthetic:
    """A Java exception drawn from a vocabulary: the same seed and number give the same text."""

    error_type: str
    message: str
    trace: str

    def event(self, event_id: str) -> ErrorEvent:
        return ErrorEvent(
            event_id=event_id,
            timestamp=EPOCH,
            service=SERVICE,
            error_type=self.error_type,
            message=self.message,
            stacktrace=self.trace,
        )


def synthetic(number: int, vocabulary: list[str], types: list[str], seed: int = 11) -> Synthetic:
    rng = random.Random(seed * 1_000_003 + number)
    type_ = rng.choice(types)
    message = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 8)))
    lines = [f"{type_}: {message}"]
    for _ in range(rng.randint(3, 7)):
        package = ".".join(rng.choice(vocabulary).lower() for _ in range(2))
        cls = rng.choice(vocabulary).capitalize() + rng.choice(vocabulary).capitalize()
        method = rng.choice(vocabulary).lower() + rng.choice(vocabulary).capitalize()
        lines.append(f"\tat com.acme.{package}.{cls}.{method}({cls}.java:{rng.randint(1, 900)})")
    return Synthetic(type_, message, "\n".join(lines))


def vocabulary_and_types(messages: list[str], traces_types: list[str]) -> tuple[list[str], list[str]]:
    vocabulary = sorted({w for m in messages for w in re.findall(r"[A-Za-z]{3,12}", m)})
    return vocabulary, sorted(set(traces_types)) or FALLBACK_TYPES


def known_states(count: int, vocabulary: list[str], types: list[str]) -> tuple[list[SignatureState], float]:
    """Saved states of `count` distinct signatures of one service, as the engine would save them
    (real fingerprint hashes, a vector weighted by the index), and the seconds spent adding
    their documents to the index one by one (fingerprinting not counted)."""
    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner())
    index = SimilarityIndex()
    documents = []
    for number in range(count):
        candidate = reader.candidate(synthetic(number, vocabulary, types).event(str(number)), None)
        documents.append((candidate, index.counts(reader.terms(candidate))))
    start = time.process_time()
    for number, (_, counts) in enumerate(documents):
        index.add_new(SERVICE, f"sig_{number:016x}", number, counts, with_frames=True)
    added = time.process_time() - start
    states = [
        SignatureState(
            signature_id=f"sig_{number:016x}",
            service=SERVICE,
            seq=number,
            title=candidate.title,
            hashes=list(dict.fromkeys((candidate.fingerprint.hash, *candidate.fingerprint.other_hashes))),
            similarity=index.saved_vector(SERVICE, f"sig_{number:016x}"),
            crash_site=candidate.crash_site,
        )
        for number, (candidate, _) in enumerate(documents)
    ]
    return states, added


def percentile(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


# --- tier 3 at scale -------------------------------------------------------------------------------


def tier3_part(
    states: list[SignatureState], added: float, vocabulary: list[str], types: list[str], queries: int
) -> dict[str, float]:
    signatures = len(states)
    print(f"\n== Tier 3: {signatures:,} known signatures in one service")
    print(f"added them one by one to a TF-IDF index: {added:.1f} s ({added / signatures * 1e6:.0f} µs each)")
    texts = [state.model_dump_json() for state in states]
    start = time.process_time()
    parsed = states_from_json(texts)
    read = time.process_time() - start
    start = time.process_time()
    engine = GroupingEngine(known=parsed)
    loaded = time.process_time() - start
    start = time.process_time()
    engine.assign(synthetic(signatures + 1, vocabulary, types).event("warm"))  # the index settles here
    settled = time.process_time() - start
    size = sum(map(len, texts)) / len(texts)
    total = read + loaded + settled
    print(f"loading their saved states (JSON, {size:.0f} bytes each): read {read:.2f} s, into a fresh engine")
    print(
        f"  {loaded:.2f} s, the first lookup (which builds the index) {settled:.2f} s; in all {total:.2f} s"
    )
    index, lookups, assigns = engine._index, [], []  # the engine's own index: what a round pays for
    for number in range(queries):
        item = synthetic(signatures + 2 + number, vocabulary, types, seed=13)
        terms = engine._candidates.terms(engine._candidates.candidate(item.event("t"), None))
        start = time.perf_counter()
        index.nearest(SERVICE, index.counts(terms), engine.config.related_threshold)
        lookups.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        engine.assign(item.event(f"q{number}"))
        assigns.append((time.perf_counter() - start) * 1000)
    print(f"{'':<26} {'p50':>8} {'p95':>8} {'p99':>8}  (ms)")
    for label, times in (("lookup (weigh + find)", lookups), ("whole assign() of a trace", assigns)):
        print(f"{label:<26} " + " ".join(f"{percentile(times, q):8.2f}" for q in (50, 95, 99)))
    return {"load_s": read + loaded + settled, "tier3_p95_ms": percentile(lookups, 95)}


# --- quiet rounds over a database ----------------------------------------------------------------


def quiet_round_part(
    states: list[SignatureState], vocabulary: list[str], types: list[str], sizes: list[int], events: int
) -> dict[str, float]:
    problems = min(200, *sizes)
    print(f"\n== Quiet rounds: {events:,} events of {problems} known problems; N signatures in the database")
    print("   then one new error in that service: its tier-3 lookup reads the service's N vectors")
    head = f"{'N':>8} {'build db':>9} {'KB/sig':>7} {'round CPU':>10} {'per event':>10} {'loaded':>7}"
    print(f"{head} {'new error':>10}")
    results: dict[str, float] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "rounds.db"
            built = _build_database(path, states[:size])
            rng = random.Random(size)
            seen = rng.sample(range(size), problems)
            wanted = [rng.choice(seen) for _ in range(events)]
            batch = [synthetic(n, vocabulary, types).event(f"e{i}") for i, n in enumerate(wanted)]
            store = Store.open(path)
            start = time.process_time()
            engine = GroupingEngine(lookup=store.grouping_lookup())
            tiers = {engine.assign(event).tier for event in batch}
            spent = time.process_time() - start
            loaded = len(engine.signature_ids())
            start = time.process_time()
            engine.assign(synthetic(size + 7, vocabulary, types, seed=17).event("new"))
            new_error = time.process_time() - start
            store.close()
            per_signature = path.stat().st_size / size / 1024
        assert tiers == {"fingerprint"}, tiers
        round_ms, per_event = spent * 1000, spent / events * 1e6
        row = f"{size:8,} {built:8.1f}s {per_signature:7.2f} {round_ms:8.0f}ms {per_event:8.0f}µs {loaded:7,}"
        print(f"{row} {new_error:9.2f}s")
        results[f"quiet_round_ms_{size // 1000}k"] = spent * 1000
        results[f"new_error_s_{size // 1000}k"] = new_error
    return results


def _build_database(path: Path, states: list[SignatureState]) -> float:
    from rounds_bot.signature import Signature

    store = Store.open(path)
    start = time.perf_counter()
    with store.transaction():
        for state in states:
            sample = ErrorEvent(event_id=state.signature_id, timestamp=EPOCH, service=SERVICE)
            store.save(
                Signature(
                    id=state.signature_id,
                    service=SERVICE,
                    title=state.title,
                    representative=sample,
                    grouping_state=state,
                    first_seen=EPOCH,
                    last_seen=EPOCH,
                    total_count=1,
                )
            )
    built = time.perf_counter() - start
    store.close()
    return built


# --- the command line ----------------------------------------------------------------------------


def cli_part(streams: list[list[str]], repeats: int) -> dict[str, float]:
    """`rounds group` against the engine on each stream of messages (the last is the headline)."""
    ratio = 0.0
    for messages in streams:
        ratio = _cli_against_engine(messages, repeats)
    helps = [_child_cpu([*ROUNDS, "--help"], wall=True) for _ in range(5)]
    print(f"rounds --help: {min(helps):.2f} s wall (best of 5: {', '.join(f'{t:.2f}' for t in helps)})")
    empty = min(_child_cpu([*ROUNDS, "group", "/dev/null"]) for _ in range(3))
    print(f"rounds group on no input (starting Python and importing): {empty:.2f} s CPU")
    return {"cli_ratio": ratio, "help_s": min(helps)}


def _cli_against_engine(messages: list[str], repeats: int) -> float:
    print(f"\n== rounds group end to end: {len(messages):,} JSON lines, against the engine in this process")
    print("   (CPU time: the child's with its startup, the engine's for assign() alone; best of the runs)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps({"service": "stream", "message": m}) + "\n" for m in messages)
        events = [
            ErrorEvent(event_id=str(n), timestamp=EPOCH, service="stream", kind="log", message=m)
            for n, m in enumerate(messages)
        ]
        engine_times, cli_times = [], []
        for _ in range(repeats):
            engine = GroupingEngine()
            gc.collect()  # as in the new process: no collection owed for what was made before
            start = time.process_time()
            for event in events:
                engine.assign(event)
            engine_times.append(time.process_time() - start)
            cli_times.append(_child_cpu([*ROUNDS, "group", str(path)]))
        del events
        cold_times = [_engine_in_a_fresh_process(path) for _ in range(repeats)]
    ours, theirs, cold = min(cli_times), min(engine_times), min(cold_times)
    rows = (
        ("in-process engine", theirs, engine_times),
        ("engine, new process", cold, cold_times),
        ("rounds group", ours, cli_times),
    )
    for label, rate, runs in rows:
        print(f"{label:<20} {len(messages) / rate:10,.0f} lines/s   {', '.join(f'{t:.2f}' for t in runs)} s")
    print(
        f"rounds group takes {ours / theirs:.2f}× the engine's time in this (warm) process, "
        f"{ours / cold:.2f}× its time once in a new process (the same work rounds group does once)"
    )
    return ours / theirs


# The engine once in a new process, as `rounds group` runs it: the events are built from the same file
# first (not counted, and the rows they were read from let go), then assign() over them is timed;
# the CPU seconds are printed.
_COLD_ENGINE = """
import gc, json, sys, time
from datetime import UTC, datetime
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.models import ErrorEvent
epoch = datetime(2024, 1, 1, tzinfo=UTC)
with open(sys.argv[1], encoding="utf-8") as handle:
    rows = [json.loads(line) for line in handle]
events = [ErrorEvent(event_id=str(n), timestamp=epoch, service=row["service"], kind="log",
                     message=row["message"]) for n, row in enumerate(rows)]
del rows
gc.collect()
engine = GroupingEngine()
start = time.process_time()
for event in events:
    engine.assign(event)
print(time.process_time() - start)
"""


def _engine_in_a_fresh_process(path: Path) -> float:
    environment = {"OPENBLAS_NUM_THREADS": "1", **os.environ}  # as `rounds` sets it (cli/app.py)
    done = subprocess.run(
        [sys.executable, "-c", _COLD_ENGINE, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return float(done.stdout.strip())


def _child_cpu(command: list[str], *, wall: bool = False) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed if wall else (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
