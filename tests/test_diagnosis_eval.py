"""`rounds eval`: cases through the real diagnosis path, scored against their ground truth, the crash-site
baseline beside every other row, and bad input (a broken case, missing sources, a broken or stale recording,
a failed run) counted in the table, never dropped; nothing written outside the output folder."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from diagnosis_samples import CART_SOURCE, PYTHON_TRACE, fake_api_diagnoser, good_answer
from fake_messages_api import FakeMessagesApi, Text, ToolUse, structured_output, turn

from rounds_bot.cli.app import main
from rounds_bot.diagnosis.budget import price_for
from rounds_bot.diagnosis.claude_cli import ClaudeCli
from rounds_bot.diagnosis.evidence import check_location
from rounds_bot.diagnosis.mcp_server import McpLaunch
from rounds_bot.diagnosis.model import FaultLocation
from rounds_bot.eval.baseline import baseline_answer
from rounds_bot.eval.cases import LoadedCase, load_case, load_cases
from rounds_bot.eval.fixes import check_fix
from rounds_bot.eval.recordings import Recording, load_recordings, save_recording
from rounds_bot.eval.report import run_eval
from rounds_bot.eval.runner import Eval, prompt_fingerprint
from rounds_bot.eval.table import render_table
from rounds_bot.fixing.editor import FixEditor

PROJECT = Path(__file__).resolve().parent.parent
CASES = PROJECT / "evals" / "diagnosis" / "cases"
RECORDINGS = PROJECT / "evals" / "diagnosis" / "recordings"


def crash_case(case_id: str, **changes: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": case_id,
        "kind": "crash",
        "origin": {"dataset": "test", "reference": case_id},
        "service": "shop",
        "telemetry": [
            {
                "event_id": f"{case_id}-1",
                "timestamp": "2024-05-01T10:00:00+00:00",
                "service": "shop",
                "error_type": "ZeroDivisionError",
                "message": "division by zero",
                "stacktrace": PYTHON_TRACE,
            }
        ],
        "repository": {"revision": "abc123", "files": ["shop/cart.py"]},
        "truth": {
            "classification": "server_bug",
            "faults": [{"path": "shop/cart.py", "function": "average_price", "start_line": 6, "end_line": 7}],
        },
    }
    case.update(changes)
    return case


def write_case(root: Path, case: dict[str, Any], *, sources: bool) -> Path:
    folder = root / case["id"]
    folder.mkdir(parents=True)
    (folder / "case.json").write_text(json.dumps(case), encoding="utf-8")
    if sources:
        (folder / "repo" / "shop").mkdir(parents=True)
        (folder / "repo" / "shop" / "cart.py").write_text(CART_SOURCE, encoding="utf-8")
    return folder


def answer_at(function: str, **changes: Any) -> dict[str, Any]:
    location = {"path": "shop/cart.py", "function": function, "start_line": 7}
    return good_answer(**{"fault_location": location, "evidence": good_answer()["evidence"][:1], **changes})


def tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


@pytest.fixture
def bad_input(tmp_path: Path) -> tuple[Path, Path]:
    """A case folder and recordings holding one of each kind of bad input."""
    cases, recordings = tmp_path / "cases", tmp_path / "recordings"
    write_case(cases, crash_case("good"), sources=True)
    write_case(cases, crash_case("no-sources"), sources=False)
    write_case(cases, crash_case("failed-run"), sources=True)
    (cases / "broken").mkdir()
    (cases / "broken" / "case.json").write_text('{"id": "broken", "kind":', encoding="utf-8")
    loaded = {item.id: item for item in load_cases(cases)}
    empty = tmp_path / "empty"
    empty.mkdir()

    def recording(case_id: str, **fields: Any) -> Recording:
        case = loaded[case_id].case
        assert case is not None
        base = {
            "case_id": case_id,
            "origin": "scripted",
            "model": "test script",
            "prompt_fingerprint": prompt_fingerprint(case, empty),
            "status": "ok",
            "answer": answer_at("average_price"),
            "turns": 3,
            "cost_usd": 0.02,
        }
        return Recording.model_validate({**base, **fields})

    save_recording(recordings, "model-x", recording("good"))
    save_recording(recordings, "model-x", recording("no-sources", prompt_fingerprint="0" * 16))
    save_recording(recordings, "model-x", recording("failed-run", status="turn_limit", answer=None))
    (recordings / "model-x" / "broken.json").write_text("not json", encoding="utf-8")
    return cases, recordings


def test_bad_input_is_counted_in_the_table_and_nothing_is_written_outside_the_output_folder(
    tmp_path, bad_input
):
    cases, recordings = bad_input
    before = tree(tmp_path)
    out = tmp_path / "out"
    text = run_eval(load_cases(cases), out, recordings=recordings)
    assert {path for path in tree(tmp_path) - before if not path.startswith("out")} == set()
    assert text.startswith("4 cases; by kind: broken 1, crash 3;")
    table = text.split("\n\n")[1]
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines() if line.startswith("| ")}
    baseline, model = rows["crash-site baseline"], rows["model-x"]
    assert "1 broken case, 1 sources missing" in baseline
    assert "1 broken case, 1 model error, 1 sources missing, 1 stale" in model
    # every case counts in the rates: the failed run is a miss, not dropped
    assert (
        "| 4 | 67% (2/3) | 67% (2/3) | 50% (2/4) |" in model
    )  # file, function top-1 (good, no-sources), class
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 8 and (out / "table.md").read_text() == text


def test_a_replayed_answer_goes_through_the_same_checks(tmp_path, bad_input):
    cases, recordings = bad_input
    runner = Eval(load_cases(cases), tmp_path / "out")
    runs = {run.case_id: run for run in runner.replay("model-x", load_recordings(recordings)["model-x"])}
    good = runs["good"].score
    assert good is not None and good.file_hit and good.function_hit and good.class_hit
    assert (good.evidence_verified, good.evidence_total) == (2, 2)  # the file line and the fault location
    assert runs["no-sources"].stale and runs["no-sources"].score is not None
    assert runs["no-sources"].score.evidence_total == 0  # nothing checked without sources
    assert runs["failed-run"].problem is not None and runs["failed-run"].problem.startswith(
        "model error: turn_limit"
    )


def test_the_crash_site_baseline_blames_the_innermost_app_frame():
    loaded = load_case(CASES / "d4j-lang-1")
    assert loaded.case is not None
    answer = baseline_answer(loaded.case)
    assert answer["fault_location"] == {
        "path": "src/main/java/org/apache/commons/lang3/math/NumberUtils.java",
        "function": "createInteger",
        "start_line": 684,
    }
    assert [f.function for f in loaded.case.truth.faults] == ["createNumber"]  # the fault is its caller


def test_the_case_folder_holds_the_kinds_the_eval_needs_and_its_sample_service_truth_checks():
    loaded = load_cases(CASES)
    assert all(item.case is not None for item in loaded), [item.problem for item in loaded if item.problem]
    kinds: dict[str, int] = {}
    for item in loaded:
        assert item.case is not None
        kinds[item.case.kind] = kinds.get(item.case.kind, 0) + 1
        if item.case.origin.dataset == "scenario":
            assert item.sources is not None
            for fault in item.case.truth.faults:
                location = FaultLocation(
                    path=fault.path, function=fault.function, start_line=fault.start_line
                )
                assert check_location(location, item.sources).verified, (item.id, fault)
    assert kinds["crash"] >= 150 and kinds["abstain"] >= 15
    assert kinds["client_misuse"] + kinds["documentation_gap"] + kinds["dependency"] >= 40
    # every case's sources are in the case folder (the crash cases' in the store): none is missing in CI
    assert [item.id for item in loaded if item.sources_missing] == []


def test_the_committed_fixes_pass_their_bugs_tests_where_they_can_run(tmp_path):
    """The sample service's documentation gaps carry their real fix and the bug's tests; the scripted
    recordings hold that fix as the fix editor made it through the real CLI (one case of each fix is run
    here; `.ci/run` runs them all). Every crash case's tests cannot run here, and the table says so."""
    one_per_fix: dict[str, LoadedCase] = {}
    crashes = []
    for item in load_cases(CASES):
        assert item.case is not None
        if item.case.kind == "documentation_gap":
            one_per_fix.setdefault(item.case.truth.fix.reference, item)
        elif item.case.kind == "crash":
            crashes.append(item)
    runner = Eval([*one_per_fix.values(), *crashes], tmp_path / "out", fix=True)
    runs = runner.replay("scripted-crash-site", load_recordings(RECORDINGS)["scripted-crash-site"])
    text = render_table({"scripted-crash-site": runs}, fix_asked=True)
    assert (
        f"| 100% ({len(one_per_fix)}/{len(one_per_fix)}); cannot run: 241 (bugsinpy 32, defects4j 209) |"
        in text
    )
    assert len(one_per_fix) == 5


def test_recorded_answers_replay_deterministically_and_match_what_was_scripted(tmp_path):
    """The committed recordings (the crash-site answer scripted through the real CLI) replayed through today's
    prompt and checks: each current one scores as the baseline does; a stale one is reported, not hidden."""
    cases = load_cases(CASES)
    found = load_recordings(RECORDINGS)
    assert "scripted-crash-site" in found
    runner = Eval(cases, tmp_path / "out")
    replayed = runner.replay("scripted-crash-site", found["scripted-crash-site"])
    assert not [run.problem for run in replayed if run.problem and not run.problem.startswith("sources")]
    baseline = {run.case_id: run.score for run in runner.baseline()}
    for run in replayed:
        if not run.stale:
            assert run.score is not None and baseline[run.case_id] is not None
            assert (run.score.file_hit, run.score.function_hit, run.score.class_hit) == (
                baseline[run.case_id].file_hit,
                baseline[run.case_id].function_hit,
                baseline[run.case_id].class_hit,
            ), run.case_id
    sample = cases[::6]  # the whole set once above; the same table twice over a spread of every kind here
    first = run_eval(sample, tmp_path / "one", recordings=RECORDINGS)
    assert run_eval(sample, tmp_path / "two", recordings=RECORDINGS) == first


def test_rounds_eval_prints_the_table_and_refuses_a_missing_case_folder(tmp_path, bad_input):
    cases, _ = bad_input
    result = CliRunner().invoke(main, ["eval", str(cases), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "| crash-site baseline | crash-site baseline | 4 |" in result.output
    missing = CliRunner().invoke(main, ["eval", str(tmp_path / "nope"), "--out", str(tmp_path / "out")])
    assert missing.exit_code != 0 and "no case folder" in missing.output
    inside = CliRunner().invoke(main, ["eval", str(cases), "--out", str(cases / "out")])
    assert (
        inside.exit_code != 0 and "inside the case folder" in inside.output and not (cases / "out").exists()
    )


@pytest.mark.real_cli
def test_a_live_run_goes_through_the_real_cli_and_a_looked_up_log_line_counts_as_verified(
    claude_bin, tmp_path
):
    cases = tmp_path / "cases"
    log = {
        "timestamp": "2024-05-01T09:59:30+00:00",
        "service": "shop",
        "severity": "ERROR",
        "body": "cart 991 has no items after coupon sync",
    }
    write_case(cases, crash_case("live", related_logs=[log]), sources=True)
    [loaded] = load_cases(cases)
    quoted = "2024-05-01T09:59:30+00:00 shop ERROR cart 991 has no items after coupon sync"
    evidence = [{"kind": "log", "log_line": quoted, "explanation": "the cart was emptied just before"}]
    script = [
        turn(ToolUse("mcp__rounds__get_logs_around", {"event_id": "live-1", "minutes_before": 5})),
        structured_output(answer_at("average_price", evidence=evidence)),
    ]
    out = tmp_path / "out"
    with FakeMessagesApi(script) as api:
        # the server imports this checkout's rounds, whatever else the interpreter has installed
        tools = McpLaunch(env={"PYTHONPATH": str(PROJECT)})
        diagnoser = fake_api_diagnoser(claude_bin, api, incident_tools=tools, max_turns=6)
        [run] = Eval([loaded], out).live("live-model", diagnoser, max_cost_usd=1.0, record=out / "recordings")
    assert run.problem is None and run.score is not None
    assert run.score.function_hit and (run.score.evidence_verified, run.score.evidence_total) == (2, 2)
    [recording] = load_recordings(out / "recordings")["live-model"].values()
    assert recording.recording is not None and recording.recording.origin == "live"
    assert [answer.tool for answer in recording.recording.lookups] == ["get_logs_around"]
    assert quoted in recording.recording.lookups[0].answer


def test_a_live_run_stops_at_its_cost_cap(tmp_path):
    cases = tmp_path / "cases"
    write_case(cases, crash_case("capped"), sources=True)

    class Expensive:
        name = "expensive"

        def estimate_cost(self, request: object) -> float:
            return 2.0

        def diagnose(self, request: object) -> object:  # pragma: no cover - never reached under the cap
            raise AssertionError("the cap must stop the call")

    [run] = Eval(load_cases(cases), tmp_path / "out").live("m", Expensive(), max_cost_usd=1.0)
    assert run.problem == "not run: $2.00 estimated, $1.00 left"


def test_a_change_to_the_prompt_makes_every_recording_stale(tmp_path, bad_input, monkeypatch):
    cases, recordings = bad_input
    from rounds_bot.eval import runner as runner_module

    current = runner_module.diagnosis_json_schema()
    monkeypatch.setattr(runner_module, "diagnosis_json_schema", lambda: {**current, "description": "changed"})
    runs = Eval(load_cases(cases), tmp_path / "out").replay("model-x", load_recordings(recordings)["model-x"])
    assert [run.case_id for run in runs if run.stale] == ["failed-run", "good", "no-sources"]


def stored_case(cases: Path, case_id: str, source: bytes = CART_SOURCE.encode()) -> Path:
    """A case whose file is in the case folder's content-addressed store, named by its manifest."""
    folder = write_case(cases, crash_case(case_id), sources=False)
    digest = hashlib.sha256(source).hexdigest()
    (cases / "_sources" / digest[:2]).mkdir(parents=True, exist_ok=True)
    (cases / "_sources" / digest[:2] / digest).write_bytes(source)
    manifest = {"format": 1, "revision": "abc123", "files": {"shop/cart.py": digest}}
    (folder / "sources.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_a_stored_case_is_checked_out_under_the_output_folder_and_its_evidence_checked(tmp_path):
    cases = tmp_path / "cases"
    stored_case(cases, "stored")
    [loaded] = load_cases(cases)
    assert loaded.stored and not loaded.sources_missing
    before = tree(tmp_path)
    runner = Eval([loaded], tmp_path / "out")
    assert {path for path in tree(tmp_path) - before if not path.startswith("out")} == set()
    [run] = runner.baseline()
    assert not run.sources_missing and run.score is not None
    assert (run.score.evidence_verified, run.score.evidence_total) == (2, 2)
    assert (tmp_path / "out" / "sources" / "stored" / "shop" / "cart.py").read_text() == CART_SOURCE


def test_a_stored_file_that_is_not_what_its_hash_says_leaves_the_sources_missing(tmp_path):
    cases = tmp_path / "cases"
    folder = stored_case(cases, "tampered")
    digest = json.loads((folder / "sources.json").read_text())["files"]["shop/cart.py"]
    (cases / "_sources" / digest[:2] / digest).write_text("def average_price(cart):\n    pass\n")
    [run] = Eval(load_cases(cases), tmp_path / "out").baseline()
    assert run.sources_missing and not (tmp_path / "out" / "sources" / "tampered").exists()


def test_a_manifest_path_outside_the_repository_is_refused(tmp_path):
    cases = tmp_path / "cases"
    folder = stored_case(cases, "escape")
    manifest = json.loads((folder / "sources.json").read_text())
    manifest["files"] = {"../../outside.py": manifest["files"]["shop/cart.py"]}
    (folder / "sources.json").write_text(json.dumps(manifest))
    [loaded] = load_cases(cases)
    assert loaded.sources_missing
    Eval([loaded], tmp_path / "out").baseline()
    assert not (tmp_path / "outside.py").exists()


FIXED_CART = CART_SOURCE.replace(
    "    return total / len(cart.items)", "    return total / len(cart.items) if cart.items else 0"
)
CART_TEST = """from types import SimpleNamespace

from shop.cart import average_price


def test_an_empty_cart_averages_zero():
    assert average_price(SimpleNamespace(items=[])) == 0
"""


def fixable_cases(root: Path) -> Path:
    """A shared repository with the bug, its tests kept apart, and cases whose fix can be tested here."""
    cases = root / "cases"
    (cases / "_repos" / "cart" / "shop").mkdir(parents=True)
    (cases / "_repos" / "cart" / "shop" / "cart.py").write_text(CART_SOURCE)
    (cases / "_repos" / "cart-tests" / "tests").mkdir(parents=True)
    (cases / "_repos" / "cart-tests" / "tests" / "test_cart.py").write_text(CART_TEST)
    tests = {
        "failing_before": ["tests/test_cart.py"],
        "passing_after": ["tests/test_cart.py"],
        "command": "python -m pytest",
        "added": "_repos/cart-tests",
    }
    for case_id in ("fixed", "unfixed", "no-fix"):
        case = crash_case(case_id)
        case["repository"] = {"local": "_repos/cart", "files": ["shop/cart.py"]}
        case["truth"]["tests"] = tests
        write_case(cases, case, sources=False)
    java = crash_case("java", origin={"dataset": "defects4j", "reference": "Lang-1"})
    java["truth"]["tests"] = {
        "failing_before": ["T::t"],
        "passing_after": ["T::t"],
        "command": "defects4j test",
    }
    write_case(cases, java, sources=True)
    return cases


def diff_of(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), "a/shop/cart.py", "b/shop/cart.py"
    )
    return "".join(lines)


def test_with_fix_each_recorded_fix_runs_the_bugs_tests_and_cases_that_cannot_run_say_why(tmp_path):
    cases = fixable_cases(tmp_path)
    loaded = {item.id: item for item in load_cases(cases)}
    empty = tmp_path / "empty"
    empty.mkdir()
    recordings = tmp_path / "recordings"
    patches = {"fixed": diff_of(CART_SOURCE, FIXED_CART), "unfixed": diff_of(CART_SOURCE, CART_SOURCE + "\n")}
    for case_id, item in loaded.items():
        assert item.case is not None
        recording = Recording(
            case_id=case_id,
            origin="scripted",
            model="test script",
            prompt_fingerprint=prompt_fingerprint(item.case, empty),
            status="ok",
            answer=answer_at("average_price"),
            fix_patch=patches.get(case_id),
        )
        save_recording(recordings, "model-x", recording)
    out = tmp_path / "out"
    runs = {
        run.case_id: run
        for run in Eval(list(loaded.values()), out, fix=True).replay(
            "model-x", load_recordings(recordings)["model-x"]
        )
    }
    assert runs["fixed"].fix is not None and runs["fixed"].fix.status == "passed"
    assert runs["unfixed"].fix is not None and runs["unfixed"].fix.status == "failed"
    assert runs["no-fix"].fix is not None and runs["no-fix"].fix.status == "no fix"
    java = runs["java"].fix
    assert java is not None and java.status == "cannot run" and "`defects4j test`" in java.detail
    # the repository in the case folder is never changed: the fix went into a scratch copy under --out
    assert (cases / "_repos" / "cart" / "shop" / "cart.py").read_text() == CART_SOURCE
    assert (out / "fixes" / "model-x" / "fixed" / "shop" / "cart.py").read_text() == FIXED_CART
    text = run_eval(list(loaded.values()), tmp_path / "table", recordings=recordings, fix=True)
    model = next(line for line in text.splitlines() if line.startswith("| model-x |"))
    assert "| 33% (1/3); cannot run: 1 (defects4j 1) |" in model
    baseline = next(line for line in text.splitlines() if line.startswith("| crash-site"))
    assert "| no fix proposed |" in baseline
    plain = run_eval(list(loaded.values()), tmp_path / "plain", recordings=recordings)
    assert "| not asked (--fix) |" in plain and not (tmp_path / "plain" / "fixes").exists()


def test_a_fix_is_applied_to_the_scratch_copy_even_when_the_output_folder_is_inside_a_git_repository(
    tmp_path,
):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    cases = fixable_cases(tmp_path)
    [item] = [item for item in load_cases(cases) if item.id == "fixed"]
    # a fix as `git diff` prints it: git would take it relative to the enclosing repository and skip it
    patch = "diff --git a/shop/cart.py b/shop/cart.py\n" + diff_of(CART_SOURCE, FIXED_CART)
    check = check_fix(item, patch, tmp_path / "out" / "fixes")
    assert check.status == "passed", check.detail
    assert (tmp_path / "out" / "fixes" / "fixed" / "shop" / "cart.py").read_text() == FIXED_CART


def test_a_bugs_test_that_passes_before_the_fix_is_reported(tmp_path):
    cases = fixable_cases(tmp_path)
    (cases / "_repos" / "cart" / "shop" / "cart.py").write_text(FIXED_CART)
    [item] = [item for item in load_cases(cases) if item.id == "fixed"]
    check = check_fix(item, diff_of(FIXED_CART, FIXED_CART + "\n"), tmp_path / "scratch")
    assert check.status == "failed" and "pass before the fix" in check.detail


@pytest.mark.real_cli
def test_a_live_run_with_fix_proposes_a_fix_through_the_fix_editor_and_runs_the_bugs_tests(
    claude_bin, tmp_path
):
    cases = fixable_cases(tmp_path)
    [loaded] = [item for item in load_cases(cases) if item.id == "fixed"]
    out = tmp_path / "out"
    runner = Eval([loaded], out, fix=True)
    tree = out / "proposals" / "live-model" / "fixed"
    buggy, fixed = (
        "    return total / len(cart.items)\n",
        "    return total / len(cart.items) if cart.items else 0\n",
    )
    edit = {"file_path": str(tree / "shop" / "cart.py"), "old_string": buggy, "new_string": fixed}
    edits = [
        turn(ToolUse("Read", {"file_path": edit["file_path"]})),
        turn(ToolUse("Edit", edit)),
        turn(Text("done")),
    ]
    with (
        FakeMessagesApi([structured_output(answer_at("average_price"))]) as diagnosis_api,
        FakeMessagesApi(edits) as edit_api,
    ):
        diagnoser = fake_api_diagnoser(claude_bin, diagnosis_api, max_turns=6)
        cli = ClaudeCli(
            binary=claude_bin,
            model="sonnet",
            credentials={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": edit_api.url},
            inherited_env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            max_turns=6,
            timeout_seconds=90,
        )
        fixer = FixEditor(cli, price_for("sonnet"))
        [run] = runner.live("live-model", diagnoser, max_cost_usd=5.0, record=out / "recordings", fixer=fixer)
    assert run.fix is not None and run.fix.status == "passed", run.fix
    [recording] = load_recordings(out / "recordings")["live-model"].values()
    assert recording.recording is not None and recording.recording.fix_patch is not None
    assert "+    return total / len(cart.items) if cart.items else 0" in recording.recording.fix_patch
    # the case folder's repository is untouched: the edit went into a scratch repository under --out
    assert (cases / "_repos" / "cart" / "shop" / "cart.py").read_text() == CART_SOURCE
