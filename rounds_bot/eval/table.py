"""The table per model: one row per answer source (the crash-site baseline first), then the same by case kind
and data set.

A failed run, a broken case or recording counts as a miss in every rate (the denominators are all the cases
the rate is about), and is counted again in `problems`: nothing is dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rounds_bot.eval.runner import CaseRun

HEADER = (
    "| answers | origin | cases | fault file top-1 | fault function top-1 | class | evidence verified "
    "| abstained right (precision / recall) | correct at high / medium / low confidence | fix passes tests "
    "| turns / case | cost / case | problems |"
)
KIND_HEADER = (
    "| answers | kind (data set) | cases | fault file top-1 | fault function top-1 | class | abstained |"
)


def render_table(rows: dict[str, list[CaseRun]], *, fix_asked: bool = False) -> str:
    lines = [HEADER, _rule(HEADER)]
    lines += [_row(label, runs, fix_asked) for label, runs in rows.items()]
    kinds = ["", KIND_HEADER, _rule(KIND_HEADER)]
    for label, runs in rows.items():
        for kind, dataset in sorted({(run.kind, run.dataset) for run in runs}):
            same = [run for run in runs if (run.kind, run.dataset) == (kind, dataset)]
            kinds.append(_kind_row(label, f"{kind} ({dataset})", same))
    return "\n".join(lines + kinds) + "\n"


def _rule(header: str) -> str:
    return "|" + "---|" * (header.count("|") - 1)


def _row(label: str, runs: list[CaseRun], fix_asked: bool) -> str:
    scored = [run.score for run in runs if run.score is not None]
    located = [run for run in runs if _has_location_truth(run)]
    evidence_total = sum(score.evidence_total for score in scored)
    evidence = sum(score.evidence_verified for score in scored)
    origin = Counter(run.origin for run in runs).most_common(1)[0][0] if runs else ""
    return (
        "| "
        + " | ".join(
            [
                label,
                origin,
                str(len(runs)),
                _rate(sum(bool(r.score and r.score.file_hit) for r in located), len(located)),
                _rate(sum(bool(r.score and r.score.function_hit) for r in located), len(located)),
                _rate(sum(bool(r.score and r.score.class_hit) for r in runs), len(runs)),
                _rate(evidence, evidence_total) if evidence_total else "not checked",
                _abstention(runs),
                _calibration(runs),
                _fix(runs) if fix_asked else "not asked (--fix)",
                _mean(run.turns for run in runs),
                "$" + _mean((run.cost_usd for run in runs), digits=4),
                _problems(runs),
            ]
        )
        + " |"
    )


def _kind_row(label: str, kind: str, runs: list[CaseRun]) -> str:
    located = [run for run in runs if _has_location_truth(run)]
    return (
        "| "
        + " | ".join(
            [
                label,
                kind,
                str(len(runs)),
                _rate(sum(bool(r.score and r.score.file_hit) for r in located), len(located)),
                _rate(sum(bool(r.score and r.score.function_hit) for r in located), len(located)),
                _rate(sum(bool(r.score and r.score.class_hit) for r in runs), len(runs)),
                str(sum(bool(r.score and r.score.abstained) for r in runs)),
            ]
        )
        + " |"
    )


def _has_location_truth(run: CaseRun) -> bool:
    # a case whose truth says where the fault is; a failed run of one counts as a miss
    return run.located


def _abstention(runs: list[CaseRun]) -> str:
    should = [run for run in runs if run.kind == "abstain"]
    did = [run for run in runs if run.score is not None and run.score.abstained]
    right = [run for run in did if run.kind == "abstain"]
    precision = _rate(len(right), len(did))
    recall = _rate(len(right), len(should))
    return f"{precision} / {recall}"


def _calibration(runs: list[CaseRun]) -> str:
    parts = []
    for level in ("high", "medium", "low"):
        at = [run.score for run in runs if run.score is not None and run.score.confidence == level]
        parts.append(_rate(sum(score.correct for score in at), len(at)))
    return " / ".join(parts)


def _fix(runs: list[CaseRun]) -> str:
    """Passed out of the cases whose tests ran here (a missing or failing fix is a miss); the cases whose
    tests cannot run here, counted by data set."""
    checks = [run for run in runs if run.fix is not None and run.fix.status != "no tests"]
    if not checks:
        return "no fix proposed"
    tried = [run for run in checks if run.fix is not None and run.fix.status != "cannot run"]
    passed = sum(run.fix is not None and run.fix.status == "passed" for run in tried)
    cell = _rate(passed, len(tried))
    blocked = Counter(run.dataset for run in checks if run.fix is not None and run.fix.status == "cannot run")
    if blocked:
        cell += f"; cannot run: {sum(blocked.values())} ({_by(blocked)})"
    return cell


def _by(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(counter.items()))


def _problems(runs: list[CaseRun]) -> str:
    counted: Counter[str] = Counter()
    for run in runs:
        if run.sources_missing:
            counted["sources missing"] += 1
        if run.stale:
            counted["stale"] += 1
        if run.problem:
            counted[_problem_kind(run.problem)] += 1
    return ", ".join(f"{count} {name}" for name, count in sorted(counted.items())) or "none"


def _problem_kind(problem: str) -> str:
    for kind in ("broken case", "broken recording", "no recording", "model error", "not run"):
        if problem.startswith(kind):
            return kind
    if problem.startswith("sources missing"):
        return "not asked (no sources)"
    return problem


def _rate(hits: int, total: int) -> str:
    return f"{hits / total:.0%} ({hits}/{total})" if total else "–"


def _mean(values: Iterable[float], digits: int = 1) -> str:
    items = list(values)
    return f"{sum(items) / len(items):.{digits}f}" if items else "–"
