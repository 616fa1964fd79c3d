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
