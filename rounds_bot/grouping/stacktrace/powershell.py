"""PowerShell's errors: an error record as the host prints it, and `$_.ScriptStackTrace`.

Windows PowerShell's NormalView (and PowerShell 7's with `$ErrorView = 'NormalView'`):

    You cannot call a method on a null-valued expression.
    At C:\\app\\deploy.ps1:12 char:5
    +     $name.Trim()
    +     ~~~~~~~~~~~~
        + CategoryInfo          : InvalidOperation: (:) [], RuntimeException
        + FullyQualifiedErrorId : InvokeMethodOnNull

PowerShell 7's ConciseView, its default (about_Preference_Variables, `$ErrorView`):

    InvalidOperation: C:\\app\\deploy.ps1:12
    Line |
      12 |      $name.Trim()
         |      ~~~~~~~~~~~~
         | You cannot call a method on a null-valued expression.

And an error's `ScriptStackTrace` (System.Management.Automation.ErrorRecord), a caller a line. A record is
read only with its script stack (its frames come from it; a record alone names no function, and its location
alone would make one problem of every error of a script):

    at Invoke-Deploy, C:\\app\\deploy.ps1: line 12
    at <ScriptBlock>, <No file>: line 1

The type is the record's FullyQualifiedErrorId when printed, else the exception's type (CategoryInfo's
last part), else `ERROR`; the column (`char:N`) is where on the line, never part of a frame. No release
before this one read these texts: their events went to their message's template, and the signature made so
keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: the type of a stack printed without its record
ERROR = "error"
_AT = re.compile(
    r"^At (?:line:(?P<bare>\d{1,9})|(?P<file>\S.{0,1023}?\.ps[dm]?1):(?P<line>\d{1,9})) char:\d{1,9}$"
)
_CONCISE = re.compile(r"^(?:(?P<kind>[^:]{1,256}): )?(?P<file>\S.{0,1023}?\.ps[dm]?1):(?P<line>\d{1,9})$")
_CONCISE_LINE = re.compile(r"^\s*\d{1,9} \|")
_BAR = re.compile(r"^\s*\| ?(?P<text>.*)$")
#: a frame line, behind `ScriptStackTrace : ` on the first line when `Format-List`/`Get-Error` prints the
#: record
_STACK = re.compile(
    r"^\s*(?:ScriptStackTrace\s*: )?at (?P<fn>[^,]{1,512}), "
    r"(?P<file><No file>|\S.{0,1023}?): line (?P<line>\d{1,9})$"
)
_FIELD = re.compile(r"^\s+\+ (?P<key>CategoryInfo|FullyQualifiedErrorId)\s*: (?P<value>.*)$")
#: CategoryInfo's `Category: (target:type) [activity], Reason`, the reason the exception's type
#: a script named by a GUID, as GitHub Actions writes a step's (`$RUNNER_TEMP\\<guid>.ps1`): another each run
_GUID = re.compile(r"(?<=[/\\])[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?=\.ps1$)")
_REASON = re.compile(r"\], (?P<reason>[\w.]{1,256})$")


def is_frame_line(line: str) -> bool:
    """A location line of a record, a line of its ConciseView, or a caller of a stack."""
    return bool(
        _AT.match(line) or _STACK.match(line) or _CONCISE_LINE.match(line) or line.strip() == "Line |"
    )


def looks_like_powershell_line(line: str) -> bool:
    """A line only PowerShell prints: a record's location, ConciseView's `Line |`, a stack's caller."""
    return bool(_AT.match(line) or line.strip() == "Line |" or (": line " in line and _STACK.match(line)))


def parse(lines: list[str]) -> ParsedTrace | None:
    """The error of a record in either view with its script stack, or of a script stack alone; None for any
    other text. A record's `At` line names a file and no function: without the stack's callers it is left to
    its message, so two errors of one script stay two problems."""
    frames = _stack_frames(lines)
    if not frames:
        return None
    exception = (
        _normal_view(lines, frames) or _concise_view(lines, frames) or ParsedException(ERROR, "", frames)
    )
    return ParsedTrace("powershell", (exception,), (NEWLY_READ,))


def _normal_view(lines: list[str], frames: tuple[Frame, ...]) -> ParsedException | None:
    index = next((i for i, line in enumerate(lines) if _AT.match(line)), None)
    if index is None:
        return None
    fields = {m["key"]: m["value"].strip() for m in map(_FIELD.match, lines[index:]) if m is not None}
    reason = _REASON.search(fields.get("CategoryInfo", ""))
    value = " ".join(line.strip() for line in lines[:index] if line.strip())
    error_id = fields.get("FullyQualifiedErrorId", "")
    if value and value in error_id:
        error_id = ""  # `throw "text"` makes the text its id (about_Throw): the exception's type names it
    kind = error_id or (reason["reason"] if reason else ERROR)
    return ParsedException(kind, value, frames)


def _concise_view(lines: list[str], frames: tuple[Frame, ...]) -> ParsedException | None:
    index = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "Line |"), None)
    head = _CONCISE.match(lines[index - 1]) if index is not None else None
    if index is None or head is None:
        return None
    message: list[str] = []
    for line in lines[index + 1 :]:
        bar = _BAR.match(line)
        if _CONCISE_LINE.match(line) is None and bar is None:
            break
        if bar is not None and bar["text"].strip() and set(bar["text"].strip()) != {"~"}:
            message.append(bar["text"].strip())  # the host wraps a long message over several such lines
    return ParsedException(head["kind"] or ERROR, " ".join(message), frames)


def _stack_frames(lines: list[str]) -> tuple[Frame, ...]:
    """A script stack's callers, innermost first; `<No file>` is code typed or passed as a string."""
    frames = []
    for match in map(_STACK.match, lines):
        if match is not None:
            file = None if match["file"] == "<No file>" else _GUID.sub("<guid>", match["file"])
            frames.append(Frame(match["fn"].strip(), filename=file, lineno=int(match["line"])))
    return tuple(frames)
