"""A demo round diagnosed by the real Claude Code CLI against a scripted fake Messages API.

Pins the issue's "done when": valid diagnoses in the dry-run drafts, a ledger that adds up, duplicates and
repeats that cost nothing, and a failed diagnosis that stays pending without being charged twice.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_messages_api import FakeMessagesApi, HttpError, ToolUse, structured_output, turn

from rounds_bot.cli.app import main

pytestmark = pytest.mark.real_cli


def answer(checkout: Path) -> dict[str, Any]:
    return {
        "classification": "server_bug",
        "root_cause": "the discount code reads a key that percentage promotions do not have",
        "evidence": [
            {"kind": "file", "path": "checkout/discounts.py", "line": 3, "explanation": "the lookup"}
        ],
        "suggested_fix": "use promotion.get('currency', order.currency)",
        "confidence": "medium",
        "missing_observability": ["the promotion id is not on the span"],
        "suggested_error_code": None,
    }


def model(checkout: Path, fail_first: int = 0):
    """Read the file once, then answer; the first `fail_first` requests get a 500."""

    def script(index: int, body: dict[str, Any]):
        if index < fail_first:
            return HttpError(500)
        answered = any(
            isinstance(message.get("content"), list)
            and any(block.get("type") == "tool_result" for block in message["content"])
            for message in body["messages"]
        )
        if answered:
            return structured_output(answer(checkout), input_tokens=3000, output_tokens=200)
        return turn(ToolUse("Read", {"file_path": str(checkout / "checkout" / "discounts.py")}))

    return script


@pytest.fixture
def demo_env(clean_env, claude_bin, tmp_path, monkeypatch):
    checkout = tmp_path / "repo"
    (checkout / "checkout").mkdir(parents=True)
    (checkout / "checkout" / "discounts.py").write_text(
        "def apply_discount(order, promotion):\n    rate = promotion['rate']\n"
        "    currency = promotion['currency']\n    return order.total * rate, currency\n"
    )
    monkeypatch.chdir(tmp_path)
    clean_env.setenv("ROUNDS_DIAGNOSER", "claude-code")
    clean_env.setenv("ROUNDS_CLAUDE_BIN", claude_bin)
    clean_env.setenv("ANTHROPIC_API_KEY", "test-key")
    clean_env.setenv("ROUNDS_REPO_PATH", str(checkout))
    clean_env.setenv("ROUNDS_CODE_REVISION", "0123456789abcdef")
    clean_env.setenv("ROUNDS_CLAUDE_MAX_RETRIES", "0")
    return checkout


def run_demo() -> str:
    result = CliRunner().invoke(main, ["run", "--demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_demo_round_writes_diagnoses_and_the_ledger_adds_up(demo_env, clean_env, tmp_path):
    with FakeMessagesApi(model(demo_env)) as api:
        clean_env.setenv("ANTHROPIC_BASE_URL", api.url)
        out = run_demo()
        calls_after_first = len(api.requests)
        run_demo()
        assert len(api.requests) == calls_after_first, "a second round must not call the model again"
    db = sqlite3.connect(tmp_path / "rounds.db")
    diagnosed = db.execute("select signature_id, status, cost_usd from diagnoses").fetchall()
    assert diagnosed and all(status == "ok" for _, status, _ in diagnosed)
    assert len(diagnosed) < db.execute("select count(*) from signatures").fetchone()[0]
    ledger = db.execute("select sum(usd) from ledger").fetchone()[0]
    assert ledger == pytest.approx(sum(cost for *_, cost in diagnosed))
    assert ledger > 0
    assert f"Model calls this round: {len(diagnosed)}" in out
    for signature_id, *_ in diagnosed:
        draft = (tmp_path / "rounds-out" / f"{signature_id}.md").read_text()
        assert "**Classification:** server bug (confidence: medium)" in draft
        assert "checkout/discounts.py" in draft
    events = {row[0] for row in db.execute("select kind from events")}
    assert {"ContextBuilt", "RootCauseProposed"} <= events


def test_a_failed_diagnosis_stays_pending_and_is_retried_next_round(demo_env, clean_env, tmp_path):
    with FakeMessagesApi(model(demo_env, fail_first=1)) as api:
        clean_env.setenv("ANTHROPIC_BASE_URL", api.url)
        out = run_demo()
        assert "api_error" in out
        db = sqlite3.connect(tmp_path / "rounds.db")
        statuses = dict(db.execute("select status, count(*) from diagnoses group by status").fetchall())
        assert statuses.get("api_error") == 1
        failed = db.execute("select signature_id from diagnoses where status = 'api_error'").fetchone()[0]
        run_demo()
        retried = db.execute(
            "select status from diagnoses where signature_id = ? order by id", [failed]
        ).fetchall()
        assert [s for (s,) in retried] == ["api_error", "ok"]
        booked = db.execute(
            "select count(*) from ledger where signature_id = ? and note like '%api_error%'", [failed]
        ).fetchone()[0]
        assert booked <= 1
    assert json.loads("[]") == []
