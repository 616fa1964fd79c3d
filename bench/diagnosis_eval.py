"""Diagnosis eval over the project's case folder: the table, and scripted recordings made with the real CLI.

    python bench/diagnosis_eval.py [--sources DIR] [--out DIR] [--fix]
        the crash-site baseline and every recorded row (evals/diagnosis/recordings), as `rounds eval` prints
        (with `--fix`, as `rounds eval --fix`: each recorded fix tested where the bug's tests can run)
    python bench/diagnosis_eval.py --record-scripted [--sources DIR] [--limit N] [--only-missing|--only-stale]
        (re)write evals/diagnosis/recordings/scripted-crash-site: each case through the real Claude Code CLI
        against the local fake Messages API (tests/fake_messages_api.py), the scripted model reading the
        crash site's file when there is one and answering the crash-site baseline's answer. These recordings
        measure no model: they pin the whole path (prompt, CLI, schema, checks) so a replay shows what a
        change to any of them does, and their origin says so. Where a case's tests can run here (the sample
        service's documentation gaps), the recording also holds a scripted fix: the case's real fix
        (`truth.fix.reference`) made as Edit calls by the fix editor (`rounds_bot.eval.fixer`: the real CLI
        with the edit tools, the fix prompt built from the recorded diagnosis, in a git copy of the
        repository), the change it left, through rounds' own patch checks, kept as the recording's
        `fix_patch`.

The last line is machine-readable:
baseline_file_top1=<x> baseline_function_top1=<x> baseline_class=<x> cases=<n>
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT / "tests"))

from diagnosis_samples import fake_api_diagnoser, find_claude  # noqa: E402
from fake_messages_api import FakeMessagesApi, Text, ToolUse, Turn, structured_output, turn  # noqa: E402

from rounds_bot.diagnosis.budget import price_for  # noqa: E402
from rounds_bot.diagnosis.claude_cli import ClaudeCli  # noqa: E402
from rounds_bot.diagnosis.model import DiagnosisOutcome  # noqa: E402
from rounds_bot.eval.baseline import baseline_answer  # noqa: E402
from rounds_bot.eval.cases import LoadedCase, load_cases, with_stored_sources  # noqa: E402
from rounds_bot.eval.fixer import propose_fix  # noqa: E402
from rounds_bot.eval.fixes import runnable  # noqa: E402
from rounds_bot.eval.recordings import save_recording  # noqa: E402
from rounds_bot.eval.report import run_eval  # noqa: E402
from rounds_bot.eval.request import case_request  # noqa: E402
from rounds_bot.eval.runner import prompt_fingerprint, recording_from_outcome  # noqa: E402
from rounds_bot.fixing.editor import FixEditor  # noqa: E402

CASES = PROJECT_ROOT / "evals" / "diagnosis" / "cases"
RECORDINGS = PROJECT_ROOT / "evals" / "diagnosis" / "recordings"
SCRIPTED = "scripted-crash-site"
SCRIPTED_MODEL = "crash-site answer scripted through the real CLI and a fake Messages API (no model)"


def record_scripted(
    cases: list[LoadedCase], work: Path, limit: int | None, only_missing: bool, only_stale: bool = False
) -> None:
    binary = find_claude()
    if binary is None:
        raise SystemExit("no Claude Code CLI found: set ROUNDS_CLAUDE_BIN")
    empty = work / "empty-checkout"
    empty.mkdir(parents=True, exist_ok=True)
    cases = with_stored_sources(cases, work / "sources")
    done = 0
    started = time.perf_counter()
    for loaded in cases:
        if loaded.case is None or (limit is not None and done >= limit):
            continue
        # a stale recording of a case whose sources are not here is made again without them (the prompt
        # does not hold sources: only the scripted Read of the crash site's file is left out)
        if loaded.sources_missing and not (
            only_stale and (RECORDINGS / SCRIPTED / f"{loaded.case.id}.json").is_file()
        ):
            continue
        if only_missing and (RECORDINGS / SCRIPTED / f"{loaded.case.id}.json").is_file():
            continue
        if only_stale and _current(loaded, empty):
            continue
        case = loaded.case
        checkout = loaded.sources or empty
        answer = baseline_answer(case)
        script = []
        location = answer.get("fault_location")
        if location and (checkout / location["path"]).is_file():
            script.append(turn(ToolUse("Read", {"file_path": str(checkout / location["path"])})))
        script.append(structured_output(answer))
        with FakeMessagesApi(script) as api:
            outcome = fake_api_diagnoser(binary, api, max_turns=6).diagnose(case_request(case, checkout))
        recording = recording_from_outcome(case, outcome, empty, origin="scripted", model=SCRIPTED_MODEL)
        patch = scripted_fix(binary, loaded, outcome, work) if runnable(loaded) else None
        update = {"recorded_at": "", "fix_patch": patch}
        save_recording(RECORDINGS, SCRIPTED, recording.model_copy(update=update))
        done += 1
        print(f"{case.id}: {outcome.status} in {outcome.turns} turns", flush=True)
    print(f"recorded {done} cases in {time.perf_counter() - started:.0f} s (shared machine)")


def scripted_fix(binary: str, loaded: LoadedCase, outcome: DiagnosisOutcome, work: Path) -> str:
    """The case's real fix made by the fix editor through the real CLI (`eval.fixer`), as the change it
    leaves after rounds' patch checks."""
    case = loaded.case
    assert case is not None
    patch = (Path(loaded.folder).parent / case.truth.fix.reference).read_text(encoding="utf-8")
    script: list[Turn] = []
    tree = work / "fix" / case.id
    for path, old, new in edits(patch):
        target = str(tree / path)
        script.append(turn(ToolUse("Read", {"file_path": target})))
        script.append(turn(ToolUse("Edit", {"file_path": target, "old_string": old, "new_string": new})))
    script.append(turn(Text("The error now says what the caller must change.")))
    with FakeMessagesApi(script) as api:
        cli = ClaudeCli(
            binary=binary,
            model="sonnet",
            credentials={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url},
            inherited_env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            max_turns=12,
            timeout_seconds=90,
        )
        proposed = propose_fix(
            loaded, outcome.diagnosis, FixEditor(cli, price_for("sonnet")), work / "fix", max_cost_usd=1.0
        )
    if proposed.patch is None:
        raise SystemExit(f"{case.id}: the scripted fix was not made: {proposed.detail}")
    return proposed.patch


def edits(patch: str) -> list[tuple[str, str, str]]:
    """Each hunk of a unified diff as (path, old text, new text): what an Edit call changes."""
    found: list[tuple[str, str, str]] = []
    path, old, new = "", list[str](), list[str]()
    for line in [*patch.splitlines(keepends=True), "@@ end"]:
        if line.startswith(("@@", "diff --git")):
            if old or new:
                found.append((path, "".join(old), "".join(new)))
            old, new = [], []
        elif line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
        elif line.startswith(("--- ", "index ")):
            continue
        elif line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
    return found


def _current(loaded: LoadedCase, empty: Path) -> bool:
    """Whether the case's scripted recording exists, was made under today's prompt and holds today's
    scripted answer (the crash-site baseline's class and fault location, and a fix where one is tested)."""
    case = loaded.case
    assert case is not None
    path = RECORDINGS / SCRIPTED / f"{case.id}.json"
    if not path.is_file():
        return False
    recorded = json.loads(path.read_text(encoding="utf-8"))
    answer, expected = recorded.get("answer") or {}, baseline_answer(case)
    same_answer = answer.get("classification") == expected["classification"] and (
        answer.get("fault_location") or {}
    ).get("function") == (expected.get("fault_location") or {}).get("function")
    has_fix = bool(recorded.get("fix_patch")) or not runnable(loaded)
    return bool(
        recorded.get("prompt_fingerprint") == prompt_fingerprint(case, empty) and same_answer and has_fix
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=Path, help="each case's repository files as <case-id>/")
    parser.add_argument("--out", type=Path, help="output folder (default: a temporary one)")
    parser.add_argument("--record-scripted", action="store_true")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--only-missing", action="store_true", help="record only cases without a recording")
    parser.add_argument("--only-stale", action="store_true", help="record only missing or stale recordings")
    parser.add_argument("--fix", action="store_true", help="test each recorded fix (as `rounds eval --fix`)")
    arguments = parser.parse_args()
    cases = load_cases(CASES, arguments.sources)
    with tempfile.TemporaryDirectory() as scratch:
        out = arguments.out or Path(scratch)
        if arguments.record_scripted:
            record_scripted(cases, out, arguments.limit, arguments.only_missing, arguments.only_stale)
        text = run_eval(cases, out, recordings=RECORDINGS, fix=arguments.fix)
    print(text)
    baseline = text.splitlines()[4].split(" | ")
    print(
        f"baseline_file_top1={baseline[3].split()[0]} baseline_function_top1={baseline[4].split()[0]} "
        f"baseline_class={baseline[5].split()[0]} cases={len(cases)}"
    )


if __name__ == "__main__":
    main()
