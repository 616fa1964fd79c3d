"""The line every issue body ends with: what to do next, from what rounds knows of the problem.

    caused by another     start at the issue of the error the same traces began with (a cascade is one
                          problem), whatever else is known
    diagnosis off         the crash site's file to open (when mapped), else the command that finds the code
                          (`git grep` for the route, the called path or the log statement's fixed words);
                          and how to turn diagnosis on
    not diagnosed yet     the crash site's file to open, or the command, or `/rounds rediagnose` now
    low confidence or     the evidence the diagnosis says it lacks (its missing observability), then
    abstained             `/rounds rediagnose`
    medium or high        review the suggested fix, or `/rounds fix` for a pull request

The model's words reach Markdown escaped (`render.markdown`), the file as rounds mapped it; a searched text
comes from telemetry, so it keeps only letters, digits and `_./:-` and is shell-quoted.
"""

from __future__ import annotations

import re
import shlex
from urllib.parse import urlsplit

from rounds_bot.code.locate import CodeContext
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.models import ErrorEvent
from rounds_bot.render import markdown as md

#: what the line says of missing evidence at most, in items and characters each
MISSING_ITEMS, MISSING_CHARS = 3, 160
TURN_ON = "set `ANTHROPIC_API_KEY` (or choose a diagnoser with `ROUNDS_DIAGNOSER`)"
#: a searched text: at most this long, at least this long to be worth searching
SEARCH_CHARS, SEARCH_MIN_CHARS = 60, 6
_UNSAFE = re.compile(r"[^A-Za-z0-9_./: -]+")
_PLACEHOLDER = re.compile(r"<[^<>\s]*>|\[REDACTED:[^\]]*\]")
#: a path segment that is a parameter: a route's (`:id`, `{id}`, `<id>`, `[id]`) or a value (3 digits or more
#: in a row, a long hex string)
_PARAMETER_SEGMENT = re.compile(
    r"^(?::\w+|\{[^}]*\}|<[^>]*>|\[[^\]]*\]|.*\d{3,}.*|[0-9a-f-]{16,})$", re.IGNORECASE
)


def next_step(
    diagnosis: Diagnosis | None,
    code: CodeContext,
    *,
    diagnosis_on: bool = True,
    search: str | None = None,
    cause: str | None = None,
) -> str:
    """The "Next step" line, as Markdown. `search` is a text to look for in the repository when no file is
    known (`search_text`); `cause`, the Markdown reference of the issue this problem's traces began with."""
    if cause:
        return (
            f"**Next step:** start at {cause}: the same traces failed there first, and this error follows "
            "from it; come back here if it outlives that fix."
        )
    if diagnosis is None:
        return f"**Next step:** {_undiagnosed(code, diagnosis_on, search)}"
    if diagnosis.classification == "unknown" or diagnosis.confidence == "low":
        unsure = "abstains" if diagnosis.classification == "unknown" else "has low confidence"
        missing = [md.escape(item, MISSING_CHARS) for item in diagnosis.missing_observability[:MISSING_ITEMS]]
        if missing:
            wanted = "; ".join(missing)
            return (
                f"**Next step:** the diagnosis {unsure}; add the evidence it lacks ({wanted}), "
                "then reply `/rounds rediagnose`."
            )
        where, command = _crash_file(code), _command(search)
        look = f"open {where} and " if where else f"run {command} and " if command else ""
        return (
            f"**Next step:** the diagnosis {unsure} and names no missing evidence; {look}reply "
            "`/rounds rediagnose <hint>` with what you know."
        )
    return (
        "**Next step:** review the suggested fix in the diagnosis above, or reply `/rounds fix` "
        "for a draft pull request with it (when fixes are turned on)."
    )


def _undiagnosed(code: CodeContext, diagnosis_on: bool, search: str | None) -> str:
    where = _crash_file(code)
    look = f"open {where}, where it crashed" if where else None
    if where and code.source == "attributes":
        look = f"open {where}, where it was logged"
    command = _command(search)
    if look is None and command:
        look = f"run {command} in the repository to find the code"
    if not diagnosis_on:
        off = f"diagnosis is off here: {TURN_ON} and reply `/rounds rediagnose`."
        return f"{look}; {off}" if look else f"{off[0].upper()}{off[1:]}"
    if look:
        return f"{look}, or reply `/rounds rediagnose` for a diagnosis now."
    return "reply `/rounds rediagnose` for a diagnosis now (no file of the repository is known for it)."


def _crash_file(code: CodeContext) -> str | None:
    """The crash site's file (the frame its suspect commit comes from), linked when it has a URL; when no
    frame maps to the repository, the crash site as the runtime printed it (the first with a line). Its
    spans are made as `md.span` makes them, without the memo: a crash site's file is one issue's."""
    frame = code.blamed
    if frame is not None and frame.repo_path is not None:
        where = md.span(frame.repo_path + (f":{frame.line}" if frame.line else ""))
        return f"[{where}]({frame.url})" if frame.url else where
    printed = next((f for f in code.frames if f.kind != "other" and f.line), None)
    if printed is None:
        return None
    function = f" ({md.span(printed.function)})" if printed.function else ""
    return f"{md.span(printed.printed)}{function}"


def _command(search: str | None) -> str | None:
    if not search:
        return None
    return md.span(f"git grep -n -F {shlex.quote(search)}")


def search_text(event: ErrorEvent, template: str) -> str | None:
    """What to look for in the repository to find the code of an error no frame places: the route of the
    request it failed (a server span's, or the one an exception was recorded on), a client span's path (up to
    its first parameter), else the first run of fixed words of a log statement or span message (`template`,
    parameters as placeholders) with three words or more, else its longest."""
    attributes = event.attributes
    route = attributes.get("http.route")
    if isinstance(route, str):  # the handler of the request that failed, whatever failed in it
        return _safe(_fixed_path(route))
    if event.kind == "span_error":
        url = attributes.get("url.full") or attributes.get("http.url")
        path = _path(url) if isinstance(url, str) else attributes.get("url.path")
        if isinstance(path, str) and event.span_kind != "server":
            return _safe(_fixed_path(path))
    if event.kind == "exception":
        return None  # an exception's words are the runtime's, not a statement of the app's
    pieces = [p.strip(" .,;:'\"()") for p in re.split(r":\s|\(|\)|\"", _PLACEHOLDER.sub("\x00", template))]
    runs = [run.strip(" .,;:'\"") for piece in pieces for run in piece.split("\x00")]
    runs = [run for run in runs if len(run) >= SEARCH_MIN_CHARS]
    chosen = next((run for run in runs if len(run.split()) >= 3), max(runs, key=len, default=None))
    return _safe(chosen) if chosen else None


def _path(url: str) -> str | None:
    try:
        return urlsplit(url).path
    except ValueError:  # not a URL after all (a redacted one)
        return None


def _fixed_path(path: str) -> str:
    """A path up to its first parameter: `/api/recommendations/:productId` -> `/api/recommendations`."""
    fixed: list[str] = []
    for segment in path.split("/"):
        if _PARAMETER_SEGMENT.match(segment):
            break
        fixed.append(segment)
    return "/".join(fixed)


def _safe(text: str) -> str | None:
    cleaned = " ".join(_UNSAFE.sub(" ", text).split())[:SEARCH_CHARS].strip()
    return cleaned if len(cleaned) >= SEARCH_MIN_CHARS else None
