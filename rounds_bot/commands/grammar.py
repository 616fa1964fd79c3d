"""`/rounds ...` commands in issue comments: parsing and authorisation.

A command is a line of its own that starts with `/rounds` (up to three spaces of indentation, as Markdown
allows before a paragraph):

    /rounds help                      what rounds can be asked
    /rounds status                    what rounds knows about this issue's signature, and whether it is paused
    /rounds rediagnose [hint]         diagnose this signature again, with an optional hint
    /rounds ignore [for DURATION | until N occurrences]
                                      stop commenting and reopening (counts still update);
                                      DURATION: 30m, 12h, 7d, 2w
    /rounds unignore                  undo `ignore`
    /rounds merge #N                  this issue's signature is the same problem as #N: occurrences go there
    /rounds split                     undo a wrong merge of this issue
    /rounds fix [instructions]        ask for a fix pull request, with a person's instructions for it; on a
                                      pull request rounds opened: revise it (a new commit on its branch)
    /rounds pause | resume            emergency stop (and restart) of every automated action

A command is written in plain ASCII: `/rounds` and the command's name match letter for letter (in any
ASCII case), and so do the numbers and units of its arguments. A word that only looks like one (`/roundſ`
with a long s, `/rоunds` with a Cyrillic о, fullwidth letters: compatibility forms and confusables as
Unicode TR39 reads them, `lookalike`) is never obeyed; the reply says which character kept it from
counting, so whoever typed it knows what to fix.

Text that is not meant as a command never counts: quoted lines (`> /rounds ...`) and the lines a quote
continues lazily (CommonMark: a line after a quoted paragraph that starts no block of its own is still
quoted, though it has no `>`), fenced or indented
code, inline code, HTML code blocks (`<pre>`, `<code>`, and `<textarea>`, `<script>`, `<style>`), and
anything inside an HTML comment. A fence is what CommonMark (and GitHub) take for one: three or more
backticks whose info string has no backtick, or tildes, indented at most three spaces, closed by a run at
least as long; a line that only looks like a fence hides nothing. Only the first MAX_COMMANDS_PER_COMMENT
commands of a comment are carried out. A line may be up to MAX_LINE_CHARS long, except `fix`, whose
instructions are cut to MAX_INSTRUCTIONS_CHARS (the reply says so) however long the line is.

Who may command: users with write or admin permission on the repository, as the collaborator-permission API
says (`author_association` is wrong for private organisation members). Bots are never obeyed, and edited
comments are ignored (an edit must not replay or smuggle in a command).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Literal

from pydantic import Field

from rounds_bot.commands.lookalike import looks_like, skeleton, unusual_characters
from rounds_bot.fixing.requests import MAX_INSTRUCTIONS_CHARS
from rounds_bot.models import Frozen
from rounds_bot.render.hidden import without_hidden
from rounds_bot.render.markdown import code, one_line, visible

PREFIX = "/rounds"
MAX_COMMANDS_PER_COMMENT = 10
# GitHub refuses comments over 65,536 characters; nothing longer is read.
MAX_COMMENT_CHARS = 65_536
MAX_LINE_CHARS = 1_000
MAX_HINT_CHARS = 500
MAX_IGNORE = timedelta(days=365)
MAX_OCCURRENCES = 1_000_000_000
ALLOWED_PERMISSIONS = frozenset({"admin", "write"})

CommandName = Literal[
    "help", "status", "rediagnose", "ignore", "unignore", "merge", "split", "fix", "pause", "resume"
]
USAGE: dict[str, str] = {
    "help": "/rounds help",
    "status": "/rounds status",
    "rediagnose": "/rounds rediagnose [hint]",
    "ignore": "/rounds ignore [for DURATION | until N occurrences]",
    "unignore": "/rounds unignore",
    "merge": "/rounds merge #N",
    "split": "/rounds split",
    "fix": "/rounds fix [instructions]",
    "pause": "/rounds pause",
    "resume": "/rounds resume",
}
SUMMARY: dict[str, str] = {
    "help": "this list",
    "status": "what rounds knows about this issue's signature, and whether rounds is paused",
    "rediagnose": "diagnose this signature again at the next round, with an optional hint",
    "ignore": "stop commenting, reopening and notifying about this signature (its counts still update); "
    "DURATION like 30m, 12h, 7d, 2w",
    "unignore": "undo `ignore`",
    "merge": "this issue's signature is the same problem as #N: its occurrences are counted there from "
    "now on",
    "split": "undo a wrong `merge` of this issue",
    "fix": "ask for a draft fix pull request, with your instructions for it if you like; on rounds' own fix "
    "pull request: revise it with a new commit",
    "pause": "emergency stop: no issue is filed, updated or commented on until `resume`",
    "resume": "undo `pause`",
}
_NO_ARGUMENTS = {"help", "status", "unignore", "split", "pause", "resume"}

# ASCII only: under Unicode case-insensitivity `s` would also match the long s `ſ` and `k` the Kelvin sign
_COMMAND_LINE = re.compile(r"^ {0,3}/rounds(?=\s|$)(?P<rest>.*)$", re.IGNORECASE | re.ASCII)
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
_QUOTE_MARK = re.compile(r"^ {0,3}> ?")
_PARAGRAPH = re.compile(r"^ {0,3}\S")
# What can interrupt a paragraph (CommonMark 0.31): an ATX heading, a thematic break, a fence, an HTML
# block, a list item that is not empty (an ordered one only from 1); every other line continues it lazily.
_INTERRUPTS = re.compile(
    r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$|`{3,}|~{3,}|<"
    r"|[-+*][ \t]+\S|1[.)][ \t]+\S)"
)
_UNITS = {
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86_400,
    "day": 86_400,
    "days": 86_400,
    "w": 604_800,
    "week": 604_800,
    "weeks": 604_800,
}
_DURATION = re.compile(r"^(?P<amount>\d{1,6})\s*(?P<unit>[a-z]+)$", re.ASCII)
_ISSUE = re.compile(r"^#?(?P<number>\d{1,9})$", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


class Command(Frozen):
    """One command, understood."""

    name: CommandName
    line: str = Field(description="the line as written, shortened, for the reply")
    hint: str | None = None
    duration: timedelta | None = None
    occurrences: int | None = None
    target: int | None = Field(default=None, description="merge: the issue number of the other problem")
    instructions: str | None = Field(
        default=None, description="fix: what the person asks of the change, cleaned, cut to the cap"
    )
    cut_from: int | None = Field(default=None, description="fix: the instructions' length when cut")


class Malformed(Frozen):
    """A `/rounds` line that could not be understood, and why."""

    line: str
    problem: str


class Parsed(Frozen):
    commands: list[Command] = Field(default_factory=list)
    malformed: list[Malformed] = Field(default_factory=list)
    dropped: int = Field(default=0, description="commands past MAX_COMMANDS_PER_COMMENT, not carried out")

    @property
    def empty(self) -> bool:
        return not self.commands and not self.malformed


def parse_comment(body: str) -> Parsed:
    """Every command line of a comment, understood or not, in order."""
    commands: list[Command] = []
    malformed: list[Malformed] = []
    lines = command_lines(body)
    for line in lines[:MAX_COMMANDS_PER_COMMENT]:
        result = parse_line(line)
        if isinstance(result, Command):
            commands.append(result)
        else:
            malformed.append(result)
    for line in _unquoted_lines(body):
        word = line.split(maxsplit=1)[0] if _PARAGRAPH.match(line) else ""
        if looks_like(word, PREFIX) and len(malformed) < MAX_COMMANDS_PER_COMMENT:
            malformed.append(Malformed(line=shorten(line), problem=_look_alike(word, PREFIX)))
    return Parsed(
        commands=commands, malformed=malformed, dropped=max(len(lines) - MAX_COMMANDS_PER_COMMENT, 0)
    )


def command_lines(body: str) -> list[str]:
    """The lines that are commands: not quoted, not code, not hidden in an HTML comment."""
    return [line.strip() for line in _unquoted_lines(body) if _COMMAND_LINE.match(line)]


def _unquoted_lines(body: str) -> list[str]:
    """The comment's lines that are text of its own: outside code, HTML comments, quotes and the lines a
    quote continues lazily; as written (indentation matters: four spaces make code)."""
    # the same stretches `markdown.neutralise` knows are taken out (`render.hidden`)
    text = without_hidden((body or "")[:MAX_COMMENT_CHARS])
    found: list[str] = []
    fence: str | None = None
    quoted_paragraph = False  # the last line was a quote's paragraph text: the next may continue it
    for raw in text.splitlines():
        if fence is not None:
            if re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", raw):
                fence = None
            continue
        if _QUOTE_MARK.match(raw):
            quoted_paragraph = _is_paragraph_text(_quoted_content(raw))
            continue
        if not raw.strip():
            quoted_paragraph = False
            continue
        if quoted_paragraph and not _INTERRUPTS.match(raw):
            continue  # a lazy continuation line: still part of the quote
        quoted_paragraph = False
        opening = _FENCE_OPEN.match(raw)
        if opening:
            fence = opening["fence"]
            continue
        found.append(raw)
    return found


def _quoted_content(line: str) -> str:
    """A quoted line without its `>` marks (nested quotes too)."""
    while match := _QUOTE_MARK.match(line):
        line = line[match.end() :]
    return line


def _is_paragraph_text(content: str) -> bool:
    """Whether a quote's content line is (or continues) a paragraph, which a following line can continue
    lazily: not blank, not a heading, a break, a fence, an HTML block, nor indented code."""
    if not content.strip() or content.startswith(("    ", "\t")):
        return False
    return not _INTERRUPTS.match(content) or bool(re.match(r" {0,3}(?:[-+*]|1[.)])[ \t]+\S", content))


def parse_line(line: str) -> Command | Malformed:
    shown = shorten(line)
    match = _COMMAND_LINE.match(line)
    assert match is not None, "command_lines only returns command lines"
    parts = match["rest"].split(maxsplit=1)
    word = parts[0] if parts else ""
    arguments = parts[1].strip() if len(parts) > 1 else ""
    name = (word.lower() if word.isascii() else word) or "help"
    if name == "fix":
        return _fix(shown, arguments)
    if len(line) > MAX_LINE_CHARS:
        return Malformed(
            line=shown,
            problem=f"the line is {len(line):,} characters; keep a command under {MAX_LINE_CHARS:,}",
        )
    if name not in USAGE:
        return Malformed(line=shown, problem=_unknown(word))
    if name in _NO_ARGUMENTS:
        if arguments:
            return Malformed(line=shown, problem=f"`{name}` takes nothing after it; usage: `{USAGE[name]}`")
        return Command(name=name, line=shown)
    if name == "rediagnose":
        return _rediagnose(shown, arguments)
    if name == "ignore":
        return _ignore(shown, arguments)
    return _merge(shown, arguments)


def _look_alike(word: str, meant: str) -> str:
    return (
        f"{inline_code(word)} looks like `{meant}` but is not written in plain ASCII "
        f"({unusual_characters(word)}); it was not obeyed: type it with ASCII letters"
    )


def _unknown(word: str) -> str:
    meant = skeleton(word)
    if meant in USAGE and looks_like(word, meant):
        return _look_alike(word, meant)
    close = difflib.get_close_matches(word.lower(), list(USAGE), n=1)
    suggestion = f" (did you mean `{close[0]}`?)" if close else ""
    return f"unknown command {inline_code(word)}{suggestion}; known: {', '.join(USAGE)}"


def _rediagnose(shown: str, arguments: str) -> Command | Malformed:
    hint = one_line(arguments)
    if len(hint) > MAX_HINT_CHARS:
        return Malformed(
            line=shown, problem=f"the hint is {len(hint)} characters; keep it under {MAX_HINT_CHARS}"
        )
    return Command(name="rediagnose", line=shown, hint=hint or None)


def _fix(shown: str, arguments: str) -> Command:
    """`fix` with the person's instructions, if any: kept as data (one line, nothing invisible), cut to
    MAX_INSTRUCTIONS_CHARS rather than refused, so a long request still counts. The reply shows them once,
    escaped (`effects`), so the line it echoes leaves them out."""
    instructions = one_line(visible(arguments))
    if not instructions:
        return Command(name="fix", line=shown)
    line = f"{PREFIX} fix …"
    if len(instructions) <= MAX_INSTRUCTIONS_CHARS:
        return Command(name="fix", line=line, instructions=instructions)
    cut = instructions[: MAX_INSTRUCTIONS_CHARS - 1].rstrip() + "…"
    return Command(name="fix", line=line, instructions=cut, cut_from=len(instructions))


def _ignore(shown: str, arguments: str) -> Command | Malformed:
    usage = f"usage: `{USAGE['ignore']}`, e.g. `ignore for 7d` or `ignore until 100 occurrences`"
    words = arguments.lower().split()
    if not words:
        return Command(name="ignore", line=shown)
    if words[0] == "for":
        duration = parse_duration(" ".join(words[1:]))
        if duration is None:
            return Malformed(line=shown, problem=f"cannot read the duration; {usage}")
        if duration > MAX_IGNORE:
            return Malformed(line=shown, problem="at most 365 days; `ignore` alone lasts until `unignore`")
        return Command(name="ignore", line=shown, duration=duration)
    if words[0] == "until" and len(words) == 3 and words[2] in ("occurrence", "occurrences"):
        if not (words[1].isascii() and words[1].isdigit()) or not 0 < int(words[1]) <= MAX_OCCURRENCES:
            return Malformed(
                line=shown, problem=f"N must be a whole number from 1 to {MAX_OCCURRENCES:,}; {usage}"
            )
        return Command(name="ignore", line=shown, occurrences=int(words[1]))
    return Malformed(line=shown, problem=usage)


def parse_duration(text: str) -> timedelta | None:
    """`30m`, `12 hours`, `7d`, `2w` -> a timedelta of at least a minute; None when unreadable."""
    match = _DURATION.match(text.strip().lower())
    if not match or match["unit"] not in _UNITS:
        return None
    seconds = int(match["amount"]) * _UNITS[match["unit"]]
    return timedelta(seconds=seconds) if seconds >= 60 else None


def _merge(shown: str, arguments: str) -> Command | Malformed:
    match = _ISSUE.match(arguments)
    if not match or int(match["number"]) == 0:
        return Malformed(line=shown, problem=f"name one issue of this repository; usage: `{USAGE['merge']}`")
    return Command(name="merge", line=shown, target=int(match["number"]))


# --- who may command ---------------------------------------------------------------------------
class Author(Frozen):
    login: str
    type: str = "User"

    @property
    def is_bot(self) -> bool:
        return self.type == "Bot" or self.login.lower().endswith("[bot]")


def ignore_reason(action: str, author: Author) -> str | None:
    """Why a comment event is not read for commands at all, or None when it is."""
    if action != "created":
        return f"the comment was {action}; only new comments carry commands"
    if author.is_bot:
        return f"@{author.login} is a bot; bots are never obeyed"
    return None


class Authorisation(Frozen):
    allowed: bool
    permission: str
    reason: str


def authorise(login: str, permission_of: Callable[[str], str]) -> Authorisation:
    """Write or admin permission on the repository, as GitHub's collaborator-permission API says."""
    permission = permission_of(login)
    if permission in ALLOWED_PERMISSIONS:
        return Authorisation(
            allowed=True, permission=permission, reason=f"@{login} has {permission} permission"
        )
    held = "no permission" if permission in ("none", "") else f"{permission} permission"
    return Authorisation(
        allowed=False,
        permission=permission,
        reason=f"@{login} has {held} on this repository; `/rounds` commands need write or admin",
    )


# --- text that goes back into a comment ------------------------------------------------------------
def shorten(text: str, limit: int = 80) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def inline_code(text: str) -> str:
    """User text shown inside inline code, which it cannot break out of."""
    return code(shorten(text).replace("`", "'"))


def help_text() -> str:
    rows = "\n".join(f"| `{USAGE[name]}` | {SUMMARY[name]} |" for name in USAGE)
    return (
        "Comment one command per line; people with write or admin permission can use them.\n\n"
        "| command | what it does |\n|---|---|\n" + rows
    )
