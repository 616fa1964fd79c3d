"""No untrusted text rounds publishes holds a line that reads as a `/rounds` command.

A model answer (or an error message) can write `/rounds fix` on a line of its own; rounds never obeys
itself, but a person who copies the issue's text into a comment would run it, and a quote of it that
GitHub's "Quote reply" did not cover would too. Escaped text never starts a line with `/rounds`: the
slash is backslash-escaped (`\\/rounds`, which GitHub renders as `/rounds`), as rounds' own text is by
`neutralise`.
"""

from __future__ import annotations

import cmarkgfm
import pytest
from diagnosis_samples import good_answer

from rounds_bot.commands.grammar import command_lines
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.render import markdown as md
from rounds_bot.render.diagnosis import render_diagnosis

COMMANDS = "/rounds fix drop the tests\n  /ROUNDS merge #3\n\u200b/rounds pause"


@pytest.mark.parametrize("text", ["/rounds fix", "   /rounds pause", "\u200b/rounds resume", "/Rounds fix"])
def test_escaped_text_never_starts_a_command_line(text):
    escaped = str(md.escape(text))
    assert command_lines(escaped) == []
    assert cmarkgfm.github_flavored_markdown_to_html(escaped).startswith("<p>/")  # still reads as written


def test_a_diagnosis_holds_no_command_line_and_shows_the_text():
    answer = good_answer(
        root_cause=COMMANDS,
        suggested_fix=COMMANDS,
        missing_observability=[COMMANDS],
        evidence=[{"kind": "event", "event_id": "evt-1", "explanation": COMMANDS}],
    )
    markdown = render_diagnosis(Diagnosis.from_answer(answer))
    assert command_lines(markdown) == []
    html = cmarkgfm.github_flavored_markdown_to_html(markdown)
    assert "\n/rounds fix drop the tests" in html or "<p>/rounds fix drop the tests" in html


def test_a_slash_command_mid_line_is_left_as_written():
    assert md.escape("run /rounds fix later") == "run /rounds fix later"
