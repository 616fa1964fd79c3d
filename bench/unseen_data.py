"""Lay out the labelled data the shared data folder leaves out, for `bench/grouping.py --also`.

The shared data holds eight Loghub-2k systems and nine Defects4J projects; the engine's rules
were looked at against them. Their public repositories hold more: the other Loghub-2k systems
(Android, Apache, HealthApp, Linux, Mac, OpenSSH, Proxifier, Windows) and the other Defects4J
projects (Closure, JacksonDatabind, JacksonXml, Jsoup, JxPath, Math, Mockito, Time). This script
extracts those, in the shared folder's layout, from clones of the two repositories (at the
commits the shared data names), so the benchmark can say how the engine does on data it was
never fitted to:

    git clone https://github.com/logpai/loghub && git clone https://github.com/rjust/defects4j
    python bench/unseen_data.py --loghub loghub --defects4j defects4j --out ../unseen
    python bench/grouping.py --also ../unseen

Defects4J's `trigger_tests/<bug>` files become `traces.jsonl` rows as the shared data has them:
one per failing test, its group the bug. Licences: see the two repositories (Loghub: research
use, cite the Loghub paper; Defects4J: MIT).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

LOGHUB_COMMIT = "dd61d0952749ee7963bde24220d1be5ede023033"
DEFECTS4J_COMMIT = "ca4a0ef98686bcd375336b1066acd6a54e875e34"
_LOGHUB_FILE = re.compile(r"^(?P<system>[^/]+)/(?P=system)_2k\.log_(?:structured|templates)\.csv$")


def git_show(repository: Path, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repository), "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout


def git_files(repository: Path, commit: str, under: str = "") -> list[str]:
    command = ["git", "-C", str(repository), "ls-tree", "-r", "--name-only", commit]
    out = subprocess.run([*command, *([under] if under else [])], capture_output=True, check=True, text=True)
    return out.stdout.split()


def loghub(repository: Path, commit: str, known: set[str], out: Path) -> list[str]:
    systems = []
    for path in git_files(repository, commit):
        match = _LOGHUB_FILE.match(path)
        if not match or match["system"] in known:
            continue
        target = out / "loghub_2k" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git_show(repository, commit, path))
        systems.append(match["system"])
    return sorted(set(systems))


def defects4j(repository: Path, commit: str, known: set[str], out: Path) -> dict[str, int]:
    rows: list[dict[str, object]] = []
    for path in sorted(git_files(repository, commit, "framework/projects"), key=_bug_order):
        parts = path.split("/")
        if len(parts) != 5 or parts[3] != "trigger_tests" or not parts[4].isdigit() or parts[2] in known:
            continue
        text = git_show(repository, commit, path).decode("utf-8", "replace")
        for block in re.split(r"^--- ", text, flags=re.M):
            rows += _trace_rows(parts[2], int(parts[4]), block, len(rows))
    target = out / "defects4j_traces" / "traces.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row["project"])] = counts.get(str(row["project"]), 0) + 1
    return counts


def _bug_order(path: str) -> tuple[str, int]:
    parts = path.split("/")
    return (parts[2] if len(parts) > 2 else "", int(parts[-1]) if parts[-1].isdigit() else 0)


def _trace_rows(project: str, bug: int, block: str, first_id: int) -> list[dict[str, object]]:
    test, _, trace = block.partition("\n")
    trace = trace.rstrip("\n")
    if not test.strip() or not trace.strip():
        return []
    header = "\n".join(line for line in _until_first_frame(trace))
    exception_type, _, message = header.partition(":")
    return [
        {
            "id": first_id,
            "project": project,
            "bug_id": bug,
            "group": f"{project}-{bug}",
            "test": test.strip(),
            "exception_type": exception_type.strip(),
            "message": message.strip(),
            "n_frames": trace.count("\n\tat "),
            "trace": trace,
        }
    ]


def _until_first_frame(trace: str) -> list[str]:
    lines = []
    for line in trace.splitlines():
        if line.startswith("\tat "):
            break
        lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loghub", type=Path, required=True, help="a clone of logpai/loghub")
    parser.add_argument("--defects4j", type=Path, required=True, help="a clone of rjust/defects4j")
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    known_systems = {p.name for p in (args.shared / "loghub_2k").iterdir() if p.is_dir()}
    traces = args.shared / "defects4j_traces" / "traces.jsonl"
    known_projects = {json.loads(line)["project"] for line in traces.read_text().splitlines() if line.strip()}
    systems = loghub(args.loghub, LOGHUB_COMMIT, known_systems, args.out)
    projects = defects4j(args.defects4j, DEFECTS4J_COMMIT, known_projects, args.out)
    print(f"Loghub systems: {', '.join(systems)}")
    print(
        f"Defects4J traces: {sum(projects.values())} ({', '.join(f'{p} {n}' for p, n in projects.items())})"
    )


if __name__ == "__main__":
    main()
