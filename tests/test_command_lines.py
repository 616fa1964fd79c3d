"""Which lines of a comment are commands: code in any form GitHub renders as code is never obeyed, and a line
that only looks like a fence hides nothing."""

from __future__ import annotations

import pytest

from rounds_bot.commands.grammar import command_lines


@pytest.mark.parametrize(
    "body",
    [
        "<pre>\n/rounds pause\n</pre>",
        "<PRE class='x'>\n/rounds pause\n",
        "<code>\n/rounds pause\n</code>",
        "<textarea>\n/rounds pause\n</textarea>",
        "<!-- \n/rounds pause\n-->",
        "```\n/rounds pause\n```",
        "~~~~\n/rounds pause\n~~~",
        "```\n/rounds pause\n    ```\n/rounds pause",
        "> /rounds pause",
        "    /rounds pause",
    ],
)
def test_code_quotes_and_comments_are_never_commands(body):
    assert command_lines(body) == []


@pytest.mark.parametrize(
    "body",
    [
        "```not`a fence\n/rounds status",
        "```\ncode\n````\n/rounds status",
        "<pre>x</pre>\n/rounds status",
        "<!-- x -->\n/rounds status",
        "~~~\ncode\n~~~\n/rounds status",
    ],
)
def test_a_command_after_code_or_after_a_line_that_is_not_a_fence_is_read(body):
    assert command_lines(body) == ["/rounds status"]


@pytest.mark.parametrize(
    "body",
    [
        "Write `<!--` to start a comment.\n/rounds status\nand `-->` to end it.",
        "Write ``<!-- x`` and then\n/rounds status\n-->",
        "An escaped \\<!-- is a plain character.\n/rounds status\n-->",
        "```html\n<!-- an example\n```\n/rounds status\n-->",
        "~~~\n<!--\n~~~\n/rounds status",
    ],
)
def test_a_comment_opener_github_shows_as_text_hides_nothing(body):
    """In a code span, after a backslash or inside a fence `<!--` is text (CommonMark 0.31 §6.1, §2.4, §4.5):
    the command after it is shown on GitHub, so it is read."""
    assert command_lines(body) == ["/rounds status"]


@pytest.mark.parametrize(
    "body",
    [
        "text <!-- `\n/rounds pause\n` -->",
        "\\\\<!--\n/rounds pause\n-->",
        "`a` <!-- `b`\n/rounds pause\n-->",
        "``<!--` hidden\n/rounds pause\n-->",
        "<!-- ```\n/rounds pause\n``` -->",
    ],
)
def test_a_comment_github_hides_still_hides_its_commands(body):
    """A backtick inside a comment opens no code span, an escaped backslash escapes nothing after it, and a
    fence inside a comment is the comment's text."""
    assert command_lines(body) == []
