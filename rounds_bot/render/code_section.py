"""The issue's "Where it happened" section: in-app frames linked into the repository, the suspect commit and
the owners CODEOWNERS names (shown as code: a mention would notify them)."""

from __future__ import annotations

from rounds_bot.code.locate import CodeContext, LinkedFrame
from rounds_bot.render import markdown as md


def code_section(context: CodeContext) -> str:
    """Markdown for the section, or "" when nothing is known."""
    lines: list[str] = []
    if context.frames:
        lines.append("In-app frames, innermost first:")
        lines += [f"- {_frame(frame)}" for frame in context.frames]
    suspect = context.suspect
    if suspect is not None:
        sha = md.code(suspect.sha[:10])
        shown = md.link(suspect.sha[:10], context.suspect_url) if context.suspect_url else sha
        lines += [
            "",
            "**Suspect commit** (the last change to the crash site's line before the first occurrence): "
            f"{shown} "
            f"{md.escape(suspect.title, 120)} — {md.escape(suspect.author, 60)}, {suspect.date:%Y-%m-%d}",
        ]
    if context.owners:
        owners = ", ".join(md.code(owner) for owner in context.owners[:5])
        lines += ["", f"Owners by CODEOWNERS: {owners}"]
    return "\n".join(lines).strip("\n")


def _frame(frame: LinkedFrame) -> str:
    where = md.code(frame.repo_path + (f":{frame.line}" if frame.line else "")) if frame.repo_path else None
    if where is not None and frame.url:
        where = md.trusted(f"[{where}]({frame.url})")
    shown = where or md.code(frame.printed)
    function = f" in {md.code(frame.function)}" if frame.function else ""
    return f"{shown}{function}"
