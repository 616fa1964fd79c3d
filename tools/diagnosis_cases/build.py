"""Write the diagnosis eval's case folder from public data.

    python -m tools.diagnosis_cases.build --out evals/diagnosis/cases \
        --defects4j <defects4j git dir> --traces <defects4j_traces/traces.jsonl> \
        --upstream Lang=<commons-lang git dir> --upstream Gson=<gson git dir> ... \
        --loghub <loghub_2k folder> [--sources-out <folder>] [--all-trigger-tests]

Defects4J crash bugs (`defects4j.py`), from the trace file when given (the bugs it covers) or, with
`--all-trigger-tests`, from every bug's trigger tests in the Defects4J checkout; BugsInPy crash bugs
(`bugsinpy.py`: `--bugsinpy <clone> --bugsinpy-upstream youtube-dl=<clone>`, each bug's test run here);
abstain cases from real log lines (`loghub.py`); client-misuse, documentation-gap, dependency and
abstain cases on a small sample service (`scenarios.py`). A project without `--upstream` is skipped and
said so. The summary line counts the cases by kind and source and every bug left out, with why.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from tools.diagnosis_cases import bugsinpy, loghub, scenarios
from tools.diagnosis_cases.defects4j import (
    UPSTREAM,
    Git,
    Trigger,
    active_bugs,
    build_case,
    triggers_from_checkout,
    triggers_from_traces,
    write_sources,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the case folder to (re)write")
    parser.add_argument("--defects4j", type=Path, help="git directory of a Defects4J clone")
    parser.add_argument("--traces", type=Path, help="Defects4J trace file (JSON lines)")
    parser.add_argument("--all-trigger-tests", action="store_true", help="every bug's trigger tests instead")
    parser.add_argument("--upstream", action="append", default=[], metavar="PROJECT=GITDIR")
    parser.add_argument("--bugsinpy", type=Path, help="git directory of a BugsInPy clone")
    parser.add_argument("--bugsinpy-upstream", action="append", default=[], metavar="PROJECT=GITDIR")
    parser.add_argument(
        "--bugsinpy-python",
        action="append",
        default=[],
        metavar="PROJECT=PYTHON",
        help="the interpreter for a project's tests (a Python version BugsInPy names, with pytest)",
    )
    parser.add_argument("--loghub", type=Path, help="the loghub_2k folder, for abstain cases")
    parser.add_argument("--sources-out", type=Path, help="write each Defects4J case's files here")
    arguments = parser.parse_args(argv)

    out: Path = arguments.out
    skipped: Counter[str] = Counter()
    written: Counter[tuple[str, str]] = Counter()
    _clear(out)
    cases: list[dict[str, Any]] = []
    if arguments.defects4j:
        upstreams = dict(item.split("=", 1) for item in arguments.upstream)
        cases += _defects4j(arguments, upstreams, skipped)
    if arguments.bugsinpy:
        upstreams = dict(item.split("=", 1) for item in arguments.bugsinpy_upstream)
        cases += _bugsinpy(arguments, upstreams, skipped)
    if arguments.loghub:
        cases += loghub.cases(arguments.loghub)
    cases += scenarios.cases()
    for case in cases:
        folder = out / case["id"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "case.json").write_text(
            json.dumps(case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        written[(case["kind"], case["origin"]["dataset"])] += 1
    print(
        f"{sum(written.values())} cases: "
        + ", ".join(f"{k} from {d}: {n}" for (k, d), n in sorted(written.items()))
    )
    print("left out: " + (", ".join(f"{why}: {n}" for why, n in sorted(skipped.items())) or "none"))


def _defects4j(
    arguments: argparse.Namespace, upstreams: dict[str, str], skipped: Counter[str]
) -> list[dict[str, Any]]:
    d4j = Git(arguments.defects4j)
    by_bug: dict[tuple[str, int], list[Trigger]] = defaultdict(list)
    if arguments.traces and not arguments.all_trigger_tests:
        for trigger in triggers_from_traces(arguments.traces):
            by_bug[(trigger.project, trigger.bug)].append(trigger)
    else:
        for project in UPSTREAM:
            for bug in active_bugs(d4j, project):
                by_bug[(project, bug)] += list(triggers_from_checkout(d4j, project, bug))
    cases = []
    bugs_of: dict[str, dict[int, dict[str, str]]] = {}
    for (project, bug), triggers in sorted(by_bug.items()):
        if project not in UPSTREAM:
            skipped[f"{project} (revisions are not commits of a git repository)"] += 1
            continue
        if project not in upstreams:
            skipped[f"{project} (no --upstream clone)"] += 1
            continue
        bugs = bugs_of.setdefault(project, active_bugs(d4j, project))
        if bug not in bugs:
            skipped["not an active bug"] += 1
            continue
        upstream = Git(Path(upstreams[project]))
        case = build_case(d4j, upstream, project, bug, bugs[bug], triggers)
        if case is None:
            skipped["no failing test is a crash in the library's code"] += 1
            continue
        cases.append(case)
        if arguments.sources_out:
            write_sources(case, upstream, arguments.sources_out)
    return cases


def _bugsinpy(
    arguments: argparse.Namespace, upstreams: dict[str, str], skipped: Counter[str]
) -> list[dict[str, Any]]:
    clone = Git(arguments.bugsinpy)
    pythons = dict(item.split("=", 1) for item in arguments.bugsinpy_python)
    cases = []
    for project, git_dir in sorted(upstreams.items()):
        upstream = Git(Path(git_dir))
        for bug in bugsinpy.bugs(clone, project):
            with tempfile.TemporaryDirectory() as scratch:
                case, why = bugsinpy.build_case(
                    bug, upstream, Path(scratch), pythons.get(project, sys.executable)
                )
            print(f"{project}-{bug.number}: {why}", flush=True)
            if case is None:
                skipped[f"BugsInPy: {why}"] += 1
                continue
            cases.append(case)
            if arguments.sources_out:
                write_sources(case, upstream, arguments.sources_out)
    return cases


def _clear(out: Path) -> None:
    """Remove the cases this script wrote before, so a bug no longer built does not linger (the shared
    repositories, `_*` folders, stay)."""
    if not out.is_dir():
        return
    for folder in out.iterdir():
        if folder.is_dir() and (folder / "case.json").is_file():
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
