"""What the crash and fault harness found after each recovery, summed over its scenarios for
`bench/reliability.py`: twin issues, occurrences lost, occurrences counted twice, model calls paid twice."""

from __future__ import annotations

from collections import Counter

TALLY: Counter[str] = Counter()


def record(*, twins: int, happened: int, counted: int, paid_twice: int = 0) -> None:
    """One scenario's outcome, recorded before it is judged (a failed judgement still counts)."""
    TALLY["scenarios"] += 1
    TALLY["twins"] += twins
    TALLY["lost"] += max(happened - counted, 0)
    TALLY["doubled"] += max(counted - happened, 0)
    TALLY["paid_twice"] += paid_twice
