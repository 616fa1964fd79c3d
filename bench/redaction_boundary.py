"""What the redaction boundary costs a first round: the intake's id check and `redact_poll`, in CPU time.

A synthetic OTLP/JSON file (`bench/scale_data.py`) is read by the file source as a first round reads it
(nothing counted yet), with the intake's check (`already_counted` of every raw id) timed apart; then the
poll is redacted (`redact_poll`, as for a source that returns its events). Last, the round's whole first
step as a round takes it (`read_new`: the file read with each event redacted as it is built). Before all,
the scanning engine's build: compiled (no cached databases) and loaded from the database cache
(`scan_cache.py`), each in a fresh process.

    python bench/redaction_boundary.py [--records 100000] [--bugs 2000] [--file PATH]

CPU seconds of this process: other work on a shared machine does not count. Compare runs of two trees
made back to back.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_data import file_arguments, write_otlp

from rounds_bot.redact import Redactor, redact_poll
from rounds_bot.round.intake import already_counted, read_new
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.store import Store

#: builds the engine of the default rules in a fresh process and prints its CPU seconds
BUILD = (
    "import time; from rounds_bot.redact import redact_text; started = time.process_time(); "
    "redact_text('ready'); print(time.process_time() - started)"
)


def build_seconds(cache: Path, fresh: bool) -> float:
    """CPU seconds of building the scanning engine in a new process, with the cache in `cache`."""
    cache.mkdir(parents=True, exist_ok=True)
    if fresh:
        for entry in cache.glob("**/*"):
            if entry.is_file():
                entry.unlink()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    # run outside any checkout, so the package imported is the one this bench imports (PYTHONPATH's)
    done = subprocess.run(
        [sys.executable, "-c", BUILD], env=env, cwd=cache.parent, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def boundary(path: Path) -> tuple[float, float, int]:
    """CPU seconds of the intake's check and of `redact_poll` over one first round of `path`."""
    redactor = Redactor()
    redactor.identity("0" * 32)  # the engine is built before anything is timed
    checked = 0.0
    ids = 0

    store = Store.memory()

    def counted(raw_ids: list[str]) -> set[str]:
        nonlocal checked, ids
        started = time.process_time()
        found = already_counted(raw_ids, store, redactor)
        checked += time.process_time() - started
        ids += len(raw_ids)
        return found

    now = datetime.now(UTC) + timedelta(days=1)
    window = Window(start=now - timedelta(days=30), end=now)
    polled = OtlpFileSource(path).poll_new(window, frozenset(), counted)
    gc.freeze()
    started = time.process_time()
    redact_poll(redactor, polled)
    return checked, time.process_time() - started, ids


def intake(path: Path) -> float:
    """CPU seconds of a first round's intake of `path` (`read_new`): read and redacted, nothing counted."""
    redactor = Redactor()
    redactor.identity("0" * 32)  # the engine is built before anything is timed
    now = datetime.now(UTC) + timedelta(days=1)
    window = Window(start=now - timedelta(days=30), end=now)
    started = time.process_time()
    read_new(OtlpFileSource(path), window, Store.memory(), redactor)
    return time.process_time() - started


def main() -> None:
    parser = file_arguments(__doc__)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        cache = Path(work) / "cache"
        cold = build_seconds(cache, fresh=True)
        warm = build_seconds(cache, fresh=False)
        print(f"engine build (CPU, fresh process): {cold:.2f} s compiled, {warm:.2f} s from the cache")
        path = args.file or write_otlp(Path(work) / "data.jsonl", args.records, args.bugs)
        checked, poll, ids = boundary(path)
        gc.unfreeze()
        gc.collect()
        whole = intake(path)
    print(f"intake id check: {checked:.2f} s CPU for {ids:,} ids")
    print(f"redact_poll:     {poll:.2f} s CPU")
    print(f"read_new:        {whole:.2f} s CPU (the file read and every event redacted, as a round's intake)")
    print(
        f"engine_cold_s={cold:.2f} engine_warm_s={warm:.2f} id_check_s={checked:.2f} poll_s={poll:.2f} "
        f"intake_s={whole:.2f}"
    )


if __name__ == "__main__":
    main()
