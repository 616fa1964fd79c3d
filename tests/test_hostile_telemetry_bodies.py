"""Hostile telemetry in an issue body: whatever a span, a log record or a message sent shows as text, and
pings, references, links or restructures nothing (GitHub's renderer, cmark-gfm, raw HTML on)."""

from __future__ import annotations

import re

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from test_issue_bodies import SERVER_SPAN, occurrence

from rounds_bot.render.issue import _sentence
from rounds_bot.render.telemetry import VALUE_CHARS, request_rows, table

ZW = "\u200b"


def _html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def test_a_span_kind_of_markdown_shows_as_text_in_the_request_table() -> None:
    """The span's kind is the exporter's word (OTLP `SpanKind`, as the backend names it): untrusted like any
    other value, it reaches the table escaped."""
    hostile = occurrence(
        kind="span_error",
        span_kind="@octocat | [x](https://evil.example) <img src=x>",
        attributes=SERVER_SPAN,
        trace_id="4c9171adca6945eeb4728e2370d4a65b",
    )
    rows = dict(request_rows(hostile))
    assert rows["Span"].startswith(f"@{ZW}octocat \\| \\[x\\](https:{ZW}//evil.example) \\<img src=x\\> span")
    html = _html(table(request_rows(hostile)))
    assert "<a " not in html and "<img" not in html
    assert all(row.count("<td>") == 2 for row in html.split("<tr>")[2:])  # no cell split the row


def test_a_long_span_kind_is_cut_to_the_length_of_any_table_value() -> None:
    """An exporter can store any word as the kind: it is cut, like every value of the table, to
    `VALUE_CHARS` characters, saying so with an ellipsis."""
    hostile = occurrence(
        kind="span_error",
        span_kind="k" * 10_000,
        attributes=SERVER_SPAN,
        trace_id="4c9171adca6945eeb4728e2370d4a65b",
    )
    shown = dict(request_rows(hostile))["Span"].rsplit(" in ", 1)[0]
    assert shown == "k" * (VALUE_CHARS - 1) + "… span"


@pytest.mark.parametrize(
    ("summary", "shown"),
    [
        ("build 1234567:http://reg.example/v2/ failed", "build 1234567: http://reg.example/v2/ failed"),
        ("abc1234:https://e.x/a failed", "abc1234: https://e.x/a failed"),
    ],
)
def test_a_sha_touching_a_url_in_the_summary_shows_no_backtick(summary: str, shown: str) -> None:
    # the SHA's word and the URL are each a code span: side by side, their backticks would be one run
    html = _html(_sentence(summary))
    assert "`" not in html
    assert re.sub(r"<[^>]+>", "", html).strip() == shown
