"""rounds' command parser (`commands.grammar`) deletes HTML comments (`<!--` ... `-->`) and HTML code spans
(`<pre>`, `<code>`, ...) from a comment before it reads fences, so a stretch it deletes can take a fence line
with it and turn a line after it from code into text. No line rounds writes may ever read as a command: a
`/rounds` line in a code block is left unescaped only where the parser reads the text the same way."""

from __future__ import annotations

import random

import pytest

from rounds_bot.commands.grammar import command_lines
from rounds_bot.fixing.messages import failed_comment
from rounds_bot.fixing.testcommand import TestRun
from rounds_bot.render import markdown as md
from rounds_bot.render.diagnosis import _text


def _issue(root_cause: str) -> str:
    return md.neutralise(
        "## Diagnosis\n\n### Root cause\n\n" + _text(root_cause, 4000) + "\n\n<!-- rounds:fix s -->"
    )


def test_an_html_comment_taking_a_fence_with_it_leaves_no_command():
    assert command_lines(_issue("It fails here <!--\n```\n-->\n/rounds merge #1\n```")) == []


def test_an_html_comment_in_the_reason_and_its_end_in_the_test_output_leave_no_command():
    tests = TestRun(
        command="pytest",
        passed=False,
        exit_code=1,
        timed_out=False,
        seconds=1,
        tail="E  assert x -->\n/rounds pause\ndone",
    )
    assert command_lines(failed_comment("the model's edit broke <!-- things", [], tests, None)) == []


def test_an_html_comment_spanning_two_blocks_leaves_no_command():
    root = "```\n<!--\n```\nsome words\n````\n-->\n```\n/rounds merge #1\n````"
    assert command_lines(_issue(root)) == []


def test_an_html_code_span_spanning_two_blocks_leaves_no_command():
    root = "```\n<code>\n```\nsome words\n````\n</code>\n```\n/rounds pause\n````"
    assert command_lines(_issue(root)) == []


def test_a_command_line_in_code_before_any_hidden_html_is_kept_as_written():
    text = "```\n/rounds close\n```\n\n<!-- rounds:fix s -->"
    assert md.neutralise(text) == text


def test_a_command_line_in_code_after_hidden_html_is_escaped():
    text = "<!-- x -->\n```\n/rounds close\n```"
    assert md.neutralise(text) == "<!-- x -->\n```\n\\/rounds close\n```"


#: pieces of Markdown that open, close or hide code, and command lines, as a model or test output could write
_PIECES = [
    *("```", "````", "~~~", "  ```", "   ~~~~", "- item", "> quote", "> ```", "<!--", "-->", "<code>"),
    *("</code>", "<pre>", "</pre>", "/rounds pause", "   /rounds pause", "\t/rounds pause"),
    " > /rounds pause",
    *("1. x", "", "text", "```python", "    ```", "<details>", "x\r", "```\t", "``` ```", "`````", "- ```"),
    *("  /rounds pause", "* ~~~", "<pre class=x>", "<!-- a -->", "<textarea>", "</style>"),
]


def _fuzzed(seed: int, count: int) -> list[str]:
    """`count` bodies shaped like rounds' pull request bodies, their model and test parts random pieces."""
    chance = random.Random(seed)

    def part(least: int, most: int) -> str:
        return "\n".join(chance.choice(_PIECES) for _ in range(chance.randint(least, most)))

    return [
        "Refs #1\n\n## Diagnosis\n\n### Root cause\n\n" + _text(part(1, 12), 4000)
        + "\n\n### Suggested fix\n\n" + _text(part(1, 12), 4000)
        + "\n\n<details><summary>The last lines</summary>\n\n" + str(md.fenced(part(0, 6)))
        + "\n\n</details>\n\n---\n\nThis is a draft. `/rounds fix` revises.\n\n<!-- rounds:fix s -->"
        for _ in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize("seed", [1, 7, 11])
def test_no_body_rounds_writes_reads_as_a_command(seed):
    read = [(body, command_lines(md.neutralise(body))) for body in _fuzzed(seed, 2000)]
    assert [(body, lines) for body, lines in read if lines] == []
