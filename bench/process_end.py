"""What a first round's process pays after the round: `rounds run` as its own process, ended the usual way
(`main`: the interpreter's teardown frees the round's objects one by one) and as the console script ends it
(`console`: no teardown once the round is done, `rounds_bot/cli/ending.py`), alternately.

    python bench/process_end.py [--records 100000] [--bugs 2000] [--file PATH] [--repeats 2]

For each run: the CPU seconds of the whole process (its resource usage, read by this process), those
spent by the time the command returned (read inside it), the difference (the process's end), the wall
seconds and the peak memory. A first round each time, on a new database. CPU seconds of the round's
process alone: other work on a shared machine does not count, though it slows the wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scale_data import file_arguments, write_otlp

ROOT = Path(__file__).resolve().parent.parent

# the command's own CPU time as it returns, written where the bench reads it; then the process ends as
# the entry point ends it (`ending.end_now_if_done` is where the console script decides)
PROGRAM = """
import os, sys, time
sys.modules["pandas"] = None  # as the scale bench runs rounds: without the test extra's pandas
sys.argv = ["rounds", "run"]
from rounds_bot.cli import ending, main
from rounds_bot.cli.console import console
def returned():
    with open(os.environ["BENCH_RETURNED"], "w") as out:
        out.write(repr(time.process_time()))
if "{entry}" == "console":
    decide = ending.end_now_if_done
    def end_now_if_done(status):
        returned()
        decide(status)
    ending.end_now_if_done = end_now_if_done
    console()
else:
    try:
        main()
    except SystemExit:
        returned()
        raise
"""


def first_round(data: Path, entry: str) -> tuple[float, float, float, float]:
    """CPU seconds of the whole process and at the command's return, wall seconds, peak MB."""
    with tempfile.TemporaryDirectory() as work:
        returned = Path(work) / "returned"
        env = {
            **os.environ,
            "ROUNDS_SOURCE": f"otlp-file:{data}",
            "SIGNATURES_DB_PATH": f"{work}/rounds.db",
            "ROUNDS_OUTPUT_DIR": f"{work}/out",
            "ROUNDS_TRACKER": "dry-run",
            "ROUNDS_DIAGNOSER": "off",
            "ROUNDS_CURSOR_OVERLAP_SECONDS": "3600",
            "ERROR_LOOKBACK_MINUTES": "10080",
            "PYTHONPATH": str(ROOT),
            "BENCH_RETURNED": str(returned),
        }
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", PROGRAM.format(entry=entry)],
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"the round ({entry}) failed")
        return (
            usage.ru_utime + usage.ru_stime,
            float(returned.read_text()),
            wall,
            usage.ru_maxrss / 1024,
        )


def main() -> None:
    parser = file_arguments(__doc__)
    parser.add_argument("--repeats", type=int, default=2, help="pairs of runs, alternated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        data = args.file or write_otlp(Path(work) / "data.jsonl", args.records, args.bugs)
        order = ("main", "console")
        for repeat in range(args.repeats):
            for entry in order if repeat % 2 == 0 else order[::-1]:
                cpu, returned, wall, peak = first_round(data, entry)
                print(
                    f"{entry:8} process {cpu:6.2f} s CPU, at return {returned:6.2f} s, "
                    f"end {cpu - returned:5.2f} s; wall {wall:6.2f} s; peak {peak:.0f} MB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
