"""Measures one SigNoz poll against the emulator holding a million exception events.

The emulator runs in its own process (so the figures are the client's alone) with 1,000,000
exception events in 5,000 groups in the last hour. Two polls of the same window: the first with
no known group, the second with every group known (a quiet round). Printed: requests, bytes
and wall time of each poll, and the peak memory the poll allocated (tracemalloc) for a smaller
load as well, to show that memory follows the number of groups, not the number of events.

    python bench/poll.py [--events N] [--groups G]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rounds_bot.sources.base import Window
from rounds_bot.sources.signoz.source import SignozSource


def start_emulator(events: int, groups: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.signoz_emulator",
            "--port",
            "0",
            "--synthetic-events",
            str(events),
            "--synthetic-groups",
            str(groups),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if " on http://" not in line:
        process.kill()
        raise SystemExit(f"the emulator did not start: {line!r}")
    return process, line.split(" on ", 1)[1].split(" ", 1)[0]


def measure(events: int, groups: int, *, trace_memory: bool) -> dict[str, float]:
    process, url = start_emulator(events, groups)
    try:
        now = datetime.now(UTC)
        window = Window(start=now - timedelta(hours=1, minutes=5), end=now - timedelta(seconds=30))
        with SignozSource(url, api_key=None, deadline_seconds=600) as source:
            if trace_memory:
                tracemalloc.start()
            began = time.perf_counter()
            first = source.poll(window, frozenset())
            first_seconds = time.perf_counter() - began
            first_traffic = source.traffic
            peak = tracemalloc.get_traced_memory()[1] if trace_memory else 0
            if trace_memory:
                tracemalloc.stop()
            known = frozenset(e.source_group_id for e in first.events if e.source_group_id)
            began = time.perf_counter()
            quiet = source.poll(window, known)
            quiet_seconds = time.perf_counter() - began
            quiet_traffic = source.traffic
        exception_events = sum(e.count for e in first.events if e.kind == "exception")
        assert exception_events == events, (exception_events, events)
        assert not quiet.events and len(quiet.known_group_counts) == groups
        return {
            "first_requests": first.requests,
            "quiet_requests": quiet.requests,
            "first_bytes": first_traffic.bytes_sent + first_traffic.bytes_received,
            "quiet_bytes": quiet_traffic.bytes_sent + quiet_traffic.bytes_received,
            "first_seconds": first_seconds,
            "quiet_seconds": quiet_seconds,
            "peak_mb": peak / 1e6,
            "groups": len(first.events),
        }
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=5_000)
    args = parser.parse_args()
    small = measure(args.events // 10, args.groups, trace_memory=True)
    print(
        f"{args.events // 10:>9,} events, {args.groups:,} groups: first-round peak memory "
        f"{small['peak_mb']:.1f} MB (tracemalloc)"
    )
    big_memory = measure(args.events, args.groups, trace_memory=True)
    print(
        f"{args.events:>9,} events, {args.groups:,} groups: first-round peak memory "
        f"{big_memory['peak_mb']:.1f} MB (tracemalloc)"
    )
    big = measure(args.events, args.groups, trace_memory=False)
    megabytes = (big["first_bytes"] + big["quiet_bytes"]) / 1e6
    print(
        f"first round: {big['first_requests']} requests, {big['first_bytes'] / 1e6:.2f} MB, "
        f"{big['first_seconds']:.2f} s, {big['groups']:.0f} new groups"
    )
    print(
        f"quiet round: {big['quiet_requests']} requests, {big['quiet_bytes'] / 1e6:.2f} MB, "
        f"{big['quiet_seconds']:.2f} s"
    )
    print(
        f"first_round_requests={big['first_requests']} quiet_round_requests="
        f"{big['quiet_requests']} megabytes={megabytes:.2f} "
        f"seconds={big['first_seconds'] + big['quiet_seconds']:.2f}"
    )


if __name__ == "__main__":
    main()
