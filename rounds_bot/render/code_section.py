"""The issue's "Where it happened" section: the crash site the grouping engine chose and the frames from it
out (the app's own linked into the repository, each run of others' frames named in one line), the suspect
commit and the owners CODEOWNERS names for the crash site's line (shown as code: a mention would notify)."""

from __future__ import annotations

from rounds_bot.code.locate import CodeContext, LinkedFrame
from rounds_bot.render import markdown as md

#: an entry standing for a run of others' frames names this many characters of the first one's module
OTHER_NAME_CHARS = 60


def code_section(context: CodeContext) -> str:
    """Markdown for the section, or "" when nothing is known."""
    lines: list[str] = []
    if context.frames:
        lines += _frames(context)
    suspect = context.suspect
    if suspect is not None:
        sha = md.code(suspect.sha[:10])
        shown = md.link(suspect.sha[:10], context.suspect_url) if context.suspect_url else sha
        line = "the line that logged it" if context.source == "attributes" else "the crash site's line"
        lines += [
            "",
            f"**Suspect commit** (the last change to {line} before the first occurrence): "
            f"{shown} "
            f"{md.escape(suspect.title, 120)} — {md.escape(suspect.author, 60)}, {suspect.date:%Y-%m-%d}",
        ]
    if context.owners:
        owners = ", ".join(md.code(owner) for owner in context.owners[:5])
        lines += ["", f"Owners of that file by CODEOWNERS: {owners}"]
    return "\n".join(lines).strip("\n")


def _frames(context: CodeContext) -> list[str]:
    if context.source == "attributes":
        return [
            f"Logged at {frame_markdown(context.frames[0])}, as the record's source-location attributes "
            "(`code.file.path`, `code.line.number`) say."
        ]
    above, whose = "", "a library's, the runtime's or a recovery handler's"
    if context.above:
        frames = "frame" if context.above == 1 else "frames"
        above = f"; {context.above} {frames} above it ({whose}) not shown"
    return [f"From the crash site outward{above}:", "", *(f"- {_frame(frame)}" for frame in context.frames)]


# Built for each issue, not remembered: a memo of lines would keep each frame it is keyed by alive (a
# linked frame with its URL is a kilobyte) long after the locator that made it let it go, for the little a
# line costs to build (a few microseconds, its code spans remembered by `markdown`).
def _frame(frame: LinkedFrame) -> str:
    if frame.kind == "other":
        frames = "frame" if frame.count == 1 else "frames"
        first = md.code(_shorten(frame.printed if frame.printed != "?" else frame.function or "?"))
        more = ", …" if frame.count > 1 else ""
        return f"_{frame.count} {frames} of a library or the runtime_ ({first}{more})"
    mark = " (test code)" if frame.kind == "test" else ""
    site = " — **crash site**, where grouping placed it" if frame.crash_site else ""
    return f"{frame_markdown(frame)}{mark}{site}"


def frame_markdown(frame: LinkedFrame) -> str:
    """A frame as one line of Markdown: its repository file and line (linked when mapped), and function.
    Its spans are made as `md.span` makes them, without the memo: a frame's file and function are shown by
    one issue or a few, and a round lists tens of thousands."""
    where = md.span(frame.repo_path + (f":{frame.line}" if frame.line else "")) if frame.repo_path else None
    if where is not None and frame.url:
        where = f"[{where}]({frame.url})"
    shown = where or md.span(frame.printed)
    function = f" in {md.span(frame.function)}" if frame.function else ""
    return f"{shown}{function}"


def _shorten(text: str) -> str:
    return text if len(text) <= OTHER_NAME_CHARS else "…" + text[-(OTHER_NAME_CHARS - 1) :]
