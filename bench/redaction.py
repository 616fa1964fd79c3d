"""Redaction figures: what the proof corpus plants and what leaks, per family; what must stay; how fast.

    python bench/redaction.py [--no-rounds]

Plants both corpora (`tests/security_corpus.py`, `tests/security_shapes.py`) in real telemetry and runs real
rounds (dry run and against the fake GitHub), as `bench/reliability.py` does, and prints planted and leaked
per family; then counts the harmless identifiers, stack-frame locations and pairs of different log-only errors
that redaction must leave intact; then times `redact_text` on public logs (loghub's 2k samples, the Defects4J
stack traces) and the corpus, one text at a time as the boundary sees them, and prints MB of text a second
(best of three; the machine may be shared: compare runs on one machine). Lines:

    secrets <family>: planted=<n> leaked=<n>
    boundary <family>: planted=<n> leaked=<n>

A round shows a few sample occurrences of each problem, so the outputs can miss a value that crossed the
boundary; the `boundary` lines judge every event the boundary (`redact_poll`) returns, field by field.
    kept: identifiers=<kept>/<tried> frames=<kept>/<tried> log_pairs_distinct=<kept>/<tried>
    public logs: <n> texts, <k> with a replacement (<category>=<count> ...)
    throughput: <MB/s> MB/s over <MB> MB in <n> texts (keyword engine <MB/s> MB/s, plain regex scan <MB/s>
    MB/s: <x>× and <y>× its time)
"""

from __future__ import annotations

import csv
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]
DATA = ROOT.parent / "shared" / "data"

from security_corpus import corpus  # noqa: E402
from security_shapes import (  # noqa: E402
    DISTINCT_LOG_PAIRS,
    IDENTIFIER_SHAPES,
    KEPT_FRAMES,
    KEPT_IDENTIFIERS,
)

from rounds_bot.redact import redact  # noqa: E402


def kept() -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    identifiers = sum(
        all(redact(line) == line for line in (shape.format(x=name) for shape in IDENTIFIER_SHAPES))
        for name in KEPT_IDENTIFIERS
    )
    frames = sum(redact(frame) == frame for frame in KEPT_FRAMES)
    pairs = sum(redact(a) != redact(b) for a, b in DISTINCT_LOG_PAIRS)
    return (
        (identifiers, len(KEPT_IDENTIFIERS)),
        (frames, len(KEPT_FRAMES)),
        (pairs, len(DISTINCT_LOG_PAIRS)),
    )


def boundary_by_family(workdir: Path) -> dict[str, tuple[int, int]]:
    """(planted, leaked) per family in what `redact_poll` returns for the whole planted telemetry."""
    from datetime import UTC, datetime, timedelta

    from security_harness import now, plant_secrets, secret_file

    from rounds_bot.redact import Redactor, redact_poll
    from rounds_bot.sources.base import Window
    from rounds_bot.sources.otlp_file import OtlpFileSource

    planted = corpus()
    telemetry = secret_file(workdir / "boundary.jsonl", plant_secrets(planted), now())
    end = datetime.now(UTC)
    polled = OtlpFileSource(telemetry).poll(Window(start=end - timedelta(days=7), end=end))
    # read as text as `model_dump_json` writes it (non-ASCII as is, JSON escapes), other values as text: the
    # file source's state carries its line memory packed as bytes, which pydantic's JSON refuses as text
    seen = json.dumps(redact_poll(Redactor(), polled).model_dump(), ensure_ascii=False, default=str)
    families: dict[str, tuple[int, int]] = {}
    for item in planted:
        n, k = families.get(item.category, (0, 0))
        leaked = item.secret in seen or json.dumps(item.secret)[1:-1] in seen
        families[item.category] = (n + 1, k + leaked)
    families["all"] = (len(planted), sum(k for _, k in families.values()))
    return families


def public_logs() -> list[str]:
    """Loghub's 2k samples and the Defects4J stack traces: real logs, with real secrets in none of them."""
    found: list[str] = []
    for path in sorted((DATA / "loghub_2k").glob("*/*_structured.csv")):
        with path.open(encoding="utf-8", errors="replace", newline="") as handle:
            found += [row.get("Content", "") for row in csv.DictReader(handle)]
    with (DATA / "defects4j_traces" / "traces.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            found += [record["message"] or "", record["trace"]]
    return found


def texts() -> list[str]:
    return public_logs() + [item.carrier for item in corpus()]


def replaced(sample: list[str]) -> tuple[int, Counter[str]]:
    from rounds_bot.redact import redact_with_report

    counts: Counter[str] = Counter()
    changed = 0
    for text in sample:
        redaction = redact_with_report(text)
        changed += redaction.total > 0
        counts.update(redaction.counts)
    return changed, counts


#: a plain scan to compare redaction with: one regex, one pass, nothing replaced
PLAIN = re.compile(r"[A-Za-z0-9_\-]{20,}")


def throughput(sample: list[str]) -> tuple[dict[str, float], float]:
    """MB/s (best of three, CPU time) of redaction with the scanning engine, with the keyword engine (the
    fallback without Hyperscan, the engine before), and of a plain regex scan of the same texts."""
    from rounds_bot.redact import engine
    from rounds_bot.redact.rule import RuleSet
    from rounds_bot.redact.text import _rules, redact_text

    size = sum(len(text.encode("utf-8")) for text in sample) / 1e6
    rules = _rules("all")
    redact_text("ready")  # the engine is built once per process, before any text: not timed
    scanning = engine.rule_set(rules)
    rates = {"plain": size / _best(PLAIN.findall, sample), "scanning": size / _best(redact_text, sample)}
    engine._SETS[id(rules)] = (rules, RuleSet(rules))
    try:
        rates["keyword"] = size / _best(redact_text, sample)
    finally:
        engine._SETS[id(rules)] = (rules, scanning)
    return rates, size


def _best(work: Callable[[str], object], sample: list[str]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for text in sample:
            work(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    if "--no-rounds" not in sys.argv:
        from reliability import secrets_by_family

        with tempfile.TemporaryDirectory() as folder:
            for family, (planted, leaked) in secrets_by_family(Path(folder)).items():
                print(f"secrets {family}: planted={planted} leaked={leaked}")
    with tempfile.TemporaryDirectory() as folder:
        for family, (planted, leaked) in boundary_by_family(Path(folder)).items():
            print(f"boundary {family}: planted={planted} leaked={leaked}")
    (ids, ids_n), (frames, frames_n), (pairs, pairs_n) = kept()
    print(f"kept: identifiers={ids}/{ids_n} frames={frames}/{frames_n} log_pairs_distinct={pairs}/{pairs_n}")
    logs = public_logs()
    changed, counts = replaced(logs)
    by_category = " ".join(f"{category}={n}" for category, n in counts.most_common())
    print(f"public logs: {len(logs)} texts, {changed} with a replacement ({by_category})")
    sample = texts()
    rates, size = throughput(sample)
    print(
        f"throughput: {rates['scanning']:.2f} MB/s over {size:.2f} MB in {len(sample)} texts "
        f"(keyword engine {rates['keyword']:.2f} MB/s, plain regex scan {rates['plain']:.2f} MB/s: "
        f"{rates['plain'] / rates['scanning']:.1f}× and {rates['plain'] / rates['keyword']:.1f}× its time)"
    )


if __name__ == "__main__":
    main()
