"""The confined edit run: the Claude Code CLI changes files in the worktree, and nothing else.

The command line, beyond what every run gets from `ClaudeCli` (throwaway HOME, allow-listed environment,
turn, budget and time limits):

- `--tools Read,Grep,Glob,Edit,Write`: the only tools offered; there is no shell, so the model runs nothing.
- `--permission-mode acceptEdits`: edits inside the working directory (the worktree) are accepted; writes
  outside it are refused, and every refusal is reported (`permission_denials`).
- `--restricted`: the file tools stay inside the worktree, and the repository's own `.claude/` settings and
  hooks are ignored; `--strict-mcp-config` with an empty configuration: its `.mcp.json` never starts.

The model's final text is kept as a note for the logs; what reaches GitHub is built by rounds from git.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from rounds_bot.diagnosis.budget import CallShape, ModelPrice, estimate_cost
from rounds_bot.diagnosis.claude_cli import ClaudeCli, prompt_argument, scratch_folder
from rounds_bot.diagnosis.claude_result import find_result, no_result_detail
from rounds_bot.diagnosis.prompting import Prompt
from rounds_bot.fixing.prompt import EDIT_TOOLS
from rounds_bot.models import Frozen

EditStatus = Literal["ok", "turn_limit", "budget_exhausted", "timeout", "api_error"]
_SUBTYPES: dict[str, EditStatus] = {
    "error_max_turns": "turn_limit",
    "error_max_budget_usd": "budget_exhausted",
}
EXPECTED_TURNS = 6


class EditRun(Frozen):
    """How the edit run ended, what it cost, and what the CLI refused."""

    status: EditStatus
    detail: str = ""
    cost_usd: float = 0.0
    cost_is_estimate: bool = False
    turns: int = 0
    refused: list[str] = Field(default_factory=list, description="tool and path of each refused call")
    note: str = Field(default="", description="the model's closing text (never published)")


class FixEditor:
    """Runs the CLI in a worktree with the edit tools, through the same `ClaudeCli` a diagnosis uses."""

    def __init__(self, cli: ClaudeCli, price: ModelPrice) -> None:
        self.cli = cli
        self.price = price

    def estimate_cost(self, prompt: Prompt) -> float:
        shape = CallShape(
            context_tokens=prompt.tokens, expected_turns=min(EXPECTED_TURNS, self.cli.max_turns)
        )
        return estimate_cost(shape, self.price)

    def command_line(self, prompt: Prompt, mcp_config: Path) -> tuple[list[str], str | None]:
        argv = [
            self.cli.binary,
            "-p",
            "--output-format",
            "json",
            "--restricted",
            "--tools",
            ",".join(EDIT_TOOLS),
            "--permission-mode",
            "acceptEdits",
            "--strict-mcp-config",
            "--mcp-config",
            str(mcp_config),
            *self.cli.limit_arguments(),
            "--append-system-prompt",
            prompt.system,
        ]
        return prompt_argument(argv, prompt.user)

    def edit(self, worktree: Path, prompt: Prompt) -> EditRun:
        """Let the model edit `worktree`; the files it changed are read from git by the caller."""
        with scratch_folder("rounds-fix-claude-") as scratch:
            mcp_config = Path(scratch) / "mcp.json"
            mcp_config.write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
            argv, stdin_text = self.command_line(prompt, mcp_config)
            finished = self.cli.run(argv, cwd=worktree, scratch=Path(scratch), stdin_text=stdin_text)
        if finished.timed_out:
            return EditRun(
                status="timeout",
                detail=f"no answer within {self.cli.timeout_seconds:g} s; the CLI was stopped",
                cost_usd=min(self.estimate_cost(prompt), self.cli.max_budget_usd),
                cost_is_estimate=True,
            )
        result = find_result(finished.stdout_lines)
        if result is None:
            return EditRun(status="api_error", detail=no_result_detail(finished))
        return edit_run(result)


def edit_run(result: dict[str, Any]) -> EditRun:
    """The CLI's result object as an `EditRun`."""
    subtype = str(result.get("subtype") or "")
    status: EditStatus = _SUBTYPES.get(subtype, "ok")
    text = str(result.get("result") or "")
    if status == "ok" and (subtype.startswith("error") or result.get("is_error")):
        status = "api_error"
    detail = "" if status == "ok" else (text or subtype or "the CLI reported an error")
    return EditRun(
        status=status,
        detail=detail[:500],
        cost_usd=max(float(result.get("total_cost_usd") or 0.0), 0.0),
        turns=int(result.get("num_turns") or 0),
        refused=[
            _refusal(denial) for denial in result.get("permission_denials") or [] if isinstance(denial, dict)
        ],
        note=text[:2000] if status == "ok" else "",
    )


def _refusal(denial: dict[str, Any]) -> str:
    tool = str(denial.get("tool_name") or "a tool")
    tool_input = denial.get("tool_input")
    where = tool_input.get("file_path") or tool_input.get("path") if isinstance(tool_input, dict) else None
    return f"{tool} {where}" if where else tool
