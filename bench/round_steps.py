"""What a round pays per signature: the CPU seconds of each step after grouping, and the database's bytes per
signature, table by table, for one first round over a synthetic file (`bench/scale_data.py`).

    python bench/round_steps.py --records 100000 --bugs 20000
    python bench/round_steps.py --records 20000 --bugs 2000 --keep /tmp/steps   # keeps the file and database

The round runs in this process under cProfile (ROUNDS_DIAGNOSER=off, dry-run tracker, a new database): the
figures are profiled seconds, comparable between two versions measured one after the other on one machine,
not wall-clock. The database's bytes per table come from SQLite's `dbstat` (pages, so free space counts).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_data import write_otlp

#: (label, profile entry): the steps of `round/run.py` after grouping, and what they call
STEPS = (
    ("group_occurrences", ("round/occurrences.py", "group_occurrences")),
    ("  traces noted", ("round/cascade.py", "add")),
    ("cascades_of", ("round/cascade.py", "cascades_of")),
    ("signatures_after", ("round/occurrences.py", "signatures_after")),
    ("act", ("round/run.py", "act")),
    ("  gather_candidates", ("round/planning.py", "gather_candidates")),
    ("  look_up_issues", ("round/planning.py", "look_up_issues")),
    ("  diagnosis step", ("round/diagnosis_step.py", "run_diagnosis_step")),
    ("  gather_evidence", ("round/evidence.py", "gather_evidence")),
    ("    code locate", ("code/locate.py", "locate")),
    ("  marker_memory", ("rounds_bot/marker_memory.py", "marker_memory")),
    ("  file_issues", ("round/filing.py", "file_issues")),
    ("    render_body", ("render/issue.py", "render_body")),
    ("    tracker create", ("tracker/dryrun.py", "create")),
    ("commit", ("round/commit.py", "commit")),
    ("round", ("round/run.py", "run_round")),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--bugs", type=int, default=2_000)
    parser.add_argument("--keep", type=Path, help="a folder for the file, database and drafts (kept)")
    options = parser.parse_args()
    folder = options.keep or Path(tempfile.mkdtemp(prefix="round-steps-"))
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"otlp-{options.records}-{options.bugs}.jsonl"
    if not data.exists():
        write_otlp(data, options.records, options.bugs)
    database = folder / "steps.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    os.environ.update(
        ROUNDS_SOURCE=f"otlp-file:{data}",
        SIGNATURES_DB_PATH=str(database),
        ROUNDS_OUTPUT_DIR=str(folder / "drafts"),
        ROUNDS_TRACKER="dry-run",
        ROUNDS_DIAGNOSER="off",
        ROUNDS_CURSOR_OVERLAP_SECONDS="3600",
    )
    from rounds_bot.cli import main as rounds

    profile = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):  # the round's own report
        profile.runcall(rounds, ["run"], standalone_mode=False)
    print_steps(pstats.Stats(profile))
    print_database(database)


def print_steps(stats: pstats.Stats) -> None:
    found = {(path, name): cumulative for (path, _, name), (_, _, _, cumulative, _) in stats.stats.items()}  # type: ignore[attr-defined]
    print(f"{'step':24} {'CPU s (profiled)':>16}")
    for label, (tail, name) in STEPS:
        seconds = sum(value for (path, fn), value in found.items() if fn == name and path.endswith(tail))
        print(f"{label:24} {seconds:16.2f}")


def print_database(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("pragma wal_checkpoint(truncate)")
        signatures = db.execute("select count(*) from signatures").fetchone()[0] or 1
        rows = db.execute("select name, sum(pgsize) from dbstat group by name order by 2 desc").fetchall()
    size = path.stat().st_size
    print(f"\ndatabase {size / 1e6:.1f} MB, {signatures} signatures, {size / signatures / 1024:.1f} KB each")
    for name, pages in rows[:12]:
        print(f"  {name:40} {pages / 1e6:8.2f} MB {pages / signatures:8.0f} B per signature")


if __name__ == "__main__":
    main()
