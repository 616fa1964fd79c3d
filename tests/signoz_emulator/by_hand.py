"""The emulator run by hand: `python -m tests.signoz_emulator --data FILE ...` (see the package docstring).

`build_dataset` turns fixture files (their times moved to end a minute ago unless `--no-rebase`) and
synthetic exception load into a `Dataset`; `main` parses the command line, loads the dataset into
the engine, says where it listens and serves until interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from rounds_bot.sources.signoz.times import NS_PER_S

from . import BYTES_READ_HEADER, ROWS_READ_HEADER, Behaviour, SignozEmulator
from .data import DataError, Dataset, load_otlp_file, newest_in_lines
from .synthetic import SyntheticExceptions


def build_dataset(
    files: list[Path],
    *,
    rebase: bool,
    synthetic_events: int,
    synthetic_groups: int,
    window_seconds: int,
    now_ns: int,
    synthetic_end_seconds_ago: int = 60,
) -> Dataset:
    dataset = Dataset()
    for path in files:
        shift = 0
        if rebase:
            with path.open(encoding="utf-8") as handle:
                newest = newest_in_lines(handle)
            shift = (now_ns - 60 * NS_PER_S - newest) if newest is not None else 0
        load_otlp_file(path, dataset, shift_ns=shift)
    if synthetic_events:
        end = now_ns - synthetic_end_seconds_ago * NS_PER_S
        dataset.synthetic.append(
            SyntheticExceptions(
                events=synthetic_events,
                groups=synthetic_groups,
                start_ns=end - window_seconds * NS_PER_S,
                end_ns=end,
            )
        )
    return dataset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.signoz_emulator",
        description="Serve SigNoz's HTTP API on 127.0.0.1 from OTLP/JSON files.",
    )
    parser.add_argument(
        "--data",
        type=Path,
        action="append",
        default=[],
        help="OTLP/JSON lines (ExportTraceServiceRequest/ExportLogsServiceRequest)",
    )
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument(
        "--version", dest="signoz_version", default="v0.138.0", help="the SigNoz version to emulate"
    )
    parser.add_argument("--api-key", help="require this SIGNOZ-API-KEY")
    parser.add_argument(
        "--refuse-clickhouse-sql",
        action="store_true",
        help="answer 403 to clickhouse_sql queries, as a key without the grant",
    )
    parser.add_argument(
        "--no-rebase",
        action="store_true",
        help="keep fixture times instead of shifting them to end a minute ago",
    )
    parser.add_argument("--synthetic-events", type=int, default=0)
    parser.add_argument("--synthetic-groups", type=int, default=100)
    parser.add_argument("--synthetic-window-seconds", type=int, default=3600)
    parser.add_argument(
        "--synthetic-end-seconds-ago",
        type=int,
        default=60,
        help="the synthetic rows end this long before the emulator starts",
    )
    parser.add_argument(
        "--report-reads",
        action="store_true",
        help=f"say what ClickHouse read for each answer ({ROWS_READ_HEADER}, {BYTES_READ_HEADER})",
    )
    args = parser.parse_args(argv)
    try:
        dataset = build_dataset(
            args.data,
            rebase=not args.no_rebase,
            synthetic_events=args.synthetic_events,
            synthetic_groups=args.synthetic_groups,
            window_seconds=args.synthetic_window_seconds,
            now_ns=time.time_ns(),
            synthetic_end_seconds_ago=args.synthetic_end_seconds_ago,
        )
    except (OSError, DataError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    behaviour = Behaviour(
        version=args.signoz_version,
        api_key=args.api_key,
        clickhouse_sql_allowed=not args.refuse_clickhouse_sql,
        report_reads=args.report_reads,
    )
    emulator = SignozEmulator(dataset, behaviour, port=args.port)
    emulator.load()  # before saying it listens: the rows are there when the first request comes
    print(
        f"SigNoz emulator {args.signoz_version} listening on {emulator.url} "
        f"({dataset.exception_rows()} exception rows, {len(dataset.spans)} "
        f"spans, {len(dataset.logs)} log records; ClickHouse {emulator.engine.version()} in-process)",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a user stops it
        emulator.serve_forever()
    return 0
