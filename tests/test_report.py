"""The round report (terminal and job summary), pinned by golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rounds_bot.round.planning import held_note
from rounds_bot.round.report import RoundReport, SignatureLine, append_to_step_summary, render_report
from rounds_bot.sources.base import SkippedRecord

GOLDEN = Path(__file__).parent / "golden" / "report"


def line(n: int, tier: str = "new", note: str = "", issue: str | None = "#12") -> SignatureLine:
    return SignatureLine(
        signature_id=f"sig_{n:016x}",
        title="KeyError: 'currency' | in apply_discount",
        service="checkout-api",
        tier=tier,
        round_count=10 * n,
        total_count=100 * n,
        issue=issue,
        note=note,
    )


def busy_report() -> RoundReport:
    return RoundReport(
        run_id="20261101T120000Z-abc123",
        source="signoz:signoz.internal:8080",
        tracker="github",
        window_start="2026-11-01T10:58:00+00:00",
        window_end="2026-11-01T11:59:30+00:00",
        events_read=40,
        occurrences_counted=1234,
        already_counted=5,
        new=[line(1), line(2, "error_code")],
        updated=[line(3, "fingerprint"), line(4, "similarity", "closed as not planned: muted")],
        regressed=[line(5, "fingerprint", issue="#7")],
        deferred=[line(6, note="over the new-issue cap", issue=None)],
        diagnosed=[line(1, note="server_bug (high), $0.0210, 3 turns")],
        waiting=[line(2, note="new signature below the threshold")],
        skipped=[SkippedRecord(where="errors.jsonl:7", reason="not JSON")],
        notes=["clickhouse_sql refused: error logs read as raw rows (capped at 20,000)", held_note(3)],
        tier_counts={"new": 2, "fingerprint": 30, "error_code": 6, "similarity": 2},
        spent_usd=0.021,
        model_calls=1,
        diagnosis_mode="diagnosis by the Claude Code CLI (sonnet)",
        budget_remaining_usd=49.979,
    )


def quiet_report() -> RoundReport:
    return RoundReport(
        run_id="20261101T121500Z-def456",
        source="otlp-file:errors.jsonl",
        tracker="dry-run",
        window_start="2026-11-01T11:57:30+00:00",
        window_end="2026-11-01T12:14:30+00:00",
        events_read=12,
        already_counted=12,
        diagnosis_mode="diagnosis off (ROUNDS_DIAGNOSER=off)",
        budget_remaining_usd=50.0,
    )


@pytest.mark.parametrize("name, report", [("busy", busy_report()), ("quiet", quiet_report())])
def test_report_matches_its_golden_file(name, report):
    rendered = render_report(report)
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("ROUNDS_UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8")


def test_a_pipe_in_a_title_is_escaped_so_the_table_keeps_its_columns():
    rows = [row for row in render_report(busy_report()).splitlines() if row.startswith("| `sig_")]
    assert rows and all(row.count(" | ") == 6 for row in rows)
    assert "KeyError: 'currency' \\| in apply_discount" in rows[0]


def test_step_summary_is_appended_not_overwritten(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    append_to_step_summary("## rounds")
    assert summary.read_text() == "earlier step\n## rounds\n"


def test_no_step_summary_outside_actions(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert append_to_step_summary("x") is None


def test_a_reports_lines_are_kept_as_given_and_read_as_mappings_are():
    """A report keeps each line it is given (a slotted record, the one object per signature the round made),
    and a line given as a mapping is read into an equal one: both report the same."""
    given = [line(1), line(2, note="over the new-issue cap", issue=None)]
    report = busy_report().model_copy(update={"new": given})
    kept = RoundReport(**{**busy_report().model_dump(exclude={"new"}), "new": given})
    assert all(mine is theirs for mine, theirs in zip(kept.new, given, strict=True))
    read = RoundReport.model_validate(
        {**busy_report().model_dump(exclude={"new"}), "new": kept.model_dump()["new"]}
    )
    assert read.new == given and render_report(read) == render_report(kept) == render_report(report)
    assert not hasattr(given[0], "__dict__")  # slots: no dictionary of fields per line
