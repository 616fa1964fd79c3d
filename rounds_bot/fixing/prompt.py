"""What the model is told when it proposes a fix: the problem, the diagnosis, and the rules of the worktree.

The prompts are templates (`templates/prompts/fix_system.md.j2` and `fix.md.j2`); a repository overrides
them in `.rounds/prompts/` like the diagnosis prompts, read from the worktree (the default branch's head).
Telemetry and the diagnosis's prose reach the model fenced as data. A person's instructions (`/rounds fix
<instructions>`, from someone with write access) reach it fenced apart, as a collaborator's words: cleaned of
invisible characters, redacted like telemetry, capped in length (`requests.MAX_INSTRUCTIONS_CHARS`), inside a
`<<<COLLABORATOR id` fence whose id their text cannot know.
"""

from __future__ import annotations

from pathlib import Path

from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.diagnosis.prompting import Prompt, PromptLibrary, fence
from rounds_bot.fixing.requests import MAX_INSTRUCTIONS_CHARS, FixRequest
from rounds_bot.models import Frozen
from rounds_bot.redact import clean
from rounds_bot.render.markdown import one_line
from rounds_bot.signature import Signature

SYSTEM_TEMPLATE = "fix_system.md.j2"
USER_TEMPLATE = "fix.md.j2"
EDIT_TOOLS = ("Read", "Grep", "Glob", "Edit", "Write")
COLLABORATOR = "COLLABORATOR"


class FixBrief(Frozen):
    """The problem as the fix prompt shows it (telemetry already redacted)."""

    signature_id: str
    service: str
    issue_number: int
    title: str
    error_type: str
    total_count: int
    versions: list[str]
    message: str
    stacktrace: str | None
    diagnosis: Diagnosis | None
    previous: str | None = None
    instructions: str | None = None
    instructions_by: str | None = None


def fix_brief(
    signature: Signature,
    issue_number: int,
    diagnosis: Diagnosis | None,
    previous: str | None = None,
    *,
    request: FixRequest | None = None,
) -> FixBrief:
    """The brief; with `request`, the instructions its person gave (none for rounds' own choice)."""
    representative = signature.representative
    instructions = request.instructions if request is not None and request.trigger != "auto" else None
    return FixBrief(
        signature_id=signature.id,
        service=signature.service,
        issue_number=issue_number,
        title=clean(signature.title),
        error_type=signature.error_type,
        total_count=signature.total_count,
        versions=sorted(signature.versions),
        message=clean(representative.message),
        stacktrace=clean(representative.stacktrace) if representative.stacktrace else None,
        diagnosis=diagnosis,
        previous=previous,
        instructions=collaborator_text(instructions) if instructions else None,
        instructions_by=request.by if request is not None and instructions else None,
    )


def collaborator_text(text: str) -> str:
    """A person's instructions as the prompt shows them: one line, nothing invisible, secrets redacted,
    within the command grammar's cap (again: a request may have been logged by another version)."""
    plain = one_line(clean(text))
    return plain if len(plain) <= MAX_INSTRUCTIONS_CHARS else plain[: MAX_INSTRUCTIONS_CHARS - 1] + "…"


def fix_prompt(
    worktree: Path, brief: FixBrief, *, test_command: str, protected: list[str], max_diff_lines: int
) -> Prompt:
    """The rendered prompt, from the worktree's own templates when it has them."""
    library = PromptLibrary.for_checkout(worktree)
    variables: dict[str, object] = {
        "fix": brief,
        "tools": list(EDIT_TOOLS),
        "test_command": test_command,
        "protected": protected,
        "max_diff_lines": max_diff_lines,
        # fenced here, not by the template: a collaborator's words never reach the model unfenced
        "instructions": fence(brief.instructions, "instructions", source=COLLABORATOR)
        if brief.instructions
        else None,
    }
    return library.render_templates(SYSTEM_TEMPLATE, USER_TEMPLATE, variables)
