"""A fix proposed for a case by the fix editor, as the round's fix stage makes one.

The case's repository is copied into a scratch git repository under the eval's output folder, the fix prompt
is built from the case's telemetry and the diagnosis (`fixing.prompt`), the confined edit run changes the copy
(`fixing.editor`: the real CLI with the edit tools only), and the change is taken the way the fix stage takes
it (a full-index binary diff of everything staged) and through the same patch checks. The change is what a
recording keeps as its `fix_patch`; `fixes.py` then tests it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.eval.cases import LoadedCase
from rounds_bot.fixing.checks import DEFAULT_MAX_DIFF_BYTES
from rounds_bot.fixing.editor import EditRun, FixEditor
from rounds_bot.fixing.patchcheck import check_patch
from rounds_bot.fixing.prompt import FixBrief, fix_prompt
from rounds_bot.models import Frozen

MAX_DIFF_LINES = 200
_IDENTITY = [
    "-c",
    "user.name=rounds eval",
    "-c",
    "user.email=eval@rounds.invalid",
    "-c",
    "commit.gpgsign=false",
]


class ProposedFix(Frozen):
    patch: str | None = None
    detail: str = ""
    turns: int = 0
    cost_usd: float = 0.0


def propose_fix(
    loaded: LoadedCase, diagnosis: Diagnosis | None, editor: FixEditor, scratch: Path, *, max_cost_usd: float
) -> ProposedFix:
    """The editor's change to a copy of the case's repository, or why there is none (a git step that fails
    is such a why, never an exception out of the eval)."""
    try:
        return _propose(loaded, diagnosis, editor, scratch, max_cost_usd)
    except (OSError, subprocess.SubprocessError) as error:
        return ProposedFix(detail=f"the scratch repository could not be prepared or read: {error}")


def _propose(
    loaded: LoadedCase, diagnosis: Diagnosis | None, editor: FixEditor, scratch: Path, max_cost_usd: float
) -> ProposedFix:
    case = loaded.case
    tree = loaded.fresh_copy(scratch)
    assert case is not None
    for arguments in (["init", "-q"], ["add", "--all"], ["commit", "-qm", "the faulty revision"]):
        _git(tree, *arguments)
    event = case.telemetry[0]
    brief = FixBrief(
        signature_id=case.id,
        service=case.service,
        issue_number=1,
        title=f"{event.error_type or 'error'}: {event.message}",
        error_type=event.error_type or "",
        total_count=len(case.telemetry),
        versions=[],
        message=event.message,
        stacktrace=event.stacktrace,
        diagnosis=diagnosis,
    )
    command = case.truth.tests.command or "python -m pytest"
    prompt = fix_prompt(tree, brief, test_command=command, protected=[], max_diff_lines=MAX_DIFF_LINES)
    estimate = editor.estimate_cost(prompt)
    if estimate > max_cost_usd:
        return ProposedFix(detail=f"not run: ${estimate:.2f} estimated, ${max(max_cost_usd, 0):.2f} left")
    run = editor.edit(tree, prompt)
    spent = {"turns": run.turns, "cost_usd": run.cost_usd}
    if run.status != "ok" or run.refused:
        return ProposedFix(detail=_failed(run), **spent)
    _git(tree, "add", "--all")
    change = _git(tree, "diff", "--cached", "--binary", "--no-renames", "--full-index")
    if not change:
        return ProposedFix(detail="the editor changed nothing", **spent)
    checked = check_patch(
        change.encode("utf-8"), protected=[], max_diff_lines=MAX_DIFF_LINES, max_bytes=DEFAULT_MAX_DIFF_BYTES
    )
    if checked.problems:
        return ProposedFix(detail="the change breaks rounds' checks: " + "; ".join(checked.problems), **spent)
    return ProposedFix(patch=change, **spent)


def _failed(run: EditRun) -> str:
    refused = f"; refused: {', '.join(run.refused)}" if run.refused else ""
    return f"the edit run ended {run.status}: {run.detail}{refused}"


def _git(tree: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", *_IDENTITY, *arguments], cwd=tree, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout
