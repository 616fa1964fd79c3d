"""Pictures of a trend, as Mermaid `xychart-beta` blocks GitHub renders in issues and job summaries, or as
small tables where charts are off. Bounded: never more than MAX_BARS bars, whatever the history.

    occurrence_chart(counts)        one signature's occurrences over time (the issue body)
    rounds_chart(rounds)            new and ongoing signatures per round (the job summary)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache

MAX_BARS = 24
#: sets of bins remembered (each MAX_BARS starts and labels)
BINS_MEMO_SIZE = 256
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The bin is the smallest of these that shows the whole history in MAX_BARS bars.
BINS = (
    (timedelta(minutes=5), "5 minutes", "%m-%d %H:%M"),
    (timedelta(hours=1), "hour", "%m-%d %H:00"),
    (timedelta(hours=6), "6 hours", "%m-%d %H:00"),
    (timedelta(days=1), "day", "%Y-%m-%d"),
    (timedelta(days=7), "week", "%Y-%m-%d"),
)


def occurrence_chart(counts: Mapping[datetime, int], *, mermaid: bool = True) -> str:
    """Occurrences per bin from the first one to the last (the last MAX_BARS bins of a longer history)."""
    if not counts:
        return ""
    first, now = min(counts), max(counts)
    step, unit, label_format = next(
        ((s, u, f) for s, u, f in BINS if _floor(now, s) - _floor(first, s) < s * MAX_BARS), BINS[-1]
    )
    last_bin, first_bin = _floor(now, step), _floor(first, step)
    every_start, every_label = _bins(last_bin, step, label_format)
    # the bins from the first occurrence's on (the last bin always is): the bins start whole steps apart,
    # so the first occurrence's is as many bins before the last as whole steps lie between their starts
    shown = max(MAX_BARS - 1 - (last_bin - first_bin) // step, 0)
    starts, labels = every_start[shown:], list(every_label[shown:])
    bars = [0] * len(starts)
    # a moment's bar: how many steps its bin starts after the first bar's (both are whole steps from
    # the epoch, so the steps from the epoch to each, subtracted)
    origin = (starts[0] - _EPOCH) // step
    for moment, count in counts.items():
        index = (moment.astimezone(UTC) - _EPOCH) // step - origin
        if 0 <= index < len(bars):
            bars[index] += count
    title = f"Occurrences per {unit} (UTC)"
    if not mermaid:
        return _table(title, ["from", "occurrences"], list(zip(labels, bars, strict=True)))
    return _mermaid(title, labels, {"bar": bars}, y_label="occurrences")


# The bins are a function of the last one's start, the step and the format alone, so a remembered set is
# never stale; the issues of a round end in the same few bins.
@lru_cache(maxsize=BINS_MEMO_SIZE)
def _bins(end: datetime, step: timedelta, label_format: str) -> tuple[tuple[datetime, ...], tuple[str, ...]]:
    """The starts of the MAX_BARS bins ending with the one starting at `end`, and their labels."""
    starts = tuple(end - step * i for i in reversed(range(MAX_BARS)))
    return starts, tuple(start.strftime(label_format) for start in starts)


def rounds_chart(rounds: Sequence[tuple[datetime, int, int]], *, mermaid: bool = True) -> str:
    """New (bars) and ongoing (line) signatures for the last MAX_BARS rounds: (started, new, ongoing)."""
    recent = list(rounds)[-MAX_BARS:]
    if not recent:
        return ""
    labels = _round_labels([started for started, _, _ in recent])
    new = [n for _, n, _ in recent]
    ongoing = [o for _, _, o in recent]
    title = "New (bars) and ongoing (line) signatures per round"
    if not mermaid:
        return _table(title, ["round", "new", "ongoing"], list(zip(labels, new, ongoing, strict=True)))
    return _mermaid(title, labels, {"bar": new, "line": ongoing}, y_label="signatures")


def _round_labels(starts: Sequence[datetime]) -> list[str]:
    """One label per round, never two alike (Mermaid merges bars that share an x-axis label): to the minute,
    with seconds for rounds that share a minute, and a run index suffix (` (2)`) for any that still match."""
    minutes = [s.astimezone(UTC).strftime("%m-%d %H:%M") for s in starts]
    labels = [
        s.astimezone(UTC).strftime("%m-%d %H:%M:%S") if minutes.count(m) > 1 else m
        for s, m in zip(starts, minutes, strict=True)
    ]
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if labels.count(label) == 1 else f"{label} ({seen[label]})")
    return unique


def _mermaid(title: str, labels: list[str], series: dict[str, list[int]], *, y_label: str) -> str:
    top = max((max(values) for values in series.values()), default=0)
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{title}"',
        "    x-axis [" + ", ".join(f'"{label}"' for label in labels) + "]",
        f'    y-axis "{y_label}" 0 --> {max(top, 1)}',
        *(f"    {kind} [{', '.join(str(v) for v in values)}]" for kind, values in series.items()),
        "```",
    ]
    return "\n".join(lines)


def _table(title: str, header: list[str], rows: list[tuple[object, ...]]) -> str:
    lines = [f"_{title}_", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows if any(row[1:])]
    return "\n".join(lines)


def _floor(moment: datetime, step: timedelta) -> datetime:
    return _EPOCH + ((moment.astimezone(UTC) - _EPOCH) // step) * step
