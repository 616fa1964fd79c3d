"""Defects4J crash bugs as eval cases.

For each bug: the failing trigger test's stack trace (from the data set's trace file, or from a Defects4J
checkout's `framework/projects/<P>/trigger_tests/`), kept only when it is a crash out of the library's own
code (not an assertion of the test), cut where the test runner's frames begin; the faulty revision from
`active-bugs.csv`; where the fault is from `patches/<bug>.src.patch` (the lines it changes at the faulty
revision) and the project's sources at that revision, read with `git show` from a clone of the upstream
repository (the method each changed line is in); the trigger tests as the tests that fail before and pass
after the fix. The case itself keeps facts (paths, names, line numbers, the trace); the files it needs go into
the source store (`store.py`).
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rounds_bot.grouping.stacktrace import parse_stacktrace
from tools.diagnosis_cases.java_methods import enclosing, methods
from tools.diagnosis_cases.patches import changed_lines, spans

#: the upstream repository of each Defects4J project whose revisions are git commits there
UPSTREAM = {
    "Cli": "apache/commons-cli",
    "Codec": "apache/commons-codec",
    "Collections": "apache/commons-collections",
    "Compress": "apache/commons-compress",
    "Csv": "apache/commons-csv",
    "Gson": "google/gson",
    "JacksonCore": "FasterXML/jackson-core",
    "JacksonDatabind": "FasterXML/jackson-databind",
    "Jsoup": "jhy/jsoup",
    "Lang": "apache/commons-lang",
    "Math": "apache/commons-math",
    "Time": "JodaOrg/joda-time",
}
ASSERTIONS = frozenset(
    {
        "junit.framework.AssertionFailedError",
        "junit.framework.ComparisonFailure",
        "org.junit.ComparisonFailure",
        "org.junit.internal.ArrayComparisonFailure",
        "java.lang.AssertionError",
        "org.opentest4j.AssertionFailedError",
        "org.junit.runners.model.TestTimedOutException",
    }
)
_RUNNER_FRAMES = (
    "at sun.reflect.",
    "at jdk.internal.reflect.",
    "at java.lang.reflect.",
    "at junit.",
    "at org.junit.",
)
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Trigger:
    project: str
    bug: int
    test: str
    trace: str


class Git:
    """`git show` and friends on one repository's git directory."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir

    def show(self, revision: str, path: str) -> str | None:
        done = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "show", f"{revision}:{path}"],
            capture_output=True,
            timeout=60,
        )
        return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def triggers_from_traces(path: Path) -> Iterator[Trigger]:
    """The data set's trace file: one JSON object per failing test."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            yield Trigger(row["project"], int(row["bug_id"]), row["test"], row["trace"])


def triggers_from_checkout(d4j: Git, project: str, bug: int) -> Iterator[Trigger]:
    """`trigger_tests/<bug>`: `--- test` headers, each followed by its trace."""
    text = d4j.show("HEAD", f"framework/projects/{project}/trigger_tests/{bug}") or ""
    test, lines = None, []
    for line in [*text.splitlines(), "--- "]:
        if line.startswith("--- "):
            if test and lines:
                yield Trigger(project, bug, test, "\n".join(lines))
            test, lines = line[4:].strip(), []
        else:
            lines.append(line)


def projects(d4j: Git) -> list[str]:
    """The projects of a Defects4J checkout (`framework/projects/<Name>/`)."""
    listed = subprocess.run(
        ["git", "--git-dir", str(d4j.git_dir), "ls-tree", "--name-only", "-d", "HEAD:framework/projects/"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    return sorted(name for name in listed if name[:1].isupper())


def active_bugs(d4j: Git, project: str) -> dict[int, dict[str, str]]:
    text = d4j.show("HEAD", f"framework/projects/{project}/active-bugs.csv") or ""
    return {int(row["bug.id"]): row for row in csv.DictReader(io.StringIO(text))}


def source_root(d4j: Git, project: str, revision: str) -> str:
    text = d4j.show("HEAD", f"framework/projects/{project}/dir-layout.csv") or ""
    for row in csv.reader(io.StringIO(text)):
        if row and row[0] == revision:
            return row[1].strip("/")
    return "src/main/java"


def cut_trace(trace: str) -> str:
    """The trace up to the test's own frame: the test runner's frames say nothing about the bug."""
    kept: list[str] = []
    for line in trace.splitlines():
        if line.strip().startswith(_RUNNER_FRAMES) and any(k.strip().startswith("at ") for k in kept):
            break
        kept.append(line)
    return "\n".join(kept)


def class_path(root: str, module: str) -> str:
    return f"{root}/{module.split('$')[0].replace('.', '/')}.java"


def build_case(
    d4j: Git, upstream: Git, project: str, bug: int, row: dict[str, str], triggers: list[Trigger]
) -> tuple[dict[str, Any] | None, str]:
    """The case of one bug, or None and why it is left out."""
    revision = row["revision.id.buggy"]
    root = source_root(d4j, project, revision)
    crash = next((t for t in triggers if _crash_files(t, upstream, revision, root)), None)
    if crash is None:
        return None, "no failing test is a crash in the library's code"
    patch = d4j.show("HEAD", f"framework/projects/{project}/patches/{bug}.src.patch") or ""
    faults = _faults(patch, upstream, revision)
    if not faults:
        return None, "the patch changes no Java file at the faulty revision"
    files = sorted({fault["path"] for fault in faults} | set(_crash_files(crash, upstream, revision, root)))
    trace = cut_trace(crash.trace)
    first = trace.splitlines()[0] if trace else ""
    error_type, _, message = first.partition(":")
    case_id = f"d4j-{project.lower()}-{bug}"
    case = {
        "format": 1,
        "id": case_id,
        "kind": "crash",
        "origin": {
            "dataset": "defects4j",
            "reference": f"{project}-{bug}",
            "licence": "Defects4J data: MIT; the project's code: its own licence (not copied here)",
            "url": row.get("report.url", ""),
        },
        "service": project.lower(),
        "telemetry": [
            {
                "event_id": f"{case_id}-1",
                "timestamp": WHEN.isoformat(),
                "service": project.lower(),
                "kind": "exception",
                "error_type": error_type.strip(),
                "message": message.strip(),
                "stacktrace": trace,
            }
        ],
        "repository": {
            "url": f"https://github.com/{UPSTREAM[project]}",
            "revision": revision,
            "files": files,
        },
        "truth": {
            "classification": "server_bug",
            "faults": faults,
            "fix": {
                "reference": f"defects4j framework/projects/{project}/patches/{bug}.src.patch, reversed",
                "changed_lines": sum(
                    1
                    for line in patch.splitlines()
                    if line[:1] in "+-" and not line.startswith(("+++", "---"))
                ),
            },
            "tests": {
                "failing_before": sorted({t.test for t in triggers}),
                "passing_after": sorted({t.test for t in triggers}),
                "command": f"defects4j checkout -p {project} -v {bug}b; defects4j test -t <test>",
            },
        },
    }
    return case, "kept"


def _crash_files(trigger: Trigger, upstream: Git, revision: str, root: str) -> list[str]:
    """The library files of the frames below the test, when the failure is a crash raised beneath them."""
    parsed = parse_stacktrace(trigger.trace)
    if parsed is None or not parsed.exceptions or parsed.exceptions[0].type in ASSERTIONS:
        return []
    found: list[str] = []
    for frame in parsed.exceptions[0].frames:
        module = frame.module or ""
        if (
            module.endswith("Test")
            or ".test" in module.lower()
            or module.startswith(("java.", "sun.", "jdk."))
        ):
            if found or module.endswith("Test"):
                break
            continue
        path = class_path(root, module)
        if path not in found and upstream.show(revision, path) is not None:
            found.append(path)
    return found


def _faults(patch: str, upstream: Git, revision: str) -> list[dict[str, Any]]:
    faults = []
    for path, numbers in changed_lines(patch, side="+").items():
        text = upstream.show(revision, path)
        if text is None or not path.endswith(".java"):
            continue
        found = methods(text)
        for first, last in spans(numbers):
            method = enclosing(found, first) or enclosing(found, last)
            name = method.name if method else Path(path).stem
            faults.append({"path": path, "function": name, "start_line": first, "end_line": last})
    return faults
