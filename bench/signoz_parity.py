"""The demo telemetry through SigNoz (the emulator, over a real ClickHouse) and from its OTLP file, side by
side: each signature's id, title, count, first and last seen, environments and the triage decision a new
signature gets. The two sources should agree on all of them.

    python bench/signoz_parity.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from signoz_parity import both, table

from rounds_bot.demo import demo_data_path


def main() -> None:
    through_signoz, from_file = both(demo_data_path())
    print("\n".join(table(through_signoz, from_file)))


if __name__ == "__main__":
    main()
