"""Signatures per bug in a signature database a round wrote over `bench/scale_data.py`'s synthetic file.

The synthetic bugs are named by the first word of their message that is letters then digits (`route487`),
so a signature's bug is read from its normalised message. Printed: signatures, bugs, the bugs split into
more than one signature and the extra signatures they make (each a duplicate issue), signatures per bug,
and the split bugs' messages (`--show`).

    python bench/signatures_per_bug.py DATABASE [--show 10]

A round over the file, on a fresh database:
    ROUNDS_SOURCE=otlp-file:FILE SIGNATURES_DB_PATH=DB ROUNDS_TRACKER=dry-run ROUNDS_DIAGNOSER=off \\
    ERROR_LOOKBACK_MINUTES=10080 ROUNDS_CURSOR_OVERLAP_SECONDS=3600 rounds run
"""

from __future__ import annotations

import argparse
import re
import sqlite3
from collections import defaultdict

_BUG = re.compile(r"[a-z]+(\d+)")


def bug_of(message: str) -> str | None:
    """The synthetic bug a normalised message names: the digits of its first `letters+digits` word."""
    return next((found[1] for word in message.split() if (found := _BUG.match(word))), None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("database")
    parser.add_argument("--show", type=int, default=0, help="print the messages of this many split bugs")
    args = parser.parse_args()
    with sqlite3.connect(args.database) as db:
        messages = [row[0] for row in db.execute("SELECT normalized_message FROM signatures")]
    by_bug: dict[str | None, list[str]] = defaultdict(list)
    for message in messages:
        by_bug[bug_of(message)].append(message)
    split = {bug: found for bug, found in by_bug.items() if len(found) > 1}
    extra = sum(len(found) - 1 for found in split.values())
    print(
        f"signatures {len(messages):,}  bugs {len(by_bug):,}  split bugs {len(split):,}  "
        f"extra signatures {extra:,} ({extra / len(by_bug):.1%} more issues than bugs)  "
        f"signatures per bug {len(messages) / len(by_bug):.4f}"
    )
    for bug, found in sorted(split.items(), key=lambda item: -len(item[1]))[: args.show]:
        print(f"bug {bug}:")
        for message in sorted(found):
            print(f"    {message}")


if __name__ == "__main__":
    main()
