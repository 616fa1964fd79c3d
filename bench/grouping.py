"""Grouping benchmark: rounds' engine beside Drain3 on labelled data, in one run.

    python bench/grouping.py            # everything (a few minutes)
    python bench/grouping.py --quick    # accuracy and throughput only

Measures, with the engine's default configuration (no per-data-set settings):
- Loghub-2k (message = `Content`, truth = `EventId`): grouping accuracy (GA: a message counts
  only if its predicted group has exactly the members of its true group), pairwise precision and
  recall, per system and macro-averaged, for rounds and for Drain3 with default settings;
- Defects4J failing-test traces: BCubed precision, recall and F1 against the bug that caused them;
- throughput on one stream of messages (default 100,000): each system's messages in turn, with
  fresh values (new digits in the positions the labelled template marks as parameters) each
  time a message comes round again, fed to both engines;
- peak memory grouping 1,000,000 messages of that stream, measured in a child process;
- tier 3 with 100,000 known signatures: the time to find the nearest signatures (p50/p95/p99).

The last line is machine-readable:
GA_macro=<x> pairP_macro=<x> d4j_bcubedF1=<x> speed_ratio_vs_drain3=<x> peak_rss_mb_1m=<x> tier3_p95_ms=<x>
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import logging
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rounds_bot.grouping.engine import GroupingEngine, SignatureState  # noqa: E402
from rounds_bot.grouping.similarity import SimilarityIndex  # noqa: E402
from rounds_bot.grouping.stacktrace import parse_stacktrace  # noqa: E402
from rounds_bot.grouping.terms import document_terms  # noqa: E402
from rounds_bot.models import ErrorEvent  # noqa: E402

if TYPE_CHECKING:
    from drain3 import TemplateMiner

DEFAULT_DATA = ROOT.parent / "shared" / "data"
#: the systems of the shared data, in the order tables list them; others found are added after
SYSTEMS = ("HDFS", "Hadoop", "Spark", "Zookeeper", "BGL", "HPC", "Thunderbird", "OpenStack")
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
#: exception types for synthetic traces when no labelled traces are at hand
FALLBACK_TYPES = [
    "java.lang.IllegalArgumentException",
    "java.lang.IllegalStateException",
    "java.lang.NullPointerException",
    "java.io.IOException",
    "java.util.NoSuchElementException",
]


# --- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledLog:
    system: str
    messages: list[str]
    truth: list[str]
    templates: list[str]


def structured_csv(data: Path, system: str) -> Path | None:
    """`<S>/<S>_2k.log_structured.csv` (or a `_corrected` variant) of a Loghub system."""
    folder = data / "loghub_2k" / system
    found = sorted(folder.glob(f"{system}_2k.log_structured*.csv")) if folder.is_dir() else []
    return found[0] if found else None


def discover_systems(data: Path) -> list[str]:
    """Every labelled system under `loghub_2k/`: the known ones first, in their usual order."""
    root = data / "loghub_2k"
    present = (
        sorted(p.name for p in root.iterdir() if p.is_dir() and structured_csv(data, p.name))
        if root.is_dir()
        else []
    )
    return [s for s in SYSTEMS if s in present] + [s for s in present if s not in SYSTEMS]


def load_loghub(data: Path, system: str) -> LabelledLog:
    path = structured_csv(data, system)
    if path is None:
        raise SystemExit(f"no {system}_2k.log_structured.csv under {data / 'loghub_2k' / system}")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))  # every column is read as a string
    return LabelledLog(
        system,
        [row["Content"] for row in rows],
        [row["EventId"] for row in rows],
        [row["EventTemplate"] for row in rows],
    )


def load_defects4j(data: Path) -> list[dict]:
    path = data / "defects4j_traces" / "traces.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def log_event(message: str, service: str, index: int) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"{service}-{index}", timestamp=EPOCH, service=service, kind="log", message=message
    )


# --- metrics ------------------------------------------------------------------------------------


def grouping_accuracy(predicted: list[str], truth: list[str]) -> float:
    by_predicted: dict[str, set[int]] = defaultdict(set)
    by_truth: dict[str, set[int]] = defaultdict(set)
    for index, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        by_predicted[p].add(index)
        by_truth[t].add(index)
    correct = sum(1 for p, t in zip(predicted, truth, strict=True) if by_predicted[p] == by_truth[t])
    return correct / len(truth)


def pairwise(predicted: list[str], truth: list[str]) -> tuple[float, float]:
    """Precision and recall over all pairs of messages, "same group" being positive."""

    def pairs(counts: Counter) -> float:
        return sum(n * (n - 1) / 2 for n in counts.values())

    both = pairs(Counter(zip(predicted, truth, strict=True)))
    same_predicted, same_truth = pairs(Counter(predicted)), pairs(Counter(truth))
    return (both / same_predicted if same_predicted else 1.0), (both / same_truth if same_truth else 1.0)


def bcubed(predicted: list[str], truth: list[str]) -> tuple[float, float, float]:
    by_predicted: dict[str, set[int]] = defaultdict(set)
    by_truth: dict[str, set[int]] = defaultdict(set)
    for index, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        by_predicted[p].add(index)
        by_truth[t].add(index)
    precision = recall = 0.0
    for p, t in zip(predicted, truth, strict=True):
        shared = len(by_predicted[p] & by_truth[t])
        precision += shared / len(by_predicted[p])
        recall += shared / len(by_truth[t])
    precision, recall = precision / len(truth), recall / len(truth)
    return precision, recall, 2 * precision * recall / (precision + recall)


# --- groupers -----------------------------------------------------------------------------------


def rounds_grouper(service: str) -> Callable[[list[str]], list[str]]:
    def group(messages: list[str]) -> list[str]:
        engine = GroupingEngine()
        return [engine.assign(log_event(m, service, i)).signature_id for i, m in enumerate(messages)]

    return group


def drain3_miner() -> TemplateMiner:
    """Drain3 with its default settings (passing the default config object skips the lookup of
    a `drain3.ini` file, which only prints that it found none)."""
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    return TemplateMiner(config=TemplateMinerConfig())


def drain3_grouper(messages: list[str]) -> list[str]:
    miner = drain3_miner()
    return [str(miner.add_log_message(m)["cluster_id"]) for m in messages]


# --- parts --------------------------------------------------------------------------------------


def loghub_part(data: Path, systems: list[str]) -> dict[str, float]:
    print("\n== Loghub-2k: grouping accuracy (GA) and pairwise precision / recall")
    ours_head = f"{'GA':>7} {'pairP':>7} {'pairR':>7} {'groups':>7}"
    drain_head = f"{'Drain3 GA':>9} {'pairP':>7} {'pairR':>7} {'groups':>7}"
    print(f"{'system':<12} {ours_head} | {drain_head} | {'true':>5}")
    ours_ga, ours_p, drain_ga, drain_p = [], [], [], []
    for system in systems:
        log = load_loghub(data, system)
        ours = rounds_grouper(f"loghub-{system}")(log.messages)
        theirs = drain3_grouper(log.messages)
        ga, (p, r) = grouping_accuracy(ours, log.truth), pairwise(ours, log.truth)
        dga, (dp, dr) = grouping_accuracy(theirs, log.truth), pairwise(theirs, log.truth)
        ours_ga.append(ga), ours_p.append(p), drain_ga.append(dga), drain_p.append(dp)
        print(
            f"{system:<12} {ga:7.3f} {p:7.4f} {r:7.3f} {len(set(ours)):7d} | {dga:9.3f} {dp:7.4f} {dr:7.3f} "
            f"{len(set(theirs)):7d} | {len(set(log.truth)):5d}"
        )
    macro = {
        "ga": statistics.fmean(ours_ga),
        "pair_p": statistics.fmean(ours_p),
        "drain_ga": statistics.fmean(drain_ga),
        "drain_pair_p": statistics.fmean(drain_p),
    }
    print(
        f"{'macro':<12} {macro['ga']:7.3f} {macro['pair_p']:7.4f} {'':7} {'':7} | {macro['drain_ga']:9.3f} "
        f"{macro['drain_pair_p']:7.4f}"
    )
    print(f"GA ratio rounds / Drain3: {macro['ga'] / macro['drain_ga']:.3f}")
    return macro


def defects4j_part(data: Path) -> float:
    print("\n== Defects4J failing-test traces: BCubed against the bug that caused them")
    rows = load_defects4j(data)
    truth = [row["group"] for row in rows]
    engine = GroupingEngine()
    predicted, tiers = [], Counter()
    for row in rows:
        event = ErrorEvent(
            event_id=str(row["id"]),
            timestamp=EPOCH,
            service=row["project"],
            error_type=row["exception_type"],
            message=row["message"] or "",
            stacktrace=row["trace"],
        )
        assignment = engine.assign(event)
        predicted.append(assignment.signature_id)
        tiers[assignment.tier] += 1
    precision, recall, f1 = bcubed(predicted, truth)
    naive = bcubed(naive_mask_and_hash(rows), truth)
    print(f"{'grouper':<22} {'P':>6} {'R':>6} {'F1':>6} {'groups':>7}  (true: {len(set(truth))})")
    groups = len(set(predicted))
    print(f"{'rounds':<22} {precision:6.3f} {recall:6.3f} {f1:6.3f} {groups:7d}  tiers: {dict(tiers)}")
    print(f"{'naive mask-and-hash':<22} {naive[0]:6.3f} {naive[1]:6.3f} {naive[2]:6.3f}")
    return f1


def naive_mask_and_hash(rows: list[dict]) -> list[str]:
    """The baseline: type, digit-masked message and frames without line numbers, hashed."""
    out = []
    for row in rows:
        frames = re.findall(r"^\s*at ([^\s(]+)", row["trace"], flags=re.M)
        out.append(
            str(
                hash(
                    (
                        row["project"],
                        row["exception_type"],
                        re.sub(r"\d+", "0", row["message"] or ""),
                        tuple(frames),
                    )
                )
            )
        )
    return out


# --- the throughput stream ------------------------------------------------------------------------


def value_stream(data: Path, systems: list[str], count: int, seed: int = 7) -> Iterator[str]:
    """`count` messages: the systems' messages in turn; on every later round, the positions
    the labelled template marks as parameters get fresh digits (same templates, new values)."""
    rng = random.Random(seed)
    logs = [load_loghub(data, s) for s in systems]
    corpus = [(m, t) for log in logs for m, t in zip(log.messages, log.templates, strict=True)]
    patterns: dict[str, re.Pattern[str] | None] = {}
    produced = 0
    round_number = 0
    while produced < count:
        for message, template in corpus:
            if produced >= count:
                return
            yield message if round_number == 0 else _fresh_values(message, template, patterns, rng)
            produced += 1
        round_number += 1


def _fresh_values(message: str, template: str, patterns: dict, rng: random.Random) -> str:
    if template not in patterns:
        parts = template.split("<*>")
        try:
            patterns[template] = re.compile("(.*?)".join(re.escape(p) for p in parts) + r"\Z", re.S)
        except re.error:
            patterns[template] = None
    pattern = patterns[template]
    match = pattern.match(message) if pattern is not None and "<*>" in template else None
    if match is None:
        return message
    out, position = [], 0
    for group in range(1, (match.lastindex or 0) + 1):
        start, end = match.span(group)
        out.append(message[position:start])
        out.append(re.sub(r"\d", lambda _: str(rng.randrange(10)), message[start:end]))
        position = end
    out.append(message[position:])
    return "".join(out)


def throughput_part(data: Path, systems: list[str], count: int, repeats: int) -> float:
    print(f"\n== Throughput: one stream of {count:,} messages, the same for both engines")
    print(f"   (CPU time of this process, best of {repeats} alternating runs: other load does not count)")
    messages = list(value_stream(data, systems, count))
    events = [log_event(m, "stream", i) for i, m in enumerate(messages)]
    drain_rates, rounds_rates = [], []
    drain_groups = rounds_groups = 0
    for _ in range(repeats):  # alternate, so a busy moment of the machine hits both alike
        rate, drain_groups = _time_drain3(messages)
        drain_rates.append(rate)
        rate, rounds_groups = _time_rounds(events)
        rounds_rates.append(rate)
    ours, theirs = max(rounds_rates), max(drain_rates)
    print(f"{'engine':<10} {'messages/s':>12} {'groups':>8}   all runs")
    print(f"{'rounds':<10} {ours:12,.0f} {rounds_groups:8d}   {', '.join(f'{r:,.0f}' for r in rounds_rates)}")
    print(f"{'Drain3':<10} {theirs:12,.0f} {drain_groups:8d}   {', '.join(f'{r:,.0f}' for r in drain_rates)}")
    ratio = ours / theirs
    print(f"speed ratio rounds / Drain3: {ratio:.2f}")
    return ratio


def _time_drain3(messages: list[str]) -> tuple[float, int]:
    # Inputs are made before timing and set aside from the garbage collector, for both engines.
    with _frozen_inputs():
        miner = drain3_miner()
        start = time.process_time()
        for message in messages:
            miner.add_log_message(message)
        rate = len(messages) / (time.process_time() - start)
        return rate, len(miner.drain.clusters)


def _time_rounds(events: list[ErrorEvent]) -> tuple[float, int]:
    with _frozen_inputs():
        engine = GroupingEngine()
        start = time.process_time()
        for event in events:
            engine.assign(event)
        rate = len(events) / (time.process_time() - start)
        return rate, len(engine.signature_ids())


@contextmanager
def _frozen_inputs() -> Iterator[None]:
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.collect()


def memory_part(data: Path, systems: list[str], count: int) -> float:
    print(f"\n== Memory: grouping {count:,} messages in a child process")
    command = [
        sys.executable,
        __file__,
        "--data",
        str(data),
        "--memory-child",
        str(count),
        "--systems",
        ",".join(systems),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(result.stderr.strip())
        raise SystemExit(f"the memory child failed with exit code {result.returncode}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    print(
        f"peak RSS {figures['peak_rss_mb']:.0f} MB (before grouping: {figures['baseline_rss_mb']:.0f} MB), "
        f"{figures['signatures']} signatures, {figures['seconds']:.1f} s"
    )
    return figures["peak_rss_mb"]


def memory_child(data: Path, systems: list[str], count: int) -> None:
    baseline = _peak_rss_mb()
    engine = GroupingEngine()
    start = time.perf_counter()
    for index, message in enumerate(value_stream(data, systems, count)):
        engine.assign(log_event(message, "stream", index))
    print(
        json.dumps(
            {
                "peak_rss_mb": _peak_rss_mb(),
                "baseline_rss_mb": baseline,
                "signatures": len(engine.signature_ids()),
                "seconds": time.perf_counter() - start,
            }
        )
    )


def _peak_rss_mb() -> float:
    """Peak resident memory of this process. Linux's VmHWM starts afresh at exec, unlike
    `ru_maxrss`, which a child started from a large parent inherits."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


# --- tier 3 at scale ------------------------------------------------------------------------------


def synthetic_trace(rng: random.Random, vocabulary: list[str], types: list[str]) -> tuple[str, str, str]:
    """A Java-style exception whose type, message words and frames are drawn from a vocabulary."""
    type_ = rng.choice(types)
    message = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 8)))
    lines = [f"{type_}: {message}"]
    for _ in range(rng.randint(3, 7)):
        package = ".".join(rng.choice(vocabulary).lower() for _ in range(2))
        cls = rng.choice(vocabulary).capitalize() + rng.choice(vocabulary).capitalize()
        method = rng.choice(vocabulary).lower() + rng.choice(vocabulary).capitalize()
        lines.append(f"\tat com.acme.{package}.{cls}.{method}({cls}.java:{rng.randint(1, 900)})")
    return type_, message, "\n".join(lines)


def synthetic_states(
    count: int, rng: random.Random, vocabulary: list[str], types: list[str]
) -> list[SignatureState]:
    """Saved states of `count` distinct trace signatures of one service, built the way the
    engine builds them (parse, document terms, incremental TF-IDF), without grouping each."""
    index = SimilarityIndex()
    states = []
    for number in range(count):
        type_, message, trace = synthetic_trace(rng, vocabulary, types)
        terms = document_terms(type_.rsplit(".", 1)[-1], message, parse_stacktrace(trace))
        signature_id = f"sig_{number:016x}"
        index.add_new("big", signature_id, number, index.counts(terms), with_frames=True)
        vector = index.saved_vector("big", signature_id)
        states.append(
            SignatureState(
                signature_id=signature_id,
                service="big",
                seq=number,
                hashes=[f"{number:064x}"],
                similarity=vector,
            )
        )
    return states


def tier3_part(data: Path, systems: list[str], signatures: int, queries: int) -> float:
    print(f"\n== Tier 3: nearest-signature lookups with {signatures:,} known signatures in one service")
    rng = random.Random(11)
    vocabulary = sorted(
        {
            w
            for s in systems[:4]
            for m in load_loghub(data, s).messages
            for w in re.findall(r"[A-Za-z]{3,12}", m)
        }
    )
    traces = data / "defects4j_traces" / "traces.jsonl"
    types = (
        sorted({row["exception_type"] for row in load_defects4j(data)})
        if traces.is_file()
        else FALLBACK_TYPES
    )
    with _frozen_inputs():
        start = time.perf_counter()
        states = synthetic_states(signatures, rng, vocabulary, types)
        built = time.perf_counter() - start
    each = built / signatures * 1e6
    print(f"added {signatures:,} signatures one by one to an index in {built:.1f} s ({each:.0f} µs each)")
    with _frozen_inputs():
        start = time.perf_counter()
        engine = GroupingEngine(known=states)
        print(f"loaded their saved states into a fresh engine in {time.perf_counter() - start:.1f} s")
    del states

    index = engine._index  # the engine's own index: the lookup the round pays for
    lookups, assigns = [], []
    for number in range(queries):
        type_, message, trace = synthetic_trace(rng, vocabulary, types)
        terms = document_terms(type_.rsplit(".", 1)[-1], message, parse_stacktrace(trace))
        start = time.perf_counter()
        index.nearest("big", index.counts(terms), engine.config.related_threshold)
        lookups.append((time.perf_counter() - start) * 1000)
        event = ErrorEvent(
            event_id=f"q{number}",
            timestamp=EPOCH,
            service="big",
            error_type=type_,
            message=message,
            stacktrace=trace,
        )
        start = time.perf_counter()
        engine.assign(event)
        assigns.append((time.perf_counter() - start) * 1000)
    p95 = _percentile(lookups, 95)
    print(f"{'':<26} {'p50':>8} {'p95':>8} {'p99':>8}  (ms)")
    for label, times in (("lookup (weigh + find)", lookups), ("whole assign() of a trace", assigns)):
        p50, p95_, p99 = (_percentile(times, q) for q in (50, 95, 99))
        print(f"{label:<26} {p50:8.2f} {p95_:8.2f} {p99:8.2f}")
    return p95


def _percentile(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


# --- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder holding loghub_2k/ and defects4j_traces/"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip the 1M-message memory run and the 100k-signature tier-3 run",
    )
    parser.add_argument(
        "--systems", help="comma-separated Loghub systems (default: every one under loghub_2k/)"
    )
    parser.add_argument("--stream", type=int, default=100_000, help="messages in the throughput stream")
    parser.add_argument("--repeats", type=int, default=3, help="throughput runs per engine (best counts)")
    parser.add_argument("--memory-messages", type=int, default=1_000_000)
    parser.add_argument("--tier3-signatures", type=int, default=100_000)
    parser.add_argument("--tier3-queries", type=int, default=1_000)
    for part in ("loghub", "defects4j", "speed", "memory", "tier3"):
        parser.add_argument(f"--skip-{part}", action="store_true", help=f"skip the {part} part")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.getLogger("drain3").setLevel(logging.ERROR)
    logging.disable(logging.WARNING)
    systems = [s for s in args.systems.split(",") if s] if args.systems else discover_systems(args.data)

    if args.memory_child:
        memory_child(args.data, systems, args.memory_child)
        return
    if not systems:
        raise SystemExit(f"no labelled Loghub system under {args.data / 'loghub_2k'}: pass --data")
    has_traces = (args.data / "defects4j_traces" / "traces.jsonl").is_file()

    results: dict[str, str] = {}
    if not args.skip_loghub:
        macro = loghub_part(args.data, systems)
        results["GA_macro"] = f"{macro['ga']:.4f}"
        results["pairP_macro"] = f"{macro['pair_p']:.4f}"
    if not args.skip_defects4j and has_traces:
        results["d4j_bcubedF1"] = f"{defects4j_part(args.data):.4f}"
    elif not args.skip_defects4j:
        print(f"\n== Defects4J: no defects4j_traces/traces.jsonl under {args.data}, skipped")
    if not args.skip_speed:
        ratio = throughput_part(args.data, systems, args.stream, args.repeats)
        results["speed_ratio_vs_drain3"] = f"{ratio:.2f}"
    if not args.quick and not args.skip_memory:
        results["peak_rss_mb_1m"] = f"{memory_part(args.data, systems, args.memory_messages):.0f}"
    if not args.quick and not args.skip_tier3:
        p95 = tier3_part(args.data, systems, args.tier3_signatures, args.tier3_queries)
        results["tier3_p95_ms"] = f"{p95:.2f}"
    keys = (
        "GA_macro",
        "pairP_macro",
        "d4j_bcubedF1",
        "speed_ratio_vs_drain3",
        "peak_rss_mb_1m",
        "tier3_p95_ms",
    )
    print()
    print(" ".join(f"{key}={results.get(key, 'skipped')}" for key in keys))


if __name__ == "__main__":
    main()
