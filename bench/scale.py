"""Rounds at scale: what a round costs for 10k / 100k / 1M error records, against what reading them costs.

For each size (records × distinct bugs) a synthetic OTLP/JSON file is written (`bench/scale_data.py`: 8
services, 4 runtimes, exception spans with stack traces, error logs, error codes), then:

- the floor: every line parsed with orjson, every error record found, its message hashed (this process; the
  fastest of three runs);
- the first round over the file: `rounds run` in a fresh process, ROUNDS_DIAGNOSER=off, dry-run tracker,
  a new database; its time, records per second, peak memory (the process's maximum resident set);
- the second round over the same window (the overlap reaches back over the whole file, so every record is
  re-read and found already counted);
- the database's size after both, and per signature.

Then redaction's throughput over the file's distinct texts (messages and stack traces), in MB/s of CPU
time, with the scanning engine and the keyword engine, beside one plain regex scan of the same text.

    python bench/scale.py                         # 10k and 100k records, 2k and 20k bugs
    python bench/scale.py --sizes 10000 --bugs 2000
    python bench/scale.py --million               # adds 1M records (about 1.5 GB of OTLP/JSON)
    python bench/scale.py --sizes "" --bugs 2000 --million    # the 1M row alone
    python bench/scale.py --profile 100000x2000   # the top functions of both rounds of one size
    python bench/scale.py --redaction-only        # only the redaction throughput (about a minute)
    python bench/scale.py --redaction-profile     # the top functions of redaction over the same texts

Times are wall-clock on whatever machine runs it: compare the ratios to the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import io
import os
import pstats
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_data import write_otlp

ROOT = Path(__file__).resolve().parent.parent
#: a plain scan to compare redaction with: one regex, one pass, nothing replaced
PLAIN = re.compile(r"[A-Za-z0-9_\-]{20,}")
#: how much text the redaction throughput is measured over
REDACTION_SAMPLE_CHARS = 20_000_000


@dataclass(frozen=True)
class RoundRun:
    seconds: float
    peak_mb: float
    report: str


#: how often the floor is measured; the fastest is taken (`scale`)
FLOOR_RUNS = 3


def floor(path: Path) -> tuple[float, int]:
    """Seconds to parse every line with orjson, find each error record and hash its message; the count."""
    started = time.perf_counter()
    found = 0
    with path.open("rb") as handle:
        for raw in handle:
            line = orjson.loads(raw)
            for resource in line.get("resourceSpans", ()):
                for scope in resource.get("scopeSpans", ()):
                    for span in scope.get("spans", ()):
                        texts = [
                            attribute["value"].get("stringValue", "")
                            for event in span.get("events", ())
                            if event.get("name") == "exception"
                            for attribute in event.get("attributes", ())
                            if attribute["key"] == "exception.message"
                        ]
                        if not texts and span.get("status", {}).get("code") == 2:
                            texts = [span["status"].get("message", "")]
                        for text in texts:
                            hashlib.sha256(text.encode()).digest()
                            found += 1
            for resource in line.get("resourceLogs", ()):
                for scope in resource.get("scopeLogs", ()):
                    for record in scope.get("logRecords", ()):
                        if record.get("severityNumber", 0) >= 17:
                            hashlib.sha256(str(record.get("body")).encode()).digest()
                            found += 1
    return time.perf_counter() - started, found


#: makes `import pandas` fail in the round's process, as where only rounds' own dependencies are installed
WITHOUT_PANDAS = "import sys; sys.modules['pandas'] = None; "


def run_round(data: Path, database: Path, output: Path, profile: Path | None = None) -> RoundRun:
    """One `rounds run` in its own process: wall time and peak resident memory."""
    env = {
        **os.environ,
        "ROUNDS_SOURCE": f"otlp-file:{data}",
        "SIGNATURES_DB_PATH": str(database),
        "ROUNDS_OUTPUT_DIR": str(output),
        "ROUNDS_TRACKER": "dry-run",
        "ROUNDS_DIAGNOSER": "off",
        "ROUNDS_CURSOR_OVERLAP_SECONDS": "3600",
    }
    # pandas comes only with the test extra (the SigNoz emulator's engine needs it); sqlite-utils imports it
    # when it is there, which costs a production install nothing and a development one half a second. The
    # round is measured as a production install runs it: without pandas.
    # as the `rounds` console script runs it, process end included (`rounds_bot/cli/console.py`)
    code = (
        f"{WITHOUT_PANDAS}sys.argv = ['rounds', 'run']\nfrom rounds_bot.cli.console import console\nconsole()"
    )
    if profile is not None:
        code = (
            f"import cProfile, sys; {WITHOUT_PANDAS}from rounds_bot.cli import main\n"
            f"cProfile.run(\"main(['run'], standalone_mode=False)\", {str(profile)!r})"
        )
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert process.stdout is not None
    report = process.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"rounds run failed:\n{report[-3000:]}")
    return RoundRun(seconds, usage.ru_maxrss / 1024, report)


def signatures_in(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return int(db.execute("select count(*) from signatures").fetchone()[0])


def summary_line(report: str) -> str:
    for line in report.splitlines():
        if line.startswith(("**Nothing new.**", "**")) and "error records" in line:
            return line.strip("*").strip()[:160]
    return "(no summary line)"


def scale(records: int, bugs: int, work: Path, verbose: bool) -> dict[str, float | str]:
    data = write_otlp(work / f"otlp-{records}-{bugs}.jsonl", records, bugs)
    # the fastest of three: one run's floor varied by a third on a shared machine (page cache, allocator), and
    # the ratios are read against it; the fastest is the one least disturbed, so the ratios are not flattered
    floors = [floor(data) for _ in range(FLOOR_RUNS)]
    floor_s, found = min(floors)
    database, output = work / f"rounds-{records}-{bugs}.db", work / f"out-{records}-{bugs}"
    slowest = max(seconds for seconds, _ in floors)
    print(
        f"    floor {floor_s:.2f} s, fastest of {FLOOR_RUNS} (slowest {slowest:.2f} s)"
        f" ({found:,} error records)",
        flush=True,
    )
    first = run_round(data, database, output)
    print(f"    first round {first.seconds:.1f} s, peak {first.peak_mb:.0f} MB", flush=True)
    second = run_round(data, database, output)
    if verbose:
        print(f"    first:  {summary_line(first.report)}")
        print(f"    second: {summary_line(second.report)}")
    size_mb = database.stat().st_size / 1e6
    signatures = signatures_in(database)
    data.unlink()
    shutil.rmtree(output, ignore_errors=True)
    return {
        "records": records,
        "bugs": bugs,
        "errors": found,
        "floor": floor_s,
        "first": first.seconds,
        "second": second.seconds,
        "peak1": first.peak_mb,
        "peak2": second.peak_mb,
        "db": size_mb,
        "per_signature_kb": size_mb * 1000 / max(signatures, 1),
        "signatures": signatures,
    }


HEADER = (
    f"{'records':>9} {'bugs':>6} {'floor s':>8} {'1st s':>8} {'×floor':>7} {'rec/s':>8} "
    f"{'2nd s':>7} {'×floor':>7} {'rec/s':>8} {'peak1 MB':>9} {'peak2 MB':>9} {'db MB':>7} {'KB/sig':>7} "
    f"{'sigs':>6}"
)


def table_row(row: dict[str, float | str]) -> str:
    f, first, second = float(row["floor"]), float(row["first"]), float(row["second"])
    records = float(row["records"])
    return (
        f"{row['records']:>9,} {row['bugs']:>6,} {f:>8.2f} {first:>8.2f} {first / f:>7.1f} "
        f"{records / first:>8,.0f} {second:>7.2f} {second / f:>7.1f} {records / second:>8,.0f} "
        f"{float(row['peak1']):>9.0f} {float(row['peak2']):>9.0f} {float(row['db']):>7.1f} "
        f"{float(row['per_signature_kb']):>7.2f} {row['signatures']:>6}"
    )


def print_table(rows: list[dict[str, float | str]]) -> None:
    print(HEADER)
    for row in rows:
        print(table_row(row))


def figure_line(row: dict[str, float | str]) -> str:
    name, floor_s = f"r{row['records']}b{row['bugs']}", float(row["floor"])
    return (
        f"{name}_first_x_floor={float(row['first']) / floor_s:.1f} "
        f"{name}_second_x_floor={float(row['second']) / floor_s:.1f} "
        f"{name}_peak_mb={max(float(row['peak1']), float(row['peak2'])):.0f}"
    )


def distinct_texts(records: int, bugs: int, work: Path) -> list[str]:
    """The distinct messages and stack traces of a file, up to REDACTION_SAMPLE_CHARS."""
    data = write_otlp(work / "redaction.jsonl", records, bugs)
    texts: dict[str, None] = {}
    total = 0
    with data.open("rb") as handle:
        for raw in handle:
            for value in re.findall(rb'"stringValue":"((?:[^"\\]|\\.)*)"', raw):
                text = orjson.loads(b'"' + value + b'"')
                if len(text) > 40 and text not in texts:
                    texts[text] = None
                    total += len(text)
            if total >= REDACTION_SAMPLE_CHARS:
                break
    data.unlink()
    return list(texts)


def redaction_throughput(work: Path) -> str:
    """Prints redaction's throughput beside a plain scan's, for the scanning engine (the package's with
    Hyperscan), the keyword engine (its fallback without, the engine before it) and, where the tests are at
    hand, the straightforward reference; returns the figures as `key=value`."""
    from rounds_bot.redact import engine, redact_text
    from rounds_bot.redact.rule import RuleSet
    from rounds_bot.redact.text import _rules

    texts = distinct_texts(20_000, 2_000, work)
    megabytes = sum(len(text.encode()) for text in texts) / 1e6
    rules = _rules("all")
    redact_text("ready")  # the engine is built once per process, before any text: not timed
    # the bench's own 40k texts and the built engine are long-lived: moved out of the collector's sight (as
    # a round does with its grouping state), so a collection walking them is not timed as redaction's cost
    gc.freeze()
    timings = {"plain regex scan": timed(lambda text: PLAIN.findall(text), texts)}
    timings["redaction (scanning engine)"] = timed(redact_text, texts)
    scanning = engine.rule_set(rules)
    engine._SETS[id(rules)] = (rules, RuleSet(rules))  # the same redaction with the keyword engine
    try:
        timings["redaction (keyword engine)"] = timed(redact_text, texts)
    finally:
        engine._SETS[id(rules)] = (rules, scanning)
    try:  # the straightforward engine the package's are proven equal to, where the tests are at hand
        sys.path.insert(0, str(ROOT))
        from tests.redact_reference import reference_redact
    except ImportError:
        pass
    else:
        timings["straightforward redaction"] = timed(lambda text: reference_redact(rules, text), texts)
    plain = timings["plain regex scan"]
    print(f"redaction over {len(texts):,} distinct texts of a file ({megabytes:.1f} MB), CPU time:")
    for name, seconds in timings.items():
        print(
            f"  {name:<30} {megabytes / seconds:>7.1f} MB/s   "
            f"{seconds / plain:>6.1f}× the plain scan's time ({PLAIN.pattern})"
        )
    return (
        f"redaction_mb_s={megabytes / timings['redaction (scanning engine)']:.2f} "
        f"keyword_engine_mb_s={megabytes / timings['redaction (keyword engine)']:.2f} "
        f"plain_scan_mb_s={megabytes / plain:.2f}"
    )


def timed(work: Callable[[str], object], texts: list[str]) -> float:
    """CPU seconds `work` takes over `texts` (this process's time: other work on a shared machine does not
    count, as it does in wall-clock time)."""
    started = time.process_time()
    for text in texts:
        work(text)
    return time.process_time() - started


def redaction_profile(work: Path, top: int) -> None:
    """The functions redaction spends its own time in, over the texts the throughput is measured on."""
    import cProfile

    from rounds_bot.redact import redact_text

    texts = distinct_texts(20_000, 2_000, work)
    redact_text("ready")
    profiler = cProfile.Profile()
    profiler.enable()
    for text in texts:
        redact_text(text)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))


def profile(size: str, work: Path, top: int) -> None:
    records, bugs = (int(part) for part in size.split("x"))
    data = write_otlp(work / "profiled.jsonl", records, bugs)
    database, output = work / "profiled.db", work / "profiled-out"
    for name in ("first", "second"):
        stats_file = work / f"{name}.prof"
        run = run_round(data, database, output, profile=stats_file)
        text = io.StringIO()
        stats = pstats.Stats(str(stats_file), stream=text)
        stats.sort_stats("tottime").print_stats(top)
        print(
            f"--- {name} round, {records:,} records / {bugs:,} bugs: {run.seconds:.1f} s profiled, top {top}"
        )
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[-(top + 2) * 200 :])
    data.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="records per file, comma-separated")
    parser.add_argument("--bugs", default="2000,20000", help="distinct bugs per file, comma-separated")
    parser.add_argument("--million", action="store_true", help="add 1,000,000 records")
    parser.add_argument("--profile", metavar="RECORDSxBUGS", help="profile both rounds of one size instead")
    parser.add_argument("--top", type=int, default=5, help="functions listed by --profile")
    parser.add_argument("--skip-redaction", action="store_true")
    parser.add_argument("--redaction-only", action="store_true", help="only the redaction throughput")
    parser.add_argument(
        "--redaction-profile", action="store_true", help="the top functions of redaction (see --top)"
    )
    parser.add_argument("--verbose", action="store_true", help="print each round's summary line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rounds-scale-") as folder:
        work = Path(folder)
        if args.profile:
            profile(args.profile, work, args.top)
            return
        if args.redaction_only:
            print(redaction_throughput(work))
            return
        if args.redaction_profile:
            redaction_profile(work, args.top)
            return
        sizes = [int(n) for n in args.sizes.split(",") if n] + ([1_000_000] if args.million else [])
        rows = []
        for records in sizes:
            for bugs in (int(n) for n in args.bugs.split(",") if n):
                if bugs > records:
                    continue
                print(f"  {records:,} records / {bugs:,} bugs ...", flush=True)
                rows.append(scale(records, bugs, work, args.verbose))
                # each row as soon as it is measured: a 1M run takes a while
                print(f"  {HEADER.strip()}\n  {table_row(rows[-1]).strip()}", flush=True)
        print_table(rows)
        figures = [figure_line(row) for row in rows]
        if not args.skip_redaction:
            figures.append(redaction_throughput(work))
        print(" ".join(figures))


if __name__ == "__main__":
    main()
