"""BugsInPy crash bugs as eval cases, from traces made by running each bug's failing test.

BugsInPy keeps no failing output, so this runs it: for each bug, the project's tree at the faulty revision
with the fixed revision's test files (the bug's test comes with its fix), and the tree at the fixed
revision (`git archive` from a clone of the upstream repository, into a scratch folder that is removed
after), the bug's test command (`run_test.sh`, pytest with native tracebacks) in each, with a timeout and no
network. A bug is kept when its test fails at the faulty revision with an exception raised beneath the
project's own code (not an assertion), and passes at the fixed one: a failure of the old code under today's
Python, or of a missing dependency, is not the bug and is left out. Where the fault is comes from
`bug_patch.txt` (faulty to fixed: its `-` side) and the function holding each changed line (`ast`).
Paths of the scratch folder are replaced by `/srv/app/`, and the interpreter's by `/usr/local/lib/pythonX.Y/`,
as a deployed service would print them.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rounds_bot.grouping.stacktrace import parse_stacktrace
from tools.diagnosis_cases.defects4j import Git
from tools.diagnosis_cases.patches import changed_lines, spans

UPSTREAM = {
    "youtube-dl": "ytdl-org/youtube-dl",
    "tqdm": "tqdm/tqdm",
    "PySnooper": "cool-RR/PySnooper",
    "black": "psf/black",
    "thefuck": "nvbn/thefuck",
    "tornado": "tornadoweb/tornado",
    "fastapi": "tiangolo/fastapi",
}
ASSERTIONS = frozenset({"AssertionError", "Failed", "_pytest.outcomes.Failed", "pytest.fail.Exception"})
DEPLOYED = "/srv/app/"
WHEN = datetime(2024, 1, 1, tzinfo=UTC)
TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class Bug:
    project: str
    number: int
    info: dict[str, str]
    commands: list[str]
    patch: str


def bugs(bip: Git, project: str) -> list[Bug]:
    listed = subprocess.run(
        ["git", "--git-dir", str(bip.git_dir), "ls-tree", "--name-only", f"HEAD:projects/{project}/bugs"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    found = []
    for name in sorted(listed, key=lambda n: int(n) if n.isdigit() else 0):
        base = f"projects/{project}/bugs/{name}"
        info = _info(bip.show("HEAD", f"{base}/bug.info") or "")
        commands = [c for c in (bip.show("HEAD", f"{base}/run_test.sh") or "").splitlines() if c.strip()]
        found.append(Bug(project, int(name), info, commands, bip.show("HEAD", f"{base}/bug_patch.txt") or ""))
    return found


def build_case(
    bug: Bug, upstream: Git, scratch: Path, python: str = sys.executable
) -> tuple[dict[str, Any] | None, str]:
    """The case, or None and why the bug was left out."""
    buggy, fixed = bug.info.get("buggy_commit_id", ""), bug.info.get("fixed_commit_id", "")
    if not buggy or not fixed or not bug.commands:
        return None, "no revisions or test command"
    faulty = _tree(upstream, buggy, scratch / "faulty")
    fixed_tree = _tree(upstream, fixed, scratch / "fixed")
    if faulty is None or fixed_tree is None:
        return None, "a revision is not in the upstream clone"
    # the bug's test comes with its fix: run the fixed revision's test files against the faulty code
    for test_file in filter(None, bug.info.get("test_file", "").split(";")):
        source = fixed_tree / test_file.strip()
        if source.is_file():
            (faulty / test_file.strip()).parent.mkdir(parents=True, exist_ok=True)
            (faulty / test_file.strip()).write_bytes(source.read_bytes())
    failed = _run(bug, faulty, python)
    trace = _last_traceback(failed)
    if trace is None:
        return None, "the test does not fail with a traceback at the faulty revision"
    frames = _library_frames(trace, faulty, bug)
    if not frames:
        return None, "no failing test is a crash in the project's code"
    if _failed(_run(bug, fixed_tree, python)):
        return None, "the test does not pass at the fixed revision here"
    faults = _faults(bug.patch, faulty)
    if not faults:
        return None, "the patch changes no Python function"
    return _case(bug, buggy, deployed(trace, faulty), faults, frames), "kept"


_INTERPRETER = re.compile(r'File "/[^"]*?/lib/(python\d+\.\d+)/')


def deployed(trace: str, tree: Path) -> str:
    """The trace as a deployed service prints it: the project under /srv/app/, the interpreter's own modules
    and packages under /usr/local/lib/pythonX.Y/, whichever folders they ran from here."""
    return _INTERPRETER.sub(r'File "/usr/local/lib/\1/', trace.replace(str(tree) + "/", DEPLOYED))


def _case(
    bug: Bug, buggy: str, trace: str, faults: list[dict[str, Any]], frames: list[str]
) -> dict[str, Any]:
    last = trace.strip().splitlines()[-1]
    error_type, _, message = last.partition(":")
    case_id = f"bugsinpy-{bug.project.lower()}-{bug.number}"
    service = bug.project.lower()
    return {
        "format": 1,
        "id": case_id,
        "kind": "crash",
        "origin": {
            "dataset": "bugsinpy",
            "reference": f"{bug.project}-{bug.number}",
            "licence": "BugsInPy data: MIT; the project's code: its own licence (not copied here)",
            "url": bug.info.get("github_url", ""),
        },
        "service": service,
        "telemetry": [
            {
                "event_id": f"{case_id}-1",
                "timestamp": WHEN.isoformat(),
                "service": service,
                "kind": "exception",
                "error_type": error_type.strip(),
                "message": message.strip(),
                "stacktrace": trace.strip(),
            }
        ],
        "repository": {
            "url": f"https://github.com/{UPSTREAM[bug.project]}",
            "revision": buggy,
            "files": sorted({fault["path"] for fault in faults} | set(frames)),
        },
        "truth": {
            "classification": "server_bug",
            "faults": faults,
            "fix": {
                "reference": f"bugsinpy projects/{bug.project}/bugs/{bug.number}/bug_patch.txt",
                "changed_lines": sum(
                    1
                    for line in bug.patch.splitlines()
                    if line[:1] in "+-" and not line.startswith(("+++", "---"))
                ),
            },
            "tests": {
                "failing_before": bug.commands,
                "passing_after": bug.commands,
                "command": "; ".join(bug.commands),
            },
        },
    }


def _info(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found[key.strip()] = value.strip().strip('"')
    return found


def _tree(upstream: Git, revision: str, into: Path) -> Path | None:
    archive = subprocess.run(
        ["git", "--git-dir", str(upstream.git_dir), "archive", "--format=tar", revision],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        return None
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as handle:
        handle.write(archive.stdout)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    return into


def _run(bug: Bug, tree: Path, python: str) -> str:
    output = []
    python_path = os.pathsep.join([str(tree), str(tree / bug.info.get("pythonpath", "").strip("/"))])
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": python_path,
        "HOME": str(tree),
        "LANG": "C.UTF-8",
        "no_proxy": "*",
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    for command in bug.commands:
        argv = [python if part in ("python", "python3") else part for part in shlex.split(command)]
        if argv and argv[0] == "pytest":
            argv = [python, "-m", "pytest", *argv[1:]]
        if "pytest" in argv:
            argv += ["--tb=native", "-p", "no:cacheprovider", "-q"]
        try:
            done = subprocess.run(
                argv,
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            output.append("TIMEOUT")
            continue
        output.append(f"EXIT {done.returncode}\n{done.stdout}\n{done.stderr}")
    return "\n".join(output)


def _failed(output: str) -> bool:
    return "TIMEOUT" in output or any(
        line.startswith("EXIT ") and line != "EXIT 0" for line in output.splitlines()
    )


_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\n(?:[ \t].*\n)+\S[^\n]*", re.MULTILINE)


def _last_traceback(output: str) -> str | None:
    if not _failed(output):
        return None
    found = _TRACEBACK.findall(output + "\n")
    return found[0] if found else None


def _library_frames(trace: str, tree: Path, bug: Bug) -> list[str]:
    """The project's own (non-test) files among the frames beneath the test, when the error is a crash."""
    parsed = parse_stacktrace(trace)
    if parsed is None or not parsed.exceptions or parsed.exceptions[0].type.split(".")[-1] in ASSERTIONS:
        return []
    root = str(tree) + "/"
    files: list[str] = []
    for frame in parsed.exceptions[0].frames:  # innermost first
        path = (frame.filename or "").removeprefix(root)
        if path == frame.filename:
            continue  # the standard library or an installed package
        if _is_test(path):
            break
        if path not in files:
            files.append(path)
    return files


def _is_test(path: str) -> bool:
    parts = path.split("/")
    return any(part in ("test", "tests", "testing") for part in parts) or parts[-1].startswith("test")


def _faults(patch: str, tree: Path) -> list[dict[str, Any]]:
    faults = []
    for path, numbers in changed_lines(patch, side="-").items():
        file = tree / path
        if not path.endswith(".py") or _is_test(path) or not file.is_file():
            continue
        functions = _functions(file.read_text(encoding="utf-8", errors="replace"))
        for first, last in spans(numbers):
            holding = [f for f in functions if f[1] <= first <= f[2]] or [
                f for f in functions if f[1] <= last <= f[2]
            ]
            name = min(holding, key=lambda f: f[2] - f[1])[0] if holding else Path(path).stem
            faults.append({"path": path, "function": name, "start_line": first, "end_line": last})
    return faults


def _functions(text: str) -> list[tuple[str, int, int]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [
        (node.name, node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
