"""A step's summary stays within what GitHub takes of one step (1 MiB), cut at a line's end with a note."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_report import busy_report, line
from workflow_files import SUMMARY_LIMIT, StepFiles

from rounds_bot.cli.run import show_report
from rounds_bot.render.step_summary import (
    STEP_SUMMARY_LIMIT,
    SummaryAddition,
    append_to_summary,
    appending_to_summary,
    within,
)
from rounds_bot.round.report import append_to_step_summary, render_report

_NOTE = re.compile(
    r"\n… (\d+) more lines are not shown here: GitHub takes at most 1 MiB of a step's summary\. "
)


def _many_new(count: int) -> str:
    report = busy_report().model_copy(update={"new": [line(n) for n in range(count)]})
    return render_report(report)


def test_a_report_of_thousands_of_new_signatures_is_cut_to_what_github_takes_and_says_so(
    tmp_path, monkeypatch
):
    markdown = _many_new(12_000)
    assert len(markdown.encode()) > STEP_SUMMARY_LIMIT  # a report GitHub would refuse whole
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    append_to_step_summary(markdown)
    written = summary.read_text(encoding="utf-8")
    assert len(written.encode()) <= STEP_SUMMARY_LIMIT
    added = written.removeprefix("earlier step\n")
    head, note = added[: added.index("\n… ")], added[added.index("\n… ") :]
    assert markdown.startswith(head) and head.endswith("|\n")  # whole table rows, as rendered
    found = _NOTE.match(note)
    assert found and int(found[1]) == (markdown + "\n").count("\n") - head.count("\n")
    assert note.endswith("The whole report is in the step's log.\n")


def test_a_report_that_fits_is_appended_whole(tmp_path, monkeypatch):
    markdown = _many_new(100)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    append_to_step_summary(markdown)
    assert summary.read_text(encoding="utf-8") == markdown + "\n"


def test_a_summary_already_full_gets_nothing_more(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (STEP_SUMMARY_LIMIT - 10), encoding="utf-8")
    append_to_summary(summary, "## rounds\n| a | b |\n")
    assert summary.stat().st_size == STEP_SUMMARY_LIMIT - 10


@given(
    st.lists(st.text(alphabet=st.sampled_from("ab|é✓\u2028 "), max_size=30), max_size=40),
    st.integers(min_value=-5, max_value=1_500),
)
def test_what_is_kept_fits_its_room_and_is_the_text_or_its_whole_lines_and_a_note(lines, room):
    markdown = "\n".join(lines)
    kept = within(markdown, room)
    assert len(kept.encode()) <= max(room, 0)
    if kept in ("", markdown):
        return
    note_at = kept.index("\n… ")
    head, note = kept[:note_at], kept[note_at:]
    assert markdown.startswith(head) and (head == "" or head.endswith("\n"))
    found = _NOTE.match(note)
    assert found and int(found[1]) == markdown.count("\n") + (not markdown.endswith("\n")) - head.count("\n")


@given(
    st.lists(st.text(alphabet=st.sampled_from("ab|é✓\u2028 \n"), max_size=30), max_size=40),
    st.integers(min_value=-5, max_value=1_500),
)
def test_an_addition_given_in_pieces_keeps_what_the_pieces_joined_keep(pieces, room):
    addition = SummaryAddition(room)
    for piece in pieces:
        addition.add(piece)
    assert addition.kept() == within("".join(pieces), room)


@pytest.mark.parametrize("count", [100, 12_000])
def test_a_round_s_report_streamed_gives_the_log_and_the_summary_what_it_gave_them_whole(
    count, tmp_path, monkeypatch, capsys
):
    report = busy_report().model_copy(update={"new": [line(n) for n in range(count)]})
    whole, streamed = tmp_path / "whole.md", tmp_path / "streamed.md"
    for summary in (whole, streamed):
        summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(whole))
    markdown = render_report(report)
    append_to_step_summary(markdown)  # the report rendered whole, as `rounds run` added it before
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(streamed))
    show_report(report)
    assert capsys.readouterr().out == markdown + "\n"
    assert streamed.read_bytes() == whole.read_bytes()


def test_an_addition_whose_writer_fails_leaves_the_summary_as_it_was(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    with pytest.raises(RuntimeError), appending_to_summary(summary) as addition:
        addition.add("## rounds\n")
        raise RuntimeError("the report could not be rendered")
    assert summary.read_text(encoding="utf-8") == "earlier step\n"


def test_the_runner_fake_refuses_a_step_summary_over_github_s_limit(tmp_path):
    assert SUMMARY_LIMIT == STEP_SUMMARY_LIMIT
    files = StepFiles.create(tmp_path, "round-1")
    files.summary.write_text("y" * (SUMMARY_LIMIT + 1), encoding="utf-8")
    assert files.read().summary == "" and files.read().summary_refused
    files.summary.write_text("y" * SUMMARY_LIMIT, encoding="utf-8")
    assert files.read().summary and not files.read().summary_refused
