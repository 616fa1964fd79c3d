"""The Claude Code adapter against a small fake `claude` executable, one per output shape.

Each fake is a Python script written by the test: it records its argv, environment, working
directory and stdin, then prints what the real CLI prints in that situation (see the CLI spec).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from diagnosis_samples import claude_code_diagnoser, good_answer, make_checkout, sample_request

from rounds_bot.diagnosis import claude_code
from rounds_bot.diagnosis.claude_code import ClaudeCodeDiagnoser
from rounds_bot.diagnosis.claude_result import find_result
from rounds_bot.diagnosis.json_answer import parse_json_answer
from rounds_bot.diagnosis.mcp_server import McpLaunch
from rounds_bot.errors import ConfigError, DiagnosisError


def result_object(**fields: Any) -> dict[str, Any]:
    base = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "",
        "session_id": "s-1",
        "num_turns": 3,
        "duration_ms": 254,
        "total_cost_usd": 0.02298,
        "stop_reason": "end_turn",
        "terminal_reason": "completed",
        "usage": {
            "input_tokens": 5546,
            "output_tokens": 40,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
        },
        "modelUsage": {"claude-sonnet-5-5": {"inputTokens": 5546, "costUSD": 0.02298}},
        "permission_denials": [],
        "api_error_status": None,
    }
    base.update(fields)
    return base


def write_fake_cli(
    directory: Path,
    *,
    stdout: str = "",
    stderr: str = "",
    exit_code: int = 0,
    hang_seconds: float = 0,
) -> tuple[Path, Path]:
    """A fake `claude`: returns its path and the path of the record it writes."""
    record = directory / "record.json"
    script = directory / "claude"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!{sys.executable}
            import json, os, subprocess, sys, time
            stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
            mcp = None
            if "--mcp-config" in sys.argv:
                with open(sys.argv[sys.argv.index("--mcp-config") + 1]) as handle:
                    mcp = json.load(handle)
            with open({str(record)!r}, "w") as handle:
                json.dump({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(),
                           "stdin": stdin, "mcp": mcp}}, handle)
            if {hang_seconds!r}:
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
                with open({str(directory / "child.pid")!r}, "w") as handle:
                    handle.write(str(child.pid))
                time.sleep({hang_seconds!r})
            sys.stdout.write({stdout!r})
            sys.stderr.write({stderr!r})
            sys.exit({exit_code!r})
            """
        ),
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script, record


def diagnoser(binary: Path, **overrides: Any) -> ClaudeCodeDiagnoser:
    settings: dict[str, Any] = {
        "binary": binary,
        "model": "sonnet",
        "credentials": {"ANTHROPIC_API_KEY": "sk-ant-test"},
        "inherited_env": {
            "PATH": os.environ.get("PATH", ""),
            "GITHUB_TOKEN": "ghp_shouldneverreachthemodel000000000000",
            "AWS_SECRET_ACCESS_KEY": "never",
            "LANG": "C.UTF-8",
        },
        "max_turns": 7,
        "max_budget_usd": 0.5,
        "timeout_seconds": 20,
    }
    settings.update(overrides)
    return claude_code_diagnoser(**settings)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path / "repo")


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    path = tmp_path / "bin"
    path.mkdir()
    return path


def test_structured_output_becomes_an_ok_outcome_with_checked_evidence(checkout, bin_dir):
    answer = good_answer()
    result = result_object(structured_output=answer, result=json.dumps(answer))
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result) + "\n")
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "ok"
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.classification == "server_bug"
    assert outcome.cost_usd == pytest.approx(0.02298)
    assert not outcome.cost_is_estimate
    assert outcome.turns == 3
    assert outcome.tokens.cache_read_input_tokens == 1000
    assert outcome.model == "claude-sonnet-5-5"
    assert [check.verified for check in outcome.evidence_checks] == [True, True, True]


def test_missing_structured_output_falls_back_to_parsing_the_result_text(checkout, bin_dir):
    text = "Here is my diagnosis:\n```json\n" + json.dumps(good_answer()) + "\n```"
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result_object(result=text)))
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "ok"
    assert "no structured_output" in outcome.detail


def test_plain_text_answer_without_json_is_an_invalid_answer(checkout, bin_dir):
    result = result_object(result="I think it is a division by zero.")
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result))
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "invalid_answer"
    assert outcome.cost_usd == pytest.approx(0.02298)


def test_answer_that_breaks_the_schema_is_an_invalid_answer(checkout, bin_dir):
    answer = good_answer(classification="unknown")  # abstaining without a reason
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result_object(structured_output=answer)))
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "invalid_answer"
    assert "unknown_reason" in outcome.detail


def test_abstaining_with_a_reason_is_a_valid_answer(checkout, bin_dir):
    answer = good_answer(classification="unknown", unknown_reason="the trace stops in a library", evidence=[])
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result_object(structured_output=answer)))
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "ok"
    assert outcome.diagnosis is not None and outcome.diagnosis.classification == "unknown"


def test_turn_limit_is_a_status_with_its_cost(checkout, bin_dir):
    result = result_object(
        subtype="error_max_turns",
        is_error=True,
        terminal_reason="max_turns",
        errors=["Reached maximum number of turns (7)"],
        total_cost_usd=0.31,
    )
    del result["result"]
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result), exit_code=1)
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "turn_limit"
    assert outcome.cost_usd == pytest.approx(0.31)
    assert "maximum number of turns" in outcome.detail


def test_budget_exhaustion_is_a_status_with_its_cost(checkout, bin_dir):
    result = result_object(
        subtype="error_max_budget_usd", terminal_reason="budget_exhausted", total_cost_usd=0.52
    )
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result), exit_code=1)
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "budget_exhausted"
    assert outcome.cost_usd == pytest.approx(0.52)


def test_api_error_500_is_an_api_error_status(checkout, bin_dir):
    result = result_object(
        is_error=True,
        terminal_reason="api_error",
        api_error_status=500,
        result='API Error: 500 {"type":"error","error":{"type":"api_error"}}',
        total_cost_usd=0,
    )
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result), exit_code=1)
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "api_error"
    assert "API status 500" in outcome.detail


def test_not_logged_in_says_which_credential_is_missing(checkout, bin_dir):
    result = result_object(is_error=True, result="Not logged in · Please run /login", total_cost_usd=0)
    binary, _ = write_fake_cli(bin_dir, stdout=json.dumps(result), exit_code=1)
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "api_error"
    assert "ANTHROPIC_API_KEY" in outcome.detail


def test_output_that_is_not_json_is_an_api_error_not_a_crash(checkout, bin_dir):
    binary, _ = write_fake_cli(bin_dir, stdout="{not json at all\n", exit_code=0)
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "api_error"
    assert "not a result" in outcome.detail


def test_non_zero_exit_with_only_stderr_reports_the_stderr(checkout, bin_dir):
    binary, _ = write_fake_cli(bin_dir, stderr="error: unknown option '--bogus'\n", exit_code=1)
    outcome = diagnoser(binary).diagnose(sample_request(checkout))
    assert outcome.status == "api_error"
    assert "exited 1" in outcome.detail and "unknown option" in outcome.detail
    assert outcome.cost_usd == 0


def test_hanging_cli_times_out_and_its_process_group_is_ended(checkout, bin_dir):
    binary, _ = write_fake_cli(bin_dir, hang_seconds=60)
    outcome = diagnoser(binary, timeout_seconds=1.5).diagnose(sample_request(checkout))
    assert outcome.status == "timeout"
    assert outcome.cost_is_estimate and 0 < outcome.cost_usd <= 0.5
    child_pid = int((bin_dir / "child.pid").read_text())
    assert _ends(child_pid)


def test_stream_json_output_is_parsed_and_reported_as_progress(checkout, bin_dir):
    answer = good_answer()
    lines = [
        {"type": "system", "subtype": "init", "tools": ["Read", "Grep", "Glob"]},
        {"type": "assistant", "message": {"id": "m1", "usage": {"input_tokens": 10}}},
        {"type": "something_new", "payload": 1},
        result_object(structured_output=answer),
    ]
    binary, record = write_fake_cli(bin_dir, stdout="".join(json.dumps(x) + "\n" for x in lines))
    events: list[str] = []
    outcome = diagnoser(binary, stream=True, on_progress=lambda e: events.append(e["type"])).diagnose(
        sample_request(checkout)
    )
    assert outcome.status == "ok"
    assert events == ["system", "assistant", "something_new", "result"]
    argv = json.loads(record.read_text())["argv"]
    assert argv[argv.index("--output-format") + 1] == "stream-json" and "--verbose" in argv


def test_command_line_is_read_only_bounded_and_isolated(checkout, bin_dir):
    binary, record = write_fake_cli(
        bin_dir, stdout=json.dumps(result_object(structured_output=good_answer()))
    )
    diagnoser(binary).diagnose(sample_request(checkout))
    seen = json.loads(record.read_text())
    argv = seen["argv"]

    def value(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert value("--tools") == "Read,Grep,Glob"
    assert "--restricted" in argv and "--no-session-persistence" in argv
    assert "--strict-mcp-config" in argv
    assert seen["mcp"] == {"mcpServers": {}}  # the repository's .mcp.json never applies
    assert value("--max-turns") == "7"
    assert float(value("--max-budget-usd")) == pytest.approx(0.5)
    assert value("--model") == "sonnet"
    assert json.loads(value("--json-schema"))["properties"]["classification"]["enum"]
    assert "--allowedTools" not in argv  # nothing to pre-approve without incident tools
    assert argv[-2] == "--" and "sig-zero-division" in argv[-1]
    assert seen["stdin"] == ""
    assert Path(seen["cwd"]).resolve() == checkout.resolve()


def test_environment_is_an_allow_list_with_a_throwaway_home(checkout, bin_dir):
    binary, record = write_fake_cli(
        bin_dir, stdout=json.dumps(result_object(structured_output=good_answer()))
    )
    diagnoser(binary).diagnose(sample_request(checkout))
    env = json.loads(record.read_text())["env"]
    assert "GITHUB_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-test"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["LANG"] == "C.UTF-8"
    assert Path(env["HOME"]).name == "home" and not Path(env["HOME"]).exists()  # removed after
    allowed = {
        "PATH", "LANG", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
        "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "ANTHROPIC_API_KEY",
    }  # fmt: skip
    # Python itself may add a couple of its own variables when it starts the fake.
    assert set(env) - allowed <= {"LC_CTYPE", "PWD", "SHLVL", "_"}


def test_incident_tools_are_offered_by_name_and_are_the_only_pre_approved_ones(checkout, bin_dir):
    binary, record = write_fake_cli(
        bin_dir, stdout=json.dumps(result_object(structured_output=good_answer()))
    )
    launch = McpLaunch(env={"SIGNOZ_API_KEY": "only-for-the-server"})
    diagnoser(binary, incident_tools=launch).diagnose(sample_request(checkout))
    seen = json.loads(record.read_text())
    argv = seen["argv"]
    tools = argv[argv.index("--tools") + 1].split(",")
    assert tools == [
        "Read",
        "Grep",
        "Glob",
        "mcp__rounds__get_trace",
        "mcp__rounds__get_logs_around",
        "mcp__rounds__get_error_counts",
    ]
    assert argv[argv.index("--allowedTools") + 1].split(",") == tools[3:]
    assert "SIGNOZ_API_KEY" not in seen["env"]
    server = seen["mcp"]["mcpServers"]["rounds"]
    assert server["env"] == {"SIGNOZ_API_KEY": "only-for-the-server"}
    assert server["args"][-2] == "--scope"


def test_a_prompt_too_long_for_one_argument_goes_on_stdin(checkout, bin_dir, monkeypatch):
    monkeypatch.setattr(claude_code, "MAX_PROMPT_ARGUMENT_BYTES", 1_000)
    binary, record = write_fake_cli(
        bin_dir, stdout=json.dumps(result_object(structured_output=good_answer()))
    )
    diagnoser(binary).diagnose(sample_request(checkout))
    seen = json.loads(record.read_text())
    assert "--" not in seen["argv"]
    assert "sig-zero-division" in seen["stdin"]


def test_request_without_data_is_no_data_and_runs_nothing(checkout, bin_dir):
    binary, record = write_fake_cli(bin_dir, stdout="")
    request = sample_request(checkout, sample_events=[], stacktrace=None, normalized_message="")
    outcome = diagnoser(binary).diagnose(request)
    assert outcome.status == "no_data"
    assert not record.exists()


def test_missing_binary_is_a_diagnosis_error_with_a_hint(checkout, tmp_path):
    with pytest.raises(DiagnosisError, match="could not be started"):
        diagnoser(tmp_path / "nowhere" / "claude").diagnose(sample_request(checkout))


def test_credentials_other_than_the_model_provider_are_refused():
    with pytest.raises(ConfigError, match="GITHUB_TOKEN"):
        diagnoser(Path("claude"), credentials={"GITHUB_TOKEN": "x"})


def test_estimate_grows_with_the_context(checkout):
    small = diagnoser(Path("claude")).estimate_cost(sample_request(checkout))
    large = diagnoser(Path("claude")).estimate_cost(
        sample_request(checkout, normalized_message="word " * 1500)
    )
    assert 0 < small < large


def test_find_result_ignores_lines_it_does_not_know():
    lines = ['{"type":"system"}\n', "noise\n", json.dumps(result_object()) + "\n"]
    assert find_result(lines)["subtype"] == "success"
    assert find_result(["{broken\n"]) is None


def test_parse_json_answer_reads_bare_fenced_and_embedded_objects():
    assert parse_json_answer('{"a": 1}') == {"a": 1}
    assert parse_json_answer('text\n```json\n{"a": 2}\n```\nmore') == {"a": 2}
    assert parse_json_answer('So: {"a": 3} done') == {"a": 3}
    assert parse_json_answer("no json") is None


def _ends(pid: int) -> bool:
    """Whether `pid` is gone within a few seconds: SIGKILL to a group is delivered asynchronously (kill(2)),
    so on a loaded machine the orphaned grandchild can still be running a moment after `killpg` returns."""
    for _ in range(100):
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purpose.
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()
