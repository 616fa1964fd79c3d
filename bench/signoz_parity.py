"""The demo telemetry through SigNoz (the emulator, over a real ClickHouse) and from its OTLP file, side by
side: each signature's id, title, count, first and last seen, environments and the triage decision a new
signature gets. The two sources should agree on all of them, through /api/v5/query_range (v0.87+) and
through /api/v4/query_range (v0.60 to v0.86). Then the closing figures of SigNoz rounds: rows that
arrive behind the cursor (counted once), and a round whose error-log stream fails (what it files, and
what the next round files).

    python bench/signoz_parity.py
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from signoz_parity import both, late_rows, one_stream_failing, table

from rounds_bot.demo import demo_data_path


def main() -> None:
    through_signoz, from_file = both(demo_data_path())
    print("\n".join(table(through_signoz, from_file)))
    for version in ("v0.138.0", "v0.86.0"):
        signoz, file = (
            both(demo_data_path(), version) if version != "v0.138.0" else (through_signoz, from_file)
        )
        # the reason quotes a peak, exact only to the minute through SigNoz: compared without it
        same = sum(
            1
            for key, view in file.items()
            if key in signoz and replace(signoz[key], reason="") == replace(view, reason="")
        )
        diagnosed = (sum(v.diagnose for v in signoz.values()), sum(v.diagnose for v in file.values()))
        print(
            f"SigNoz {version}: {same} of {len(file)} signatures identical to the file's "
            f"(id, title, count, first/last seen, environments, triage); diagnosed {diagnosed[0]} vs "
            f"{diagnosed[1]}"
        )
        late, counted, again = late_rows(version)
        print(f"SigNoz {version}: late rows counted {counted} of {late}; counted again next round: {again}")
        failing = one_stream_failing(demo_data_path(), version)
        first_count = sum(view.count for view in failing.first.values())
        second_count = sum(view.count for view in failing.second.values())
        print(
            f"SigNoz {version}, error logs failing: {len(failing.failures)} failure line(s); filed "
            f"{len(failing.first)} signatures ({first_count} occurrences); the next round filed "
            f"{len(failing.second)} ({second_count}); together {len(failing.first) + len(failing.second)} "
            f"signatures, {first_count + second_count} occurrences (the file: {len(file)}, "
            f"{sum(view.count for view in file.values())})"
        )
        for line in failing.failures:
            print(f"  {line[:160]}")


if __name__ == "__main__":
    main()
