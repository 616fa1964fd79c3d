"""Grouping by class of mistake: rounds beside Drain3 and "type + top frame" on the labelled corpus.

    python bench/grouping_classes.py                     # the committed corpus
    python bench/grouping_classes.py --engine OLD_TREE   # the same run with another checkout's engine
    python bench/grouping_classes.py --orders 6          # and that many shuffled arrival orders

The corpus (`tests/fixtures/grouping_corpus/`, written by `python -m tools.grouping_corpus.generate`)
holds known bugs, each in one of nine classes of grouping mistakes, recorded through the
OpenTelemetry SDK. For each class and grouper it prints:
- signatures per bug: the distinct groups a bug's events were put in, averaged over the class's
  bugs (1.00 is one issue per problem);
- wrong merges: groups holding events of two or more bugs, one of them of the class (0 is no
  issue holding two problems).
Then the totals, and whether rounds gives the same partition in every arrival order (the events
shuffled `--orders` times). Drain3 runs with its default settings on the event's text (service,
type, message and trace), the baseline keys on service, exception type and the top frame (else the
message with its digits masked). The last line is machine-readable.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "grouping_corpus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus", type=Path, default=CORPUS, help="folder with corpus.otlp.jsonl and truth.json"
    )
    parser.add_argument("--engine", type=Path, default=ROOT, help="source tree whose rounds_bot groups")
    parser.add_argument(
        "--orders", type=int, default=6, help="shuffled arrival orders for the invariance check"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(args.engine))
    events, truth, classes, bug_class = load(args.corpus)
    groupers: dict[str, Callable[[list], list[str]]] = {
        "rounds": rounds_grouper,
        "Drain3": drain3_grouper,
        "type+top frame": type_top_frame_grouper,
    }
    results = {name: group(events) for name, group in groupers.items()}
    labels = [truth[event.event_id] for event in events]
    print(f"{len(events)} error events, {len(bug_class)} bugs, engine from {args.engine}")
    header = "".join(f" | {name:>14} sig/bug wrong" for name in groupers)
    print(f"{'class':<52}{'bugs':>5}{header}")
    figures: dict[str, dict[str, list[float]]] = {}
    for number, name in classes.items():
        bugs = [bug for bug, cls in bug_class.items() if cls == number]
        row = f"{number}. {name:<49}{len(bugs):>5}"
        for grouper, predicted in results.items():
            per_bug, wrong = class_figures(predicted, labels, set(bugs))
            figures.setdefault(grouper, {})[number] = [per_bug, wrong]
            row += f" | {'':>14} {per_bug:7.2f} {wrong:5d}"
        print(row)
    print()
    totals = {}
    for grouper, predicted in results.items():
        per_bug, wrong = class_figures(predicted, labels, set(bug_class))
        exact = exactly_one(predicted, labels)
        totals[grouper] = {
            "signatures_per_bug": round(per_bug, 3),
            "wrong_merges": wrong,
            "exactly_one": exact,
        }
        print(
            f"{grouper:<16} signatures per bug {per_bug:5.2f}  groups holding two bugs {wrong:3d}  "
            f"bugs with exactly one signature {exact}/{len(bug_class)}  groups {len(set(predicted))}"
        )
    partitions = set()
    rng = random.Random(11)
    for _ in range(args.orders):
        shuffled = list(events)
        rng.shuffle(shuffled)
        predicted = rounds_grouper(shuffled)
        partitions.add(partition(shuffled, predicted))
    partitions.add(partition(events, results["rounds"]))
    print(f"\nrounds over {args.orders + 1} arrival orders: {len(partitions)} distinct partition(s)")
    print(json.dumps({"totals": totals, "classes": figures, "partitions": len(partitions)}))


def load(folder: Path) -> tuple[list, dict[str, str], dict[int, str], dict[str, int]]:
    from rounds_bot.sources.base import Window
    from rounds_bot.sources.otlp_file import OtlpFileSource

    document = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(9999, 1, 1, tzinfo=UTC))
    events = OtlpFileSource(folder / "corpus.otlp.jsonl").poll(window, frozenset()).events
    classes = {int(number): name for number, name in document["classes"].items()}
    bug_class = {bug: info["class"] for bug, info in document["bugs"].items()}
    return list(events), document["events"], classes, bug_class


def class_figures(predicted: list[str], labels: list[str], bugs: set[str]) -> tuple[float, int]:
    groups_of: dict[str, set[str]] = defaultdict(set)
    bugs_in: dict[str, set[str]] = defaultdict(set)
    for group, bug in zip(predicted, labels, strict=True):
        groups_of[bug].add(group)
        bugs_in[group].add(bug)
    per_bug = sum(len(groups_of[bug]) for bug in bugs) / max(len(bugs), 1)
    wrong = sum(1 for members in bugs_in.values() if len(members) > 1 and members & bugs)
    return per_bug, wrong


def exactly_one(predicted: list[str], labels: list[str]) -> int:
    groups_of: dict[str, set[str]] = defaultdict(set)
    bugs_in: dict[str, set[str]] = defaultdict(set)
    for group, bug in zip(predicted, labels, strict=True):
        groups_of[bug].add(group)
        bugs_in[group].add(bug)
    return sum(
        1 for bug, groups in groups_of.items() if len(groups) == 1 and bugs_in[next(iter(groups))] == {bug}
    )


def partition(events: list, predicted: list[str]) -> frozenset[frozenset[str]]:
    members: dict[str, set[str]] = defaultdict(set)
    for event, group in zip(events, predicted, strict=True):
        members[group].add(event.event_id)
    return frozenset(frozenset(ids) for ids in members.values())


# --- groupers -------------------------------------------------------------------------------------


def rounds_grouper(events: list) -> list[str]:
    from rounds_bot.grouping import GroupingEngine

    engine = GroupingEngine()
    return [a.signature_id for a in engine.assign_all(events)]  # one batch, as a round's


def event_text(event) -> str:  # type: ignore[no-untyped-def]
    return f"{event.service} {event.error_type or ''}: {event.message}\n{event.stacktrace or ''}"


def drain3_grouper(events: list) -> list[str]:
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    miner = TemplateMiner(config=TemplateMinerConfig())
    return [str(miner.add_log_message(event_text(event))["cluster_id"]) for event in events]


_FRAME_PATTERNS = (
    re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<fn>\S+)'),  # Python (innermost last)
    re.compile(r"^\s+at (?P<fn>[\w$.<>]+)\((?P<file>[^:)]*)"),  # JVM
    re.compile(r"^\s+at (?P<fn>\S+) \((?P<file>[^:]+)"),  # V8, .NET without a file
    re.compile(r"^(?P<fn>[\w./*()-]+)\(.*\)$"),  # Go function line
)


def type_top_frame_grouper(events: list) -> list[str]:
    """Service, exception type and the crash frame (else the digit-masked message)."""
    out = []
    for event in events:
        top = None
        if event.stacktrace:
            frames = [
                match.group(0).strip()
                for line in event.stacktrace.splitlines()
                for pattern in _FRAME_PATTERNS
                if (match := pattern.match(line))
            ]
            if frames:
                python = event.stacktrace.lstrip().startswith("Traceback")
                top = re.sub(r"line \d+, ", "", frames[-1] if python else frames[0])
        key = (event.service, event.error_type, top or re.sub(r"\d+", "0", event.message))
        out.append(json.dumps(key))
    return out


if __name__ == "__main__":
    main()
