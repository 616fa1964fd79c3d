"""Grouping benchmark: rounds' engine beside Drain3 on labelled data, in one run.

    python bench/grouping.py                       # everything (several minutes)
    python bench/grouping.py --quick               # accuracy and throughput only
    python bench/grouping.py --also ../unseen      # and data sets never used to build the engine

Measures, with the engine's default configuration (no per-data-set settings), each figure
beside Drain3 with its default settings on the same input:
- Loghub-2k (message = `Content`, truth = `EventId`): grouping accuracy (GA: a message counts
  only if its predicted group has exactly the members of its true group), pairwise precision and
  recall, per system and macro-averaged;
- Defects4J failing-test traces: BCubed precision, recall and F1 against the bug that caused them;
- throughput on one stream of log messages (default 100,000): each system's messages in turn,
  with fresh values (new digits in the positions the labelled template marks as parameters) each
  time a message comes round again;
- throughput on one stream of Java exceptions with their stack traces (default 20,000): the
  Defects4J traces in turn, with fresh digits on later rounds wherever normalisation treats
  digits as values (the exception messages; frames and identifiers are left as they are);
- peak memory grouping 1,000,000 messages of the log stream, measured in a child process;
- with 100,000 known signatures: adding them to tier 3's index, loading their saved states, and
  tier 3's lookup time (p50/p95/p99); quiet rounds over databases of 1k, 10k and 100k signatures;
  `rounds group` end to end against the engine in this process, on the log stream and on one of
  1,000,000 lines (where starting Python and importing no longer count), and `rounds --help`
  (`grouping_scale.py`).

`--also DIR` (repeatable) measures accuracy on more folders laid out like the shared data (a
`loghub_2k/` and a `defects4j_traces/traces.jsonl`), e.g. the other Loghub systems and Defects4J
projects, which `bench/unseen_data.py` extracts from their public repositories.

The last line is machine-readable.
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
sys.path.insert(0, str(ROOT / "bench"))

import grouping_scale  # noqa: E402

from rounds_bot.grouping.engine import GroupingEngine  # noqa: E402
from rounds_bot.grouping.normalize import mask_spans  # noqa: E402
from rounds_bot.models import ErrorEvent  # noqa: E402

if TYPE_CHECKING:
    from drain3 import TemplateMiner

DEFAULT_DATA = ROOT.parent / "shared" / "data"
#: the systems of the shared data, in the order tables list them; others found are added after
SYSTEMS = ("HDFS", "Hadoop", "Spark", "Zookeeper", "BGL", "HPC", "Thunderbird", "OpenStack")
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


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


def trace_event(row: dict, text: str, index: int) -> ErrorEvent:
    return ErrorEvent(
        event_id=str(index),
        timestamp=EPOCH,
        service=row["project"],
        error_type=row["exception_type"],
        message=text.split("\n", 1)[0].partition(": ")[2],
        stacktrace=text,
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
        events = [log_event(m, service, i) for i, m in enumerate(messages)]
        return [a.signature_id for a in engine.assign_all(events)]  # one batch, as a round's

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


# --- accuracy -----------------------------------------------------------------------------------


def loghub_part(data: Path, systems: list[str], title: str) -> dict[str, float]:
    print(f"\n== Loghub-2k ({title}): grouping accuracy (GA) and pairwise precision / recall")
    ours_head = f"{'GA':>7} {'pairP':>7} {'pairR':>7} {'groups':>7}"
    drain_head = f"{'Drain3 GA':>9} {'pairP':>7} {'pairR':>7} {'groups':>7}"
    print(f"{'system':<12} {ours_head} | {drain_head} | {'true':>5} {'GA ratio':>8}")
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
            f"{len(set(theirs)):7d} | {len(set(log.truth)):5d} {ga / dga if dga else float('inf'):8.2f}"
        )
    macro = {
        "ga": statistics.fmean(ours_ga),
        "ga_min": min(ours_ga),
        "pair_p": statistics.fmean(ours_p),
        "drain_ga": statistics.fmean(drain_ga),
        "drain_pair_p": statistics.fmean(drain_p),
    }
    print(
        f"{'macro':<12} {macro['ga']:7.3f} {macro['pair_p']:7.4f} {'':7} {'':7} | {macro['drain_ga']:9.3f} "
        f"{macro['drain_pair_p']:7.4f} {'':7} | {'':5} {macro['ga'] / macro['drain_ga']:8.2f}"
    )
    ratio = macro["ga"] / macro["drain_ga"]
    print(f"worst system GA {macro['ga_min']:.3f}; macro GA ratio rounds / Drain3 {ratio:.3f}")
    return macro


def defects4j_part(data: Path, title: str) -> float:
    print(f"\n== Defects4J failing-test traces ({title}): BCubed against the bug that caused them")
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
    drain = bcubed(drain3_grouper([f"{row['project']} {row['trace']}" for row in rows]), truth)
    naive = bcubed(naive_mask_and_hash(rows), truth)
    projects = sorted({row["project"] for row in rows})
    print(f"{len(rows)} traces, {len(set(truth))} bugs, projects: {', '.join(projects)}")
    print(f"{'grouper':<22} {'P':>6} {'R':>6} {'F1':>6} {'groups':>7}")
    groups = len(set(predicted))
    print(f"{'rounds':<22} {precision:6.3f} {recall:6.3f} {f1:6.3f} {groups:7d}  tiers: {dict(tiers)}")
    print(f"{'Drain3 (trace text)':<22} {drain[0]:6.3f} {drain[1]:6.3f} {drain[2]:6.3f}")
    print(f"{'naive mask-and-hash':<22} {naive[0]:6.3f} {naive[1]:6.3f} {naive[2]:6.3f}")
    print(f"F1 ratio rounds / Drain3: {f1 / drain[2]:.2f}")
    return f1


def naive_mask_and_hash(rows: list[dict]) -> list[str]:
    """The baseline: type, digit-masked message and frames without line numbers, hashed."""
    out = []
    for row in rows:
        frames = re.findall(r"^\s*at ([^\s(]+)", row["trace"], flags=re.M)
        message = re.sub(r"\d+", "0", row["message"] or "")
        out.append(str(hash((row["project"], row["exception_type"], message, tuple(frames)))))
    return out


# --- the throughput streams -----------------------------------------------------------------------


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


_NOT_A_FRAME = re.compile(r"^(?![ \t]+at |[ \t]*\.\.\. \d+ more).+$", re.M)


def trace_stream(rows: list[dict], count: int, seed: int = 5) -> Iterator[tuple[dict, str]]:
    """`count` (row, trace text): the traces in turn; on later rounds the digits that message
    normalisation masks as values get fresh values, on the lines that print no frame."""
    rng = random.Random(seed)

    def fresh(line: str) -> str:
        out, position = [], 0
        for start, end, _ in mask_spans(line):
            out += [line[position:start], re.sub(r"\d", lambda _: str(rng.randrange(10)), line[start:end])]
            position = end
        return "".join([*out, line[position:]])

    for index in range(count):
        row = rows[index % len(rows)]
        yield (
            row,
            row["trace"]
            if index < len(rows)
            else _NOT_A_FRAME.sub(lambda m: fresh(m.group(0)), row["trace"]),
        )


def throughput_part(title: str, texts: list[str], events: list[ErrorEvent], repeats: int) -> float:
    print(f"\n== Throughput: {title}, the same for both engines")
    print(f"   (CPU time of this process, best of {repeats} alternating runs: other load does not count)")
    drain_rates, rounds_rates = [], []
    drain_groups = rounds_groups = 0
    for _ in range(repeats):  # alternate, so a busy moment of the machine hits both alike
        rate, drain_groups = _time_drain3(texts)
        drain_rates.append(rate)
        rate, rounds_groups = _time_rounds(events)
        rounds_rates.append(rate)
    ours, theirs = max(rounds_rates), max(drain_rates)
    print(f"{'engine':<10} {'events/s':>12} {'groups':>8}   all runs")
    print(f"{'rounds':<10} {ours:12,.0f} {rounds_groups:8d}   {', '.join(f'{r:,.0f}' for r in rounds_rates)}")
    print(f"{'Drain3':<10} {theirs:12,.0f} {drain_groups:8d}   {', '.join(f'{r:,.0f}' for r in drain_rates)}")
    print(f"speed ratio rounds / Drain3: {ours / theirs:.2f}")
    return ours / theirs


def _time_drain3(texts: list[str]) -> tuple[float, int]:
    # Inputs are made before timing and set aside from the garbage collector, for both engines.
    with _frozen_inputs():
        miner = drain3_miner()
        start = time.process_time()
        for text in texts:
            miner.add_log_message(text)
        return len(texts) / (time.process_time() - start), len(miner.drain.clusters)


def _time_rounds(events: list[ErrorEvent]) -> tuple[float, int]:
    with _frozen_inputs():
        engine = GroupingEngine()
        start = time.process_time()
        engine.assign_all(events)  # one batch, as a round's
        return len(events) / (time.process_time() - start), len(engine.signature_ids())


@contextmanager
def _frozen_inputs() -> Iterator[None]:
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.collect()


# --- memory -------------------------------------------------------------------------------------


def memory_part(data: Path, systems: list[str], count: int) -> float:
    print(f"\n== Memory: grouping {count:,} messages in a child process")
    command = [sys.executable, __file__, "--data", str(data), "--memory-child", str(count)]
    result = subprocess.run(
        [*command, "--systems", ",".join(systems)], capture_output=True, text=True, check=False
    )
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
    figures = {
        "peak_rss_mb": _peak_rss_mb(),
        "baseline_rss_mb": baseline,
        "signatures": len(engine.signature_ids()),
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps(figures))


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


# --- main ---------------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder holding loghub_2k/ and defects4j_traces/"
    )
    parser.add_argument(
        "--also", type=Path, action="append", default=[], help="more data folders, for accuracy"
    )
    parser.add_argument("--quick", action="store_true", help="skip the memory run and the scale parts")
    parser.add_argument(
        "--systems", help="comma-separated Loghub systems (default: every one under loghub_2k/)"
    )
    parser.add_argument("--stream", type=int, default=100_000, help="messages in the log throughput stream")
    parser.add_argument(
        "--traces", type=int, default=20_000, help="events in the stack-trace throughput stream"
    )
    parser.add_argument("--repeats", type=int, default=3, help="throughput runs per engine (best counts)")
    parser.add_argument("--memory-messages", type=int, default=1_000_000)
    parser.add_argument("--tier3-signatures", type=int, default=100_000)
    parser.add_argument("--tier3-queries", type=int, default=1_000)
    parser.add_argument(
        "--quiet-sizes", default="1000,10000,100000", help="database sizes for the quiet rounds"
    )
    parser.add_argument("--quiet-events", type=int, default=2_000)
    parser.add_argument(
        "--cli-lines",
        type=int,
        default=1_000_000,
        help="lines of the second rounds group run (after --stream's)",
    )
    for part in ("loghub", "defects4j", "speed", "traces", "memory", "tier3", "quiet", "cli"):
        parser.add_argument(f"--skip-{part}", action="store_true", help=f"skip the {part} part")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    return parser.parse_args()


def accuracy_parts(args: argparse.Namespace, systems: list[str], results: dict[str, str]) -> None:
    folders = [("shared data", args.data, systems), *((str(d), d, discover_systems(d)) for d in args.also)]
    for number, (title, folder, found) in enumerate(folders):
        suffix = "" if number == 0 else f"_also{number}"
        if not args.skip_loghub and found:
            macro = loghub_part(folder, found, title)
            results[f"GA_macro{suffix}"] = f"{macro['ga']:.4f}"
            results[f"GA_min{suffix}"] = f"{macro['ga_min']:.4f}"
            results[f"pairP_macro{suffix}"] = f"{macro['pair_p']:.4f}"
            results[f"GA_ratio_vs_drain3{suffix}"] = f"{macro['ga'] / macro['drain_ga']:.2f}"
        if not args.skip_defects4j and (folder / "defects4j_traces" / "traces.jsonl").is_file():
            results[f"d4j_bcubedF1{suffix}"] = f"{defects4j_part(folder, title):.4f}"


def speed_parts(args: argparse.Namespace, systems: list[str], results: dict[str, str]) -> list[str]:
    messages = list(value_stream(args.data, systems, args.stream))
    if not args.skip_speed:
        events = [log_event(m, "stream", i) for i, m in enumerate(messages)]
        title = f"one stream of {len(messages):,} log messages"
        results["speed_ratio_vs_drain3"] = f"{throughput_part(title, messages, events, args.repeats):.2f}"
    traces = args.data / "defects4j_traces" / "traces.jsonl"
    if not args.skip_traces and traces.is_file():
        stream = list(trace_stream(load_defects4j(args.data), args.traces))
        events = [trace_event(row, text, i) for i, (row, text) in enumerate(stream)]
        title = f"one stream of {len(stream):,} Java exceptions with stack traces"
        ratio = throughput_part(title, [text for _, text in stream], events, args.repeats)
        results["trace_speed_ratio_vs_drain3"] = f"{ratio:.2f}"
    return messages


def main() -> None:
    args = arguments()
    logging.getLogger("drain3").setLevel(logging.ERROR)
    logging.disable(logging.WARNING)
    systems = [s for s in args.systems.split(",") if s] if args.systems else discover_systems(args.data)
    if args.memory_child:
        memory_child(args.data, systems, args.memory_child)
        return
    if not systems:
        raise SystemExit(f"no labelled Loghub system under {args.data / 'loghub_2k'}: pass --data")
    results: dict[str, str] = {}
    accuracy_parts(args, systems, results)
    messages = speed_parts(args, systems, results)
    if not args.quick and not args.skip_memory:
        results["peak_rss_mb_1m"] = f"{memory_part(args.data, systems, args.memory_messages):.0f}"
    scale_parts(args, systems, messages, results)
    print()
    print(" ".join(f"{key}={value}" for key, value in results.items()))


def scale_parts(
    args: argparse.Namespace, systems: list[str], messages: list[str], results: dict[str, str]
) -> None:
    if args.quick:
        return
    traces = args.data / "defects4j_traces" / "traces.jsonl"
    types = [row["exception_type"] for row in load_defects4j(args.data)] if traces.is_file() else []
    sample = [m for s in systems[:4] for m in load_loghub(args.data, s).messages]
    vocabulary, types = grouping_scale.vocabulary_and_types(sample, types)
    sizes = [int(size) for size in args.quiet_sizes.split(",")]
    wanted = max([args.tier3_signatures] * (not args.skip_tier3) + sizes * (not args.skip_quiet) + [0])
    print(f"\n(making {wanted:,} signatures' saved states for the next parts)")
    states, added = grouping_scale.known_states(wanted, vocabulary, types)
    if not args.skip_tier3:
        found = grouping_scale.tier3_part(
            states[: args.tier3_signatures],
            added * args.tier3_signatures / wanted,
            vocabulary,
            types,
            args.tier3_queries,
        )
        results["load_100k_s"] = f"{found['load_s']:.2f}"
        results["tier3_p95_ms"] = f"{found['tier3_p95_ms']:.2f}"
    if not args.skip_quiet:
        quiet = grouping_scale.quiet_round_part(states, vocabulary, types, sizes, args.quiet_events)
        for key, value in quiet.items():
            results[key] = f"{value:.2f}" if key.startswith("new_error") else f"{value:.0f}"
    if not args.skip_cli:
        big = list(value_stream(args.data, systems, args.cli_lines)) if args.cli_lines > len(messages) else []
        found = grouping_scale.cli_part([messages, *([big] if big else [])], args.repeats)
        results["cli_vs_engine"] = f"{found['cli_ratio']:.2f}"
        results["help_s"] = f"{found['help_s']:.2f}"


if __name__ == "__main__":
    main()
