"""The engine on the labelled data sets in `../shared/data` (the `shared_data` fixture: skipped when they are
not beside the checkout, failing in CI).

These pin the acceptance figures as regressions; `bench/grouping.py` measures and prints them.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.models import ErrorEvent

SYSTEMS = ("HDFS", "Hadoop", "Spark", "Zookeeper", "BGL", "HPC", "Thunderbird", "OpenStack")
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def loghub(data: Path, system: str) -> tuple[list[str], list[str]]:
    path = data / "loghub_2k" / system / f"{system}_2k.log_structured.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [r["Content"] for r in rows], [r["EventId"] for r in rows]


def defects4j(data: Path) -> list[dict]:
    path = data / "defects4j_traces" / "traces.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def log_events(system: str, messages: list[str]) -> list[ErrorEvent]:
    return [
        ErrorEvent(event_id=str(n), timestamp=EPOCH, service=system, kind="log", message=m)
        for n, m in enumerate(messages)
    ]


def trace_events(rows: list[dict]) -> list[ErrorEvent]:
    return [
        ErrorEvent(
            event_id=str(r["id"]),
            timestamp=EPOCH,
            service=r["project"],
            error_type=r["exception_type"],
            message=r["message"] or "",
            stacktrace=r["trace"],
        )
        for r in rows
    ]


def grouping_accuracy(predicted: list[str], truth: list[str]) -> float:
    members_p, members_t = defaultdict(set), defaultdict(set)
    for n, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        members_p[p].add(n)
        members_t[t].add(n)
    return sum(members_p[p] == members_t[t] for p, t in zip(predicted, truth, strict=True)) / len(truth)


def pairwise_precision(predicted: list[str], truth: list[str]) -> float:
    def pairs(counts: Counter) -> float:
        return sum(n * (n - 1) / 2 for n in counts.values())

    same = pairs(Counter(predicted))
    return pairs(Counter(zip(predicted, truth, strict=True))) / same if same else 1.0


def bcubed_f1(predicted: list[str], truth: list[str]) -> float:
    members_p, members_t = defaultdict(set), defaultdict(set)
    for n, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        members_p[p].add(n)
        members_t[t].add(n)
    precision = statistics.fmean(
        len(members_p[p] & members_t[t]) / len(members_p[p]) for p, t in zip(predicted, truth, strict=True)
    )
    recall = statistics.fmean(
        len(members_p[p] & members_t[t]) / len(members_t[t]) for p, t in zip(predicted, truth, strict=True)
    )
    return 2 * precision * recall / (precision + recall)


def test_loghub_grouping_accuracy_and_pairwise_precision_meet_the_targets(shared_data: Path) -> None:
    accuracies, precisions = [], []
    for system in SYSTEMS:
        messages, truth = loghub(shared_data, system)
        engine = GroupingEngine()
        predicted = [engine.assign(e).signature_id for e in log_events(system, messages)]
        accuracies.append(grouping_accuracy(predicted, truth))
        precisions.append(pairwise_precision(predicted, truth))
    assert statistics.fmean(accuracies) >= 0.95
    assert statistics.fmean(precisions) >= 0.99


def test_defects4j_bcubed_f1_meets_the_target(shared_data: Path) -> None:
    rows = defects4j(shared_data)
    engine = GroupingEngine()
    predicted = [engine.assign(e).signature_id for e in trace_events(rows)]
    assert bcubed_f1(predicted, [r["group"] for r in rows]) >= 0.85


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize("source", ["defects4j", "OpenStack", "Thunderbird"])
def test_a_reloaded_engine_continues_real_data_exactly_like_the_original(
    shared_data: Path, source: str, how: str
) -> None:
    if source == "defects4j":
        events = trace_events(defects4j(shared_data))
    else:
        events = log_events(source, loghub(shared_data, source)[0])
    half = len(events) // 2
    original = GroupingEngine()
    for item in events[:half]:
        original.assign(item)
    saved = [
        SignatureState.model_validate_json(original.state(s).model_dump_json())
        for s in original.signature_ids()
    ]
    random.Random(0).shuffle(saved)
    reloaded = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    for item in events[half:]:
        a, b = original.assign(item), reloaded.assign(item)
        assert (a.signature_id, a.tier, a.related, a.similarity) == (
            b.signature_id,
            b.tier,
            b.related,
            b.similarity,
        )
