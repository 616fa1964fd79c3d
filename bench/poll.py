"""Measures SigNoz polls against the emulator over a real ClickHouse engine holding a million exceptions.

The emulator runs in its own process (so the client's figures are its own), its queries run by
ClickHouse in-process (chDB) over SigNoz's own tables, with 1,000,000 exception rows in 5,000
groups generated inside ClickHouse (`numbers()`), spread over an hour that ended 16 minutes ago.
Three polls, as rounds makes them:

- first round (as if run 15 minutes ago): a window holding every row, no group known yet;
- quiet round (now, the next scheduled round): from the first round's cursor to now, every group
  known, nothing new;
- known-groups round: the first round's window again with every group known (a busy window in
  which nothing is new).

Printed per poll: HTTP requests, bytes both ways, wall time, and what ClickHouse read for it (rows
and bytes, as the emulator reports them per answer with `--report-reads`), with the rows as a
fraction of the table. Before them, the first round's peak memory (tracemalloc) for a tenth of the
load as well, to show that memory follows the number of groups, not the number of events.
Targets: first round <= 60 requests, quiet round <= 10, <= 20 MB for the first and quiet rounds.

    python bench/poll.py [--events N] [--groups G]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.signoz.source import SignozSource

# what the emulator answers with --report-reads (tests/signoz_emulator)
ROWS_READ_HEADER = "X-Emulator-Rows-Read"
BYTES_READ_HEADER = "X-Emulator-Bytes-Read"
DATA_ENDS_AGO = timedelta(minutes=16)
ROUND_INTERVAL = timedelta(minutes=15)
LOOKBACK = timedelta(minutes=65)
OVERLAP = timedelta(seconds=120)
TARGETS = {"first_requests": 60, "quiet_requests": 10, "megabytes": 20.0}


class ReadsTransport(httpx.HTTPTransport):
    """Totals what ClickHouse read for the answers that passed through."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = 0
        self.bytes = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.rows += int(response.headers.get(ROWS_READ_HEADER, "0"))
        self.bytes += int(response.headers.get(BYTES_READ_HEADER, "0"))
        return response


@dataclass(frozen=True)
class Poll:
    result: PollResult
    requests: int
    bytes: int
    seconds: float
    rows_read: int
    bytes_read: int


def start_emulator(events: int, groups: int) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "tests.signoz_emulator", "--port", "0", "--report-reads"]
    command += ["--synthetic-events", str(events), "--synthetic-groups", str(groups)]
    command += ["--synthetic-end-seconds-ago", str(int(DATA_ENDS_AGO.total_seconds()))]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if " on http://" not in line:
        process.kill()
        raise SystemExit(f"the emulator did not start: {line!r}")
    return process, line.split(" on ", 1)[1].split(" ", 1)[0]


def poll(source: SignozSource, reads: ReadsTransport, window: Window, known: frozenset[str]) -> Poll:
    rows_before, bytes_before = reads.rows, reads.bytes
    began = time.perf_counter()
    result = source.poll(window, known)
    seconds = time.perf_counter() - began
    traffic = source.traffic
    return Poll(
        result=result,
        requests=result.requests,
        bytes=traffic.bytes_sent + traffic.bytes_received,
        seconds=seconds,
        rows_read=reads.rows - rows_before,
        bytes_read=reads.bytes - bytes_before,
    )


def windows(now: datetime) -> tuple[Window, Window]:
    """The first round's window (it ran one interval ago) and the next round's, from its cursor."""
    first_end = now - ROUND_INTERVAL
    first = Window(start=first_end - LOOKBACK, end=first_end)
    quiet = Window(start=first_end - OVERLAP, end=now - timedelta(seconds=30), resume_from=first_end)
    return first, quiet


def measure(events: int, groups: int, *, trace_memory: bool) -> dict[str, Poll | float]:
    process, url = start_emulator(events, groups)
    try:
        first_window, quiet_window = windows(datetime.now(UTC))
        reads = ReadsTransport()
        with SignozSource(url, api_key=None, deadline_seconds=600, transport=reads) as source:
            if trace_memory:
                tracemalloc.start()
            first = poll(source, reads, first_window, frozenset())
            peak = tracemalloc.get_traced_memory()[1] if trace_memory else 0
            if trace_memory:
                tracemalloc.stop()
            known = frozenset(e.source_group_id for e in first.result.events if e.source_group_id)
            # as a round does: with what the first round kept (each stream's cursor and counted minutes)
            quiet_window = quiet_window.model_copy(update={"source_state": first.result.source_state})
            quiet = poll(source, reads, quiet_window, known)
            again = poll(source, reads, first_window, known)
        exception_events = sum(e.count for e in first.result.events if e.kind == "exception")
        assert exception_events == events, (exception_events, events)
        assert len(known) == groups and not quiet.result.events and not again.result.events
        assert len({count.source_group_id for count in again.result.known_group_counts}) == groups
        return {"first": first, "quiet": quiet, "again": again, "peak_mb": peak / 1e6}
    finally:
        process.terminate()
        process.wait(timeout=10)


def describe(name: str, measured: Poll, table_rows: int) -> str:
    return (
        f"{name:<20} {measured.requests:>4} requests  {measured.bytes / 1e6:>6.2f} MB  "
        f"{measured.seconds:>6.2f} s  ClickHouse read {measured.rows_read:>10,} rows "
        f"({measured.rows_read / table_rows:.4f} of the table), {measured.bytes_read / 1e6:,.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=5_000)
    args = parser.parse_args()
    for events in (args.events // 10, args.events):
        peak = measure(events, args.groups, trace_memory=True)["peak_mb"]
        print(
            f"{events:>9,} events, {args.groups:,} groups: "
            f"first-round peak memory {peak:.1f} MB (tracemalloc)"
        )
    big = measure(args.events, args.groups, trace_memory=False)
    first, quiet, again = big["first"], big["quiet"], big["again"]
    assert isinstance(first, Poll) and isinstance(quiet, Poll) and isinstance(again, Poll)
    print(f"table: {args.events:,} exception rows in {args.groups:,} groups")
    print(describe("first round", first, args.events))
    print(describe("quiet round", quiet, args.events))
    print(describe("known-groups round", again, args.events))
    megabytes = (first.bytes + quiet.bytes) / 1e6
    met = (
        first.requests <= TARGETS["first_requests"]
        and max(quiet.requests, again.requests) <= TARGETS["quiet_requests"]
        and megabytes <= TARGETS["megabytes"]
    )
    print(
        f"first_round_requests={first.requests} quiet_round_requests={quiet.requests} "
        f"known_groups_round_requests={again.requests} megabytes={megabytes:.2f} "
        f"first_rows_read_fraction={first.rows_read / args.events:.4f} "
        f"quiet_rows_read_fraction={quiet.rows_read / args.events:.4f} "
        f"known_groups_rows_read_fraction={again.rows_read / args.events:.4f} "
        f"targets={'met' if met else 'missed'}"
    )


if __name__ == "__main__":
    main()
