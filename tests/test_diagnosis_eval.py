"""`rounds eval`: cases through the real diagnosis path, scored against their ground truth, the crash-site
baseline beside every other row, and bad input (a broken case, missing sources, a broken or stale recording,
a failed run) counted in the table, never dropped; nothing written outside the output folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from diagnosis_samples import CART_SOURCE, PYTHON_TRACE, fake_api_diagnoser, good_answer
from fake_messages_api import FakeMessagesApi, ToolUse, structured_output, turn

from rounds_bot.cli.app import main
from rounds_bot.diagnosis.evidence import check_location
from rounds_bot.diagnosis.mcp_server import McpLaunch
from rounds_bot.diagnosis.model import FaultLocation
from rounds_bot.eval.baseline import baseline_answer
from rounds_bot.eval.cases import load_case, load_cases
from rounds_bot.eval.recordings import Recording, load_recordings, save_recording
from rounds_bot.eval.report import run_eval
from rounds_bot.eval.runner import Eval, prompt_fingerprint

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
    assert kinds["crash"] >= 90 and kinds["abstain"] >= 15
    assert kinds["client_misuse"] + kinds["documentation_gap"] + kinds["dependency"] >= 40


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
    first = run_eval(cases, tmp_path / "one", recordings=RECORDINGS)
    assert run_eval(cases, tmp_path / "two", recordings=RECORDINGS) == first


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
