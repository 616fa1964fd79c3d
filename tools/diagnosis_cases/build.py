"""Write the diagnosis eval's case folder from public data.

    python -m tools.diagnosis_cases.build --out evals/diagnosis/cases \
        --defects4j <defects4j git dir> --traces <defects4j_traces/traces.jsonl> \
        --upstream Lang=<commons-lang git dir> --upstream Gson=<gson git dir> ... \
        --loghub <loghub_2k folder> [--all-trigger-tests] [--keep bugsinpy]

Defects4J crash bugs (`defects4j.py`), from the trace file when given (the bugs it covers) or, with
`--all-trigger-tests`, from every bug's trigger tests in the Defects4J checkout; BugsInPy crash bugs
(`bugsinpy.py`: `--bugsinpy <clone> --bugsinpy-upstream youtube-dl=<clone>`, each bug's test run here);
abstain cases from real log lines (`loghub.py`); client-misuse, documentation-gap, dependency and
abstain cases on a small sample service (`scenarios.py`). A project without `--upstream` is skipped and
said so, and so is a bug whose faulty revision the clone lacks. Each crash case's files at its revision go
into the content-addressed store (`store.py`: `<out>/_sources/`, one manifest per case), with the upstream
projects' licences. `--keep DATASET` leaves that data set's cases as they are (BugsInPy's: their tests are
not run again) and only writes their sources. The summary lines count the cases by kind and source, every
bug left out with why, and the store's size.
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
    projects,
    triggers_from_checkout,
    triggers_from_traces,
)
from tools.diagnosis_cases.store import SourceStore, has_commit, needed_files


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
    parser.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="DATASET",
        help="leave this data set's cases in --out as they are (e.g. bugsinpy); only write their sources",
    )
    arguments = parser.parse_args(argv)

    out: Path = arguments.out
    skipped: Counter[str] = Counter()
    written: Counter[tuple[str, str]] = Counter()
    kept = _clear(out, set(arguments.keep))
    store = SourceStore(out)
    store.clear()
    cases: list[tuple[dict[str, Any], Path | None]] = []
    if arguments.defects4j:
        upstreams = dict(item.split("=", 1) for item in arguments.upstream)
        cases += _defects4j(arguments, upstreams, skipped)
    if arguments.bugsinpy:
        upstreams = dict(item.split("=", 1) for item in arguments.bugsinpy_upstream)
        cases += _bugsinpy(arguments, upstreams, skipped)
    if kept:
        upstreams = dict(item.split("=", 1) for item in arguments.bugsinpy_upstream)
        cases += _kept(kept, upstreams)
    if arguments.loghub:
        cases += [(case, None) for case in loghub.cases(arguments.loghub)]
    cases += [(case, None) for case in scenarios.cases()]
    licences: dict[str, Path] = {}
    incomplete: list[str] = []
    for case, git_dir in cases:
        folder = out / case["id"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "case.json").write_text(
            json.dumps(case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if git_dir is not None:
            if store.write_case(case, folder, git_dir) < len(needed_files(case)):
                incomplete.append(case["id"])
            licences[case["repository"]["url"].rsplit("/", 1)[-1]] = git_dir
        written[(case["kind"], case["origin"]["dataset"])] += 1
    print(
        f"{sum(written.values())} cases: "
        + ", ".join(f"{k} from {d}: {n}" for (k, d), n in sorted(written.items()))
    )
    print("left out: " + (", ".join(f"{why}: {n}" for why, n in sorted(skipped.items())) or "none"))
    for project, git_dir in sorted(licences.items()):
        if not store.write_licences(project, git_dir):
            print(f"warning: no licence file found in {project}'s clone", file=sys.stderr)
    if incomplete:
        print(f"sources incomplete (a revision or file not in the clone): {len(incomplete)}: {incomplete}")
    print(f"sources: {len(store.added)} files, {store.size() / 1e6:.1f} MB (licences included)")


def _defects4j(
    arguments: argparse.Namespace, upstreams: dict[str, str], skipped: Counter[str]
) -> list[tuple[dict[str, Any], Path | None]]:
    d4j = Git(arguments.defects4j)
    by_bug: dict[tuple[str, int], list[Trigger]] = defaultdict(list)
    if arguments.traces and not arguments.all_trigger_tests:
        for trigger in triggers_from_traces(arguments.traces):
            by_bug[(trigger.project, trigger.bug)].append(trigger)
    else:
        for project in projects(d4j):
            if project not in UPSTREAM:
                # its bugs are counted below as left out, with why, without reading their tests
                by_bug.update({(project, bug): [] for bug in active_bugs(d4j, project)})
                continue
            for bug in active_bugs(d4j, project):
                by_bug[(project, bug)] += list(triggers_from_checkout(d4j, project, bug))
    cases: list[tuple[dict[str, Any], Path | None]] = []
    bugs_of: dict[str, dict[int, dict[str, str]]] = {}
    for (project, bug), triggers in sorted(by_bug.items()):
        if project == "Chart":
            skipped[f"{project} (revisions are not commits of a git repository)"] += 1
            continue
        if project not in UPSTREAM:
            skipped[f"{project} (no upstream repository known to the builder)"] += 1
            continue
        if project not in upstreams:
            skipped[f"{project} (no --upstream clone)"] += 1
            continue
        bugs = bugs_of.setdefault(project, active_bugs(d4j, project))
        if bug not in bugs:
            skipped["not an active bug"] += 1
            continue
        upstream = Git(Path(upstreams[project]))
        if not has_commit(upstream.git_dir, bugs[bug]["revision.id.buggy"]):
            skipped[f"{project} (the faulty revision is not in the --upstream clone)"] += 1
            continue
        case, why = build_case(d4j, upstream, project, bug, bugs[bug], triggers)
        if case is None:
            skipped[why] += 1
            continue
        cases.append((case, upstream.git_dir))
    return cases


def _bugsinpy(
    arguments: argparse.Namespace, upstreams: dict[str, str], skipped: Counter[str]
) -> list[tuple[dict[str, Any], Path | None]]:
    clone = Git(arguments.bugsinpy)
    pythons = dict(item.split("=", 1) for item in arguments.bugsinpy_python)
    cases: list[tuple[dict[str, Any], Path | None]] = []
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
            cases.append((case, upstream.git_dir))
    return cases


def _kept(kept: list[dict[str, Any]], upstreams: dict[str, str]) -> list[tuple[dict[str, Any], Path | None]]:
    """The kept cases, with the clone their sources come from when one was given for their project."""
    by_service = {project.lower(): Path(git_dir) for project, git_dir in upstreams.items()}
    return [(case, by_service.get(case["service"])) for case in kept]


def _clear(out: Path, keep: set[str]) -> list[dict[str, Any]]:
    """Remove the cases this script wrote before, so a bug no longer built does not linger (the shared
    repositories, `_*` folders, stay); return the cases of the data sets to keep, which stay as they are."""
    kept: list[dict[str, Any]] = []
    if not out.is_dir():
        return kept
    for folder in sorted(out.iterdir()):
        path = folder / "case.json"
        if not (folder.is_dir() and path.is_file()):
            continue
        case = json.loads(path.read_text(encoding="utf-8"))
        if case.get("origin", {}).get("dataset") in keep:
            kept.append(case)
        else:
            shutil.rmtree(folder)
    return kept


if __name__ == "__main__":
    main()
