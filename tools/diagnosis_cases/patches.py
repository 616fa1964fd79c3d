"""The lines a unified diff changes on one side, by file: where the fault is at the faulty revision.

Defects4J's patches go from the fixed revision to the buggy one, so the faulty lines are the `+` side: the
lines the patch adds are the faulty code, and a line it only removes (code the fix added) marks the place
in the faulty file where that code is missing (the line after it).
"""

from __future__ import annotations

import re
from collections import defaultdict

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def changed_lines(diff: str, *, side: str = "+") -> dict[str, list[int]]:
    """Path (the `side` file) -> sorted line numbers of that side the diff changes or inserts at."""
    other = "-" if side == "+" else "+"
    lines: dict[str, set[int]] = defaultdict(set)
    path: str | None = None
    current = 0
    for text in diff.splitlines():
        if text.startswith(("--- ", "+++ ")):
            if text.startswith(f"{side * 3} "):
                name = text[4:].split("\t")[0].strip()
                path = None if name == "/dev/null" else name.removeprefix("a/").removeprefix("b/")
            continue
        hunk = _HUNK.match(text) if side == "+" else None
        if text.startswith("@@"):
            match = hunk or re.match(r"^@@ -(\d+)", text)
            current = int(match.group(1)) if match else 0
            continue
        if path is None or not text:
            if path is not None and not text:
                current += 1
            continue
        marker = text[0]
        if marker == side:
            lines[path].add(current)
            current += 1
        elif marker == other:
            lines[path].add(max(current, 1))
        elif marker == " ":
            current += 1
    return {name: sorted(found) for name, found in lines.items()}


def spans(numbers: list[int], gap: int = 3) -> list[tuple[int, int]]:
    """Runs of line numbers no more than `gap` apart, as (first, last)."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and number - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs
