"""`/rounds` commands: what counts as one, how each is read, who may give them, what replies look like."""

from __future__ import annotations

from datetime import timedelta

import pytest

from rounds_bot.commands.grammar import (
    MAX_COMMANDS_PER_COMMENT,
    Author,
    Command,
    Malformed,
    authorise,
    command_lines,
    help_text,
    ignore_reason,
    inline_code,
    parse_comment,
    parse_duration,
    parse_line,
)
from rounds_bot.render.markdown import neutralise


def only(body: str) -> Command | Malformed:
    parsed = parse_comment(body)
    found = [*parsed.commands, *parsed.malformed]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/rounds help", Command(name="help", line="/rounds help")),
        ("/rounds", Command(name="help", line="/rounds")),
        ("/rounds status", Command(name="status", line="/rounds status")),
        ("/rounds unignore", Command(name="unignore", line="/rounds unignore")),
        ("/rounds split", Command(name="split", line="/rounds split")),
        ("/rounds fix", Command(name="fix", line="/rounds fix")),
        ("/rounds pause", Command(name="pause", line="/rounds pause")),
        ("/rounds resume", Command(name="resume", line="/rounds resume")),
        ("/rounds ignore", Command(name="ignore", line="/rounds ignore")),
        (
            "/rounds ignore for 7d",
            Command(name="ignore", line="/rounds ignore for 7d", duration=timedelta(days=7)),
        ),
        (
            "/rounds ignore for 12 hours",
            Command(name="ignore", line="/rounds ignore for 12 hours", duration=timedelta(hours=12)),
        ),
        (
            "/rounds ignore until 100 occurrences",
            Command(name="ignore", line="/rounds ignore until 100 occurrences", occurrences=100),
        ),
        ("/rounds merge #12", Command(name="merge", line="/rounds merge #12", target=12)),
        ("/rounds merge 12", Command(name="merge", line="/rounds merge 12", target=12)),
        ("/rounds rediagnose", Command(name="rediagnose", line="/rounds rediagnose")),
        (
            "/rounds rediagnose the pool is too small since v2",
            Command(
                name="rediagnose",
                line="/rounds rediagnose the pool is too small since v2",
                hint="the pool is too small since v2",
            ),
        ),
        ("/ROUNDS Pause", Command(name="pause", line="/ROUNDS Pause")),
    ],
)
def test_every_command_is_read_with_its_arguments(line, expected):
    assert parse_line(line) == expected


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("/rounds paws", "did you mean `pause`"),
        ("/rounds deploy prod", "unknown command `deploy`"),
        ("/rounds pause now please", "`pause` takes nothing after it"),
        ("/rounds ignore for ever", "cannot read the duration"),
        ("/rounds ignore for 10s", "cannot read the duration"),
        ("/rounds ignore for 400d", "at most 365 days"),
        ("/rounds ignore until many occurrences", "N must be a whole number"),
        ("/rounds ignore until 0 occurrences", "N must be a whole number"),
        ("/rounds ignore please", "usage: `/rounds ignore [for DURATION | until N occurrences]`"),
        ("/rounds merge", "name one issue"),
        ("/rounds merge #0", "name one issue"),
        ("/rounds merge octo/other#12", "name one issue"),
        ("/rounds merge #12 #13", "name one issue"),
        ("/rounds rediagnose " + "x" * 600, "keep it under 500"),
    ],
)
def test_malformed_commands_say_what_is_wrong_and_the_usage(line, problem):
    result = parse_line(line)
    assert isinstance(result, Malformed)
    assert problem in result.problem


def test_a_command_is_a_line_of_its_own():
    body = "Thanks!\n/rounds status\nI think this is /rounds pause-worthy\n  /rounds help\n"
    assert command_lines(body) == ["/rounds status", "/rounds help"]
    assert command_lines("please /rounds pause") == []
    assert command_lines("/roundsabout") == []


def test_commands_inside_quotes_or_code_are_not_commands():
    body = "\n".join(
        [
            "> /rounds pause",
            ">> /rounds resume",
            "`/rounds pause`",
            "```",
            "/rounds pause",
            "```",
            "~~~~markdown",
            "/rounds pause",
            "```",
            "/rounds pause",
            "~~~~",
            "    /rounds pause",
            "\t/rounds pause",
            "<!-- /rounds pause -->",
            "<!--",
            "/rounds pause",
            "-->",
            '"/rounds pause"',
            "- /rounds pause",
        ]
    )
    assert command_lines(body) == []


def test_an_unclosed_fence_or_comment_hides_everything_after_it():
    assert command_lines("```\n/rounds pause\n") == []
    assert command_lines("<!-- hidden\n/rounds pause\n") == []
    assert command_lines("```\nx\n```\n/rounds status") == ["/rounds status"]


def test_only_the_first_commands_of_a_comment_are_read():
    body = "\n".join(["/rounds status"] * (MAX_COMMANDS_PER_COMMENT + 5))
    parsed = parse_comment(body)
    assert len(parsed.commands) == MAX_COMMANDS_PER_COMMENT
    assert parsed.dropped == 5


def test_a_very_long_comment_is_read_up_to_githubs_limit_only():
    filler = ("lorem ipsum " * 10 + "\n") * 600  # ~72,000 characters
    parsed = parse_comment("/rounds status\n" + filler + "/rounds pause\n")
    assert [c.name for c in parsed.commands] == ["status"]
    long_line = parse_comment("/rounds rediagnose " + "y" * 5_000)
    assert long_line.malformed and "characters" in long_line.malformed[0].problem


def test_malformed_and_understood_commands_are_both_reported_in_order():
    parsed = parse_comment("/rounds status\n/rounds frobnicate\n/rounds ignore for 2w")
    assert [c.name for c in parsed.commands] == ["status", "ignore"]
    assert parsed.commands[1].duration == timedelta(weeks=2)
    assert [m.line for m in parsed.malformed] == ["/rounds frobnicate"]


def test_hints_are_kept_as_plain_data():
    command = parse_line("/rounds rediagnose look at\u202e the\u200b `pool`\x07")
    assert isinstance(command, Command)
    assert command.hint == "look at the `pool`"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30m", 1800), ("1 minute", 60), ("12h", 43_200), ("2 hrs", 7200), ("7d", 604_800), ("2w", 1_209_600)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "5", "5s", "d7", "-3d", "3 fortnights", "1.5h"])
def test_unreadable_durations(text):
    assert parse_duration(text) is None


# --- who may command ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("permission", "allowed"), [("admin", True), ("write", True), ("read", False), ("none", False)]
)
def test_only_write_or_admin_permission_may_command(permission, allowed):
    asked: list[str] = []

    def permission_of(login: str) -> str:
        asked.append(login)
        return permission

    decision = authorise("alice", permission_of)
    assert decision.allowed is allowed and asked == ["alice"]
    if not allowed:
        assert "need write or admin" in decision.reason


def test_bots_and_edited_comments_are_ignored():
    assert ignore_reason("created", Author(login="alice")) is None
    assert "bot" in (ignore_reason("created", Author(login="github-actions[bot]", type="Bot")) or "")
    assert "bot" in (ignore_reason("created", Author(login="renovate[bot]")) or "")
    assert "bot" in (ignore_reason("created", Author(login="some-app", type="Bot")) or "")
    assert "edited" in (ignore_reason("edited", Author(login="alice")) or "")
    assert "deleted" in (ignore_reason("deleted", Author(login="alice")) or "")


# --- replies -----------------------------------------------------------------------------------
def test_replies_never_contain_a_command():
    text = "\n".join(["/rounds pause", "  /rounds resume", "> /rounds pause", "fine", "- /rounds ok"])
    assert command_lines(neutralise(text)) == []
    assert neutralise("/rounds pause").startswith("\\/rounds")
    assert command_lines(neutralise(help_text())) == []
    assert command_lines(help_text()) == []


def test_user_text_in_a_reply_cannot_break_out_of_inline_code():
    shown = inline_code("x` \n/rounds pause <!-- `")
    assert shown.count("`") == 2
    assert "\n" not in shown
    assert command_lines(f"- {shown}: done") == []
