"""Abstain cases from real log lines: error and warning lines of eight systems (loghub's 2k samples), one
case per distinct template, with no stack trace and none of the system's code at hand. Nothing in such a
case can locate or classify the fault: not enough evidence is the right answer.

Licence: free for research or academic work; cite the Loghub paper (ISSRE 2023), see the data's LICENSE.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SYSTEMS = ("HDFS", "Hadoop", "Spark", "Zookeeper", "OpenStack", "BGL", "HPC", "Thunderbird")
PER_SYSTEM = 2
_LEVELS = ("ERROR", "FATAL", "SEVERE", "WARN", "FAILURE", "FAILED")
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def cases(root: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for system in SYSTEMS:
        path = root / system / f"{system}_2k.log_structured.csv"
        if path.is_file():
            found += _system_cases(system, path)
    return found


def _system_cases(system: str, path: Path) -> list[dict[str, Any]]:
    chosen: dict[str, list[dict[str, str]]] = {}
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        for row in csv.DictReader(handle):
            if _is_error(row) and (row["EventId"] in chosen or len(chosen) < PER_SYSTEM):
                chosen.setdefault(row["EventId"], []).append(row)
    return [_case(system, event_id, rows[:3]) for event_id, rows in chosen.items()]


def _is_error(row: dict[str, str]) -> bool:
    level = " ".join(str(row.get(key) or "") for key in ("Level", "Label", "Type")).upper()
    content = row.get("Content", "")
    return (
        any(word in level for word in _LEVELS) or "exception" in content.lower() or "error" in content.lower()
    )


def _case(system: str, event_id: str, rows: list[dict[str, str]]) -> dict[str, Any]:
    case_id = f"loghub-{system.lower()}-{event_id.lower()}"
    service = system.lower()
    return {
        "format": 1,
        "id": case_id,
        "kind": "abstain",
        "origin": {
            "dataset": "loghub",
            "reference": f"{system} {event_id}",
            "licence": "loghub: research or academic use, cite Loghub (ISSRE 2023)",
            "url": "https://github.com/logpai/loghub",
        },
        "service": service,
        "telemetry": [
            {
                "event_id": f"{case_id}-{index + 1}",
                "timestamp": (WHEN + timedelta(minutes=index)).isoformat(),
                "service": service,
                "kind": "log",
                "severity": "ERROR",
                "message": row["Content"],
            }
            for index, row in enumerate(rows)
        ],
        "repository": {},
        "truth": {
            "classification": "unknown",
            "abstain": True,
            "notes": "a log line alone, no trace and no code: nothing locates or classifies the fault",
        },
    }
