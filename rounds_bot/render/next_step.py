"""The line every issue body ends with: what to do next, from what rounds knows of the problem.

    diagnosis off         the crash site's file to open (when mapped), and how to turn diagnosis on
    not diagnosed yet     the crash site's file to open, or `/rounds rediagnose` to ask for one now
    low confidence or     the evidence the diagnosis says it lacks (its missing observability), then
    abstained             `/rounds rediagnose`
    medium or high        review the suggested fix, or `/rounds fix` for a pull request

The model's words reach Markdown escaped (`render.markdown`), the file as rounds mapped it.
"""

from __future__ import annotations

from rounds_bot.code.locate import CodeContext
from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.render import markdown as md

#: what the line says of missing evidence at most, in items and characters each
MISSING_ITEMS, MISSING_CHARS = 3, 160
TURN_ON = "set `ANTHROPIC_API_KEY` (or choose a diagnoser with `ROUNDS_DIAGNOSER`)"


def next_step(diagnosis: Diagnosis | None, code: CodeContext, *, diagnosis_on: bool = True) -> str:
    """The "Next step" line, as Markdown."""
    if diagnosis is None:
        return f"**Next step:** {_undiagnosed(code, diagnosis_on)}"
    if diagnosis.classification == "unknown" or diagnosis.confidence == "low":
        unsure = "abstains" if diagnosis.classification == "unknown" else "has low confidence"
        missing = [md.escape(item, MISSING_CHARS) for item in diagnosis.missing_observability[:MISSING_ITEMS]]
        if missing:
            wanted = "; ".join(missing)
            return (
                f"**Next step:** the diagnosis {unsure}; add the evidence it lacks ({wanted}), "
                "then reply `/rounds rediagnose`."
            )
        where = _crash_file(code)
        look = f"open {where} and " if where else ""
        return (
            f"**Next step:** the diagnosis {unsure} and names no missing evidence; {look}reply "
            "`/rounds rediagnose <hint>` with what you know."
        )
    return (
        "**Next step:** review the suggested fix in the diagnosis above, or reply `/rounds fix` "
        "for a draft pull request with it (when fixes are turned on)."
    )


def _undiagnosed(code: CodeContext, diagnosis_on: bool) -> str:
    where = _crash_file(code)
    if not diagnosis_on:
        off = f"diagnosis is off here: {TURN_ON} and reply `/rounds rediagnose`."
        return f"open {where}, where it crashed; {off}" if where else f"{off[0].upper()}{off[1:]}"
    if where:
        return f"open {where}, where it crashed, or reply `/rounds rediagnose` for a diagnosis now."
    return "reply `/rounds rediagnose` for a diagnosis now (no file of the repository is known for it)."


def _crash_file(code: CodeContext) -> str | None:
    """The innermost in-app frame mapped to a file of the repository, linked when it has a URL."""
    frame = next((f for f in code.frames if f.repo_path), None)
    if frame is None or frame.repo_path is None:
        return None
    where = md.code(frame.repo_path + (f":{frame.line}" if frame.line else ""))
    return f"[{where}]({frame.url})" if frame.url else str(where)
