"""Diagnosis eval over the project's case folder: the table, and scripted recordings made with the real CLI.

    python bench/diagnosis_eval.py [--sources DIR] [--out DIR]
        the crash-site baseline and every recorded row (evals/diagnosis/recordings), as `rounds eval` prints
    python bench/diagnosis_eval.py --record-scripted [--sources DIR] [--limit N] [--only-missing|--only-stale]
        (re)write evals/diagnosis/recordings/scripted-crash-site: each case through the real Claude Code CLI
        against the local fake Messages API (tests/fake_messages_api.py), the scripted model reading the
        crash site's file when there is one and answering the crash-site baseline's answer. These recordings
        measure no model: they pin the whole path (prompt, CLI, schema, checks) so a replay shows what a
        change to any of them does, and their origin says so.

The last line is machine-readable:
baseline_file_top1=<x> baseline_function_top1=<x> baseline_class=<x> cases=<n>
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT / "tests"))

from diagnosis_samples import fake_api_diagnoser, find_claude  # noqa: E402
from fake_messages_api import FakeMessagesApi, ToolUse, structured_output, turn  # noqa: E402

from rounds_bot.eval.baseline import baseline_answer  # noqa: E402
from rounds_bot.eval.cases import Case, LoadedCase, load_cases  # noqa: E402
from rounds_bot.eval.recordings import save_recording  # noqa: E402
from rounds_bot.eval.report import run_eval  # noqa: E402
from rounds_bot.eval.request import case_request  # noqa: E402
from rounds_bot.eval.runner import prompt_fingerprint, recording_from_outcome  # noqa: E402

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
        if only_stale and _current(loaded.case, empty):
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
        save_recording(RECORDINGS, SCRIPTED, recording.model_copy(update={"recorded_at": ""}))
        done += 1
        print(f"{case.id}: {outcome.status} in {outcome.turns} turns", flush=True)
    print(f"recorded {done} cases in {time.perf_counter() - started:.0f} s (shared machine)")


def _current(case: Case, empty: Path) -> bool:
    """Whether the case's scripted recording exists and was made under today's prompt."""
    path = RECORDINGS / SCRIPTED / f"{case.id}.json"
    if not path.is_file():
        return False
    recorded = json.loads(path.read_text(encoding="utf-8")).get("prompt_fingerprint")
    return bool(recorded == prompt_fingerprint(case, empty))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=Path, help="each case's repository files as <case-id>/")
    parser.add_argument("--out", type=Path, help="output folder (default: a temporary one)")
    parser.add_argument("--record-scripted", action="store_true")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--only-missing", action="store_true", help="record only cases without a recording")
    parser.add_argument("--only-stale", action="store_true", help="record only missing or stale recordings")
    arguments = parser.parse_args()
    cases = load_cases(CASES, arguments.sources)
    with tempfile.TemporaryDirectory() as scratch:
        out = arguments.out or Path(scratch)
        if arguments.record_scripted:
            record_scripted(cases, out, arguments.limit, arguments.only_missing, arguments.only_stale)
        text = run_eval(cases, out, recordings=RECORDINGS)
    print(text)
    baseline = text.splitlines()[4].split(" | ")
    print(
        f"baseline_file_top1={baseline[3].split()[0]} baseline_function_top1={baseline[4].split()[0]} "
        f"baseline_class={baseline[5].split()[0]} cases={len(cases)}"
    )


if __name__ == "__main__":
    main()
