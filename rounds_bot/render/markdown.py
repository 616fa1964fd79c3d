"""The one rule for untrusted text in Markdown: it reaches Markdown fenced, or escaped here.

Telemetry (messages, stack traces, service names, versions, environments, attribute values) and the model's
answer are untrusted. On GitHub, Markdown text can notify people (`@user`, `@org/team`), cross-reference
issues (`#12`, `owner/repo#12`, `GH-12`) and commits (`a5c3785`), render HTML (`<img>`, `<details>`,
`<!--` that hides the rest of a body), images and links (`![](//host/x)`, autolinked `https://...`,
`www.`), math (`$...$`), tables and headings. Nothing of that may come from untrusted text, nor a line
that a person copying it would send as a `/rounds` command:

    escape(text)          inline text (a sentence, a table cell): every construct above is neutralised;
                          backtick-quoted parts, and words holding a commit SHA (which GitHub links),
                          become inert code spans
    escape_block(text)    several lines of prose (the model's root cause): escape() line by line
    cut(markdown, n, ...) rounds' own Markdown cut at a line end, where no span can be left open
                          (untrusted text is cut BEFORE it is escaped: `escape(text, limit)`,
                          `escape_block(text, limit)`)
    code(text)            an inline code span that its content cannot close
    fenced(text)          a ``` block that its content cannot close
    title_text(text)      strict: an issue title (plain text, one line, nothing that links or pings)
    label_text(text)      strict: the value part of a label name (letters, digits, `.`, `_`, `-`, `/`)
    one_line(text)        a person's text kept as data: nothing invisible, one line
    neutralise(text)      the bot's own text: no line of it reads as a `/rounds` command (escaped text
                          never starts with one either)

Templates render through `environment()`: every `{{ value }}` goes through `escape` unless the renderer built
it with these functions (they return `Markup`), so a template cannot interpolate raw telemetry by mistake.
`trusted()` marks Markdown that rounds composed itself from escaped parts.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import groupby

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from rounds_bot.redact import sanitize
from rounds_bot.render import fences, hidden

#: A zero-width space: breaks `@name`, `#12` and `://` so GitHub neither pings, references nor links.
BREAK = "\u200b"
_FENCE = "```"

# Characters that change how the rest of a line renders wherever they stand.
_ALWAYS = re.compile(r"[\\`*\[\]<>|~$]")
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_ENTITY = re.compile(r"&(?=[#A-Za-z0-9])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_REFERENCE = re.compile(r"#(?=\d)|(?<![A-Za-z0-9])(GH)-(?=\d)", re.IGNORECASE)
_AUTOLINK = re.compile(r"(?<=:)//|(?<![A-Za-z0-9])(www)\.", re.IGNORECASE)
_HEADING = re.compile(r"^#")
#: a line starting `/rounds`, after indentation and quote marks (`neutralise`)
_COMMAND_START = re.compile(r"^(\s*(?:>\s*)*)/rounds", re.IGNORECASE)
# In a title: a URL's scheme (any `word://`) and a host's `www.` are dropped; a mention counts only where
# GitHub sees one.
_TITLE_URL = re.compile(r"(?<![A-Za-z0-9+.-])(?:[A-Za-z][A-Za-z0-9+.-]*://(?:www\.)?|www\.)", re.IGNORECASE)
_TITLE_MENTION = re.compile(r"(?<![A-Za-z0-9_.+-])@(?=[A-Za-z0-9_-])")
# Block constructs that only count at the start of a line: lists, setext/thematic breaks, ordered lists
# (CommonMark's ordered list marker is one to nine ASCII digits: `[0-9]`, not `\d`, which also reads
# other scripts' digits, as `_LINE_STARTERS` does).
_LINE_START = re.compile(r"^(?:([-+=])(?=\s|[-+=]*$)|([0-9]{1,9})([.)])(?=\s|$))")
# Where any of the patterns of `_escape_plain` could match (the characters and prefixes each starts with):
# text without them is left as it is by all of them.
_ANY_CONSTRUCT = re.compile(r"[\\`*\[\]<>|~$_&@#]|gh-|//|www\.|^[-+=0-9:]", re.IGNORECASE)
#: the characters a line's block construct (`_LINE_START`, `_DELIMITER_ROW`) can start with
_LINE_STARTERS = ("-", "+", "=", ":", *"0123456789")
#: a table's delimiter row of one column (GFM's tables extension: hyphens with an optional colon at either
#: end; the pipes of more columns are always escaped): under any line it makes that line a table's header
_DELIMITER_ROW = re.compile(r":?-+:?")
#: a line that starts with rounds' command prefix (`commands.grammar.PREFIX`, any ASCII case) is a command
#: once a person copies it into a comment: escaped text never starts one (`\/rounds` renders `/rounds`)
_COMMAND = re.compile(r"/rounds", re.IGNORECASE)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
#: a commit's SHA or its abbreviation: 7 to 40 hexadecimal digits standing alone. GitHub links a SHA,
#: `user@SHA` and `user/repo@SHA` outside code (GitHub docs, "Autolinked references and URLs"), resolving
#: it across the repository's forks, so an answer or a record could make a link to a commit anyone pushed
#: to a fork. All digits count too: which SHAs GitHub links is not documented beyond that.
_SHA = re.compile(r"(?<![0-9A-Za-z_])[0-9A-Fa-f]{7,40}(?![0-9A-Za-z_])")
#: the characters of the word (an id, a path, a URL) a SHA stands in, shown whole as code: none of them
#: closes a code span or splits a table cell, and in a code span nothing of them links or pings
_ID_CHARACTERS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.:/+=-")
_TICKS = re.compile(r"`+")
_SPACES = re.compile(r"[ \t]+")
_LABEL_UNSAFE = re.compile(r"[^\w./-]+")
_SPACES_TABLE = str.maketrans({"\t": " ", "\r": " ", "\u2028": " ", "\u2029": " ", "\x85": " "})


def visible(text: str) -> str:
    """`text` without invisible characters (`redact.sanitize`: control, bidi, zero-width, tag, private-use);
    tabs and line or paragraph separators become spaces."""
    if text.isascii():
        if text.isprintable():
            return text  # no control character, tab or separator: nothing to take out or turn into a space
        # of `_SPACES_TABLE`'s characters only the tab and the carriage return are ASCII: replaced as the
        # table would (a stack trace's lines read in one pass each, not a character at a time)
        return sanitize(text.replace("\r\n", "\n").replace("\t", " ").replace("\r", " "))
    return sanitize(text.replace("\r\n", "\n").translate(_SPACES_TABLE))


def one_line(text: str) -> str:
    """Untrusted text kept as data: nothing invisible (`visible`), on one line, spaces collapsed."""
    return " ".join(visible(text).split())


def neutralise(text: str) -> str:
    """No line of the bot's own text may read as a command: `\\/rounds` renders as `/rounds`. A line of a
    top-level fenced code block (`render.fences`) is left as it is, as a backslash there would show, where
    rounds' parser reads it as code too: before any HTML comment or code element, which the parser takes
    out before it reads fences (`render.hidden`)."""
    read = hidden.lines_read_as_written(text)
    code = {at for at in fences.code_lines(text) if at < read}
    return "\n".join(
        line if at in code else _COMMAND_START.sub(r"\1\\/rounds", line)
        for at, line in enumerate(text.split("\n"))
    )


def _escape_plain(text: str) -> str:
    """One line of plain text (no code spans) with every Markdown and GitHub construct neutralised."""
    if not _ANY_CONSTRUCT.search(text):
        return text  # none of the patterns below can match: each would leave it as it is
    text = _ALWAYS.sub(lambda m: "\\" + m.group(0), text)
    # each pattern after it runs only where a character (or text) every one of its matches holds is in the
    # text as it stands by then: without one it leaves the text as it is, and the look-behinds are slow to
    # search even where they find nothing (a timestamp, a version: a leading digit and dots and dashes)
    if "_" in text:
        text = _UNDERSCORE.sub(r"\\_", text)
    if "&" in text:
        text = _ENTITY.sub(r"\\&", text)
    if "@" in text:
        text = _MENTION.sub("@" + BREAK, text)
    if "#" in text or ("-" in text and "gh-" in text.lower()):  # `#12`, `GH-12`
        text = _REFERENCE.sub(lambda m: f"{m.group(1)}-{BREAK}" if m.group(1) else "#" + BREAK, text)
    if "//" in text or ("." in text and "www." in text.lower()):  # `://`, `www.`
        text = _AUTOLINK.sub(lambda m: f"{m.group(1)}{BREAK}." if m.group(1) else BREAK + "//", text)
    if text.startswith("#"):
        text = _HEADING.sub(r"\\#", text)
    if not text.startswith(_LINE_STARTERS):
        return text
    if _DELIMITER_ROW.fullmatch(text):
        return "\\" + text
    return _LINE_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", text)


def _sha_words(text: str) -> list[tuple[bool, str]]:
    """Text outside backticks in pieces (is it code, its text): each word holding a SHA (`_SHA`) is code."""
    pieces: list[tuple[bool, str]] = []
    cursor = 0
    for match in _SHA.finditer(text):
        if match.start() < cursor:
            continue  # in the word of a SHA before it, already shown as code
        start, end = match.start(), match.end()
        while start > cursor and text[start - 1] in _ID_CHARACTERS:
            start -= 1
        while end < len(text) and text[end] in _ID_CHARACTERS:
            end += 1
        pieces += [(False, text[cursor:start]), (True, text[start:end])]
        cursor = end
    pieces.append((False, text[cursor:]))
    return pieces


def _code_run(run: list[tuple[bool, str]]) -> str:
    """Code pieces side by side, as (quoted in the text, text): spans the text quoted side by side are given
    as they were (`a` then `b`: CommonMark reads `a``b` as one span showing its inner backticks, as the text
    does); a SHA's word joins the pieces it touches into one span, as backticks side by side are one run and
    `pricing.py` touching `:1234567` would close neither span and show their backticks as text."""
    if all(quoted for quoted, _ in run):
        return "".join(str(code(text)) for _, text in run)
    return str(code("".join(text for _, text in run)))


def _escape_line(line: str) -> str:
    line = _SPACES.sub(" ", line).strip()
    pieces: list[tuple[bool, str]] = []
    spans: set[int] = set()  # the pieces quoted in backticks in the text (the others that are code: SHAs)
    cursor = 0
    for match in _CODE_SPAN.finditer(line):
        if "|" in match.group(1):
            continue  # a pipe would split a table cell even inside a code span: shown escaped instead
        pieces += _sha_words(line[cursor : match.start()])
        spans.add(len(pieces))
        pieces.append((True, match.group(1)))
        cursor = match.end()
    pieces += _sha_words(line[cursor:])
    escaped = "".join(
        _code_run([(index in spans, text) for index, (_, text) in group])
        if is_code
        else _escape_plain("".join(text for _, (_, text) in group))
        for is_code, group in groupby(
            ((index, piece) for index, piece in enumerate(pieces) if piece[1]), key=lambda item: item[1][0]
        )
    )
    return "\\" + escaped if escaped.startswith("/") and _COMMAND.match(escaped) else escaped


#: escaped and coded texts remembered at most: issues repeat the same names, versions, routes and labels
MEMO_SIZE = 8_192


def escape(text: object, limit: int | None = None) -> Markup:
    """Inline Markdown showing `text` as it is, on one line, cut to `limit` characters first."""
    return _escape(str(text), limit)


# The result depends on the text and the limit alone (the rules above are fixed), so a remembered one is
# never stale; thousands of issues a round repeat the same services, versions, routes and labels.
@lru_cache(maxsize=MEMO_SIZE)
def _escape(text: str, limit: int | None) -> Markup:
    plain = visible(text).replace("\n", " ")
    if limit is not None and len(plain) > limit:
        plain = plain[: max(limit - 1, 0)].rstrip() + "…"
    return Markup(_escape_line(plain))


def forget_remembered() -> None:
    """The escaped and coded texts remembered let go (`_escape`, `_code`): called once a burst of rendering,
    such as a round's issues, is over, so the texts of thousands of issues are not kept to the round's end
    for no reader. Only how fast the next text is escaped changes, never what it gives."""
    _escape.cache_clear()
    _code.cache_clear()


def escape_block(text: object, limit: int | None = None) -> Markup:
    """Several lines of untrusted prose, escaped line by line; paragraphs and line breaks are kept. Cut to
    `limit` characters of text first: a cut always comes before escaping, never after."""
    plain = visible(str(text))
    if limit is not None and len(plain) > limit:
        plain = plain[: max(limit - 1, 0)].rstrip() + "…"
    lines = [_escape_line(line) for line in plain.split("\n")]
    paragraphs = "\n".join(lines).strip("\n")
    return Markup(re.sub(r"\n{3,}", "\n\n", paragraphs))


def code(text: object, *, in_table: bool = False) -> Markup:
    """An inline code span holding `text` (one line) that no backtick inside can close."""
    return _code(str(text), in_table)


def span(text: str, *, in_table: bool = False) -> str:
    """`code(text)` as plain text, for a text an issue shows once (a frame's file and line, its function, a
    trace id): the common span is made without the memo, where it would only push out the texts that
    repeat (services, versions, labels) and cost more to remember than to make."""
    if _plain_span(text, in_table):
        return f"`{text}`"
    return str(_code(text, in_table))


def _plain_span(text: str, in_table: bool) -> bool:
    """Whether `text` is the common span's (a path, a function, an id): printable ASCII, not blank, without
    a backtick (or, in a table, a pipe). Nothing to take out, replace or fence apart, so the general steps
    of `_code` give it one backtick either side (a blank text still takes them)."""
    return (
        text.isascii()
        and text.isprintable()
        and "`" not in text
        and not (in_table and "|" in text)
        and bool(text.strip())
    )


@lru_cache(maxsize=MEMO_SIZE)  # the text and where it stands decide it alone, as `_escape`
def _code(text: str, in_table: bool) -> Markup:
    if _plain_span(text, in_table):
        return Markup(f"`{text}`")
    content = visible(text).replace("\n", " ")
    if in_table:
        content = content.replace("|", "\\|")
    longest = max((len(run) for run in _TICKS.findall(content)), default=0) if "`" in content else 0
    ticks = "`" * (longest + 1)
    pad = " " if content.startswith("`") or content.endswith("`") or not content.strip() else ""
    return Markup(f"{ticks}{pad}{content}{pad}{ticks}")


def cut(markdown: str, keep: int, note: str) -> Markup:
    """Markdown that rounds composed from this module's parts, cut to at most `keep` characters, followed by
    `note` (rounds' own words). The cut falls at the end of a line and nowhere else: every line these
    functions produce closes what it opens (a code span, an emphasis, an escape never reach past the line's
    end), so a cut there leaves no span open and nothing after it to run live; a cut inside a word or at a
    space could end in an open code span and turn the escaped text after it into live Markdown. A fenced
    block left open by the cut is closed with its own fence (`render.fences`)."""
    if len(markdown) <= keep:
        return Markup(markdown)
    head = markdown[: max(keep, 0)]
    end = head.rfind("\n")
    head = head[:end] if end >= 0 else ""
    fence = fences.open_fence(head)
    closing = f"\n{fence}" if fence else ""
    return Markup(f"{head.rstrip()}{closing}\n\n{note}\n".lstrip("\n"))


def fence_safe(text: str) -> str:
    """Text that cannot close a ``` fence around it: no line starts with three backticks any more."""
    return visible(text).replace(_FENCE, "`" + BREAK + "``")


def unfence(text: str) -> str:
    """`fence_safe` undone, for text read back from a rendered body."""
    return text.replace("`" + BREAK + "``", _FENCE)


def fenced(text: str) -> Markup:
    """A ``` code block showing `text`; nothing inside renders."""
    return Markup(f"{_FENCE}\n{fence_safe(text)}\n{_FENCE}")


def title_text(text: str, limit: int) -> str:
    """An issue title from untrusted parts: one line, no pings, references, links or code spans. A URL loses
    its scheme and `www.` (`https://www.x.example/a` reads `x.example/a`, nothing GitHub links) rather than
    taking a zero-width space inside it, so it copies whole; a mention or reference (`@team`, `#12`) still
    takes one after its `@` or `#`, never inside a word (`a@b.example` stays as it is)."""
    plain = _SPACES.sub(" ", visible(text).replace("\n", " ")).strip().replace("`", "'")
    # each rule runs only where a text every one of its matches holds is in the title as it stands by then
    # (`://` or `www.`, `@`, `#` or `gh-`): without one it leaves the title as it is, and the look-behinds
    # are slow to search even where they find nothing
    if "://" in plain or "www." in plain.lower():
        plain = _TITLE_URL.sub("", plain)
    if "@" in plain:
        plain = _TITLE_MENTION.sub("@" + BREAK, plain)
    if "#" in plain or "gh-" in plain.lower():
        plain = _REFERENCE.sub(lambda m: f"{m.group(1)}-{BREAK}" if m.group(1) else "#" + BREAK, plain)
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def label_text(text: str) -> str:
    """The value part of a label name: letters, digits, `.`, `_`, `-` and `/` only, nothing empty."""
    cleaned = _LABEL_UNSAFE.sub("-", visible(text).strip()).strip("-")
    return cleaned or "unknown"


def link(label: str, url: str) -> Markup:
    """A Markdown link to an http(s) URL; any other URL (or a malformed one) is shown as code instead."""
    if not re.fullmatch(r"https?://[^\s<>()\[\]`\"'\\]+", url):
        return Markup(f"{escape(label)}: {code(url)}")
    return Markup(f"[{escape(label)}]({url})")


def issue_ref(ref: str) -> Markup:
    """A tracker's own issue reference: `#12` stays a link, anything else (a draft's file name) is escaped."""
    return Markup(ref) if re.fullmatch(r"#\d+", ref) else escape(ref)


def trusted(markdown: str) -> Markup:
    """Markdown rounds composed itself from escaped, coded or fenced parts."""
    return Markup(markdown)


def _finalize(value: object) -> object:
    if isinstance(value, Markup):
        return value
    if isinstance(value, bool | int | float) or value is None:
        return value
    return escape(value)


@cache
def environment() -> Environment:
    """The templates' environment: every interpolation is escaped unless the renderer marked it Markdown."""
    env = Environment(
        loader=PackageLoader("rounds_bot", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        finalize=_finalize,
        # the templates ship with the package and do not change while a process runs: a template is
        # loaded once, not looked at on disk again for each of the thousands of issues a round renders
        auto_reload=False,
    )
    env.filters["code"] = code
    env.filters["table_code"] = lambda text: code(text, in_table=True)
    env.filters["md"] = escape
    env.filters["issue_ref"] = issue_ref
    env.globals["link"] = link
    return env


__all__ = [
    "BREAK",
    "code",
    "cut",
    "environment",
    "escape",
    "escape_block",
    "fence_safe",
    "fenced",
    "forget_remembered",
    "issue_ref",
    "label_text",
    "link",
    "span",
    "title_text",
    "trusted",
    "unfence",
    "visible",
]
