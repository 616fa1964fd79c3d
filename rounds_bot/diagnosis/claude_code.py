"""Diagnose with the Claude Code CLI, run headless and read-only in the repository checkout.

The command line, and why each part is there (see the CLI spec for what was verified):

- `-p --output-format json` (or `stream-json --verbose`, for progress): one result object.
- `--tools Read,Grep,Glob[,mcp__rounds__...]`: the ONLY tools offered. `--allowedTools` is not a
  whitelist (it pre-approves), so it is used only to pre-approve the incident look-ups.
- `--restricted`: no Bash or WebFetch, file tools confined to the checkout, and the repository's
  own `.claude/settings.json` (hooks included) ignored.
- `--strict-mcp-config --mcp-config <ours>`: the repository's `.mcp.json` servers never start.
- `--json-schema`, `--max-turns`, `--max-budget-usd`, `--model`, `--no-session-persistence`.
- A throwaway HOME and TMPDIR, stdin closed, a wall-clock timeout that ends the process group,
  and an environment built from an allow-list: the model gets no GitHub token nor anything else
  it does not need. `claude_cli.ClaudeCli` does this part, the same for every run of the CLI.

This module builds and runs the command; the CLI's output is read by `claude_result` (the final
result object) and `claude_stream` (progress and token usage while it runs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rounds_bot import telemetry
from rounds_bot.diagnosis.budget import CallShape, ModelPrice, estimate_cost, price_for
from rounds_bot.diagnosis.claude_cli import (
    CREDENTIAL_VARIABLES,
    INHERITED_VARIABLES,
    MAX_PROMPT_ARGUMENT_BYTES,
    ClaudeCli,
    prompt_argument,
    scratch_folder,
)
from rounds_bot.diagnosis.claude_result import (
    find_result,
    no_result_detail,
    outcome_from_result,
    result_problem,
)
from rounds_bot.diagnosis.claude_stream import ProgressCallback, StreamWatcher, spent
from rounds_bot.diagnosis.context import DEFAULT_BUDGET_TOKENS, build_context
from rounds_bot.diagnosis.lookups import journal
from rounds_bot.diagnosis.lookups.scope import scope_for_request
from rounds_bot.diagnosis.mcp_server import McpLaunch, server_config, tool_names
from rounds_bot.diagnosis.model import (
    DiagnosisOutcome,
    DiagnosisRequest,
    LookupAnswer,
    diagnosis_json_schema,
)
from rounds_bot.diagnosis.process import Finished
from rounds_bot.diagnosis.prompting import Prompt, PromptLibrary

__all__ = [
    "CREDENTIAL_VARIABLES",
    "INHERITED_VARIABLES",
    "MAX_PROMPT_ARGUMENT_BYTES",
    "MCP_SERVER_NAME",
    "READ_ONLY_TOOLS",
    "ClaudeCodeDiagnoser",
]

READ_ONLY_TOOLS = ("Read", "Grep", "Glob")
MCP_SERVER_NAME = "rounds"


class ClaudeCodeDiagnoser:
    """A `Diagnoser` that runs the `claude` binary (`ClaudeCli`: its model, credentials and
    limits); this adds what a diagnosis needs besides: the context budget, the incident tools,
    progress streaming and the model's price."""

    name = "claude-code"

    def __init__(
        self,
        cli: ClaudeCli,
        *,
        context_budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        incident_tools: McpLaunch | None = None,
        stream: bool = False,
        on_progress: ProgressCallback | None = None,
        price: ModelPrice | None = None,
        expected_turns: int = 4,
    ) -> None:
        self.cli = cli
        self.context_budget_tokens = context_budget_tokens
        self.incident_tools = incident_tools
        self.stream = stream
        self.on_progress = on_progress
        self.price = price or price_for(cli.model)
        self.expected_turns = min(expected_turns, cli.max_turns)

    # ------------------------------------------------------------------ the Diagnoser port

    def estimate_cost(self, request: DiagnosisRequest) -> float:
        prompt = self._prompt(request)
        shape = CallShape(context_tokens=prompt.tokens, expected_turns=self.expected_turns)
        return estimate_cost(shape, self.price)

    def diagnose(self, request: DiagnosisRequest) -> DiagnosisOutcome:
        if not request.has_data():
            return DiagnosisOutcome(
                status="no_data", detail="no sample event, stack trace or message to diagnose"
            )
        prompt = self._prompt(request)
        call: dict[str, telemetry.AttributeValue | None] = {
            "gen_ai.system": "anthropic",
            "gen_ai.request.model": self.cli.model,
            "rounds.diagnoser": self.name,
            "rounds.signature_id": request.signature_id,
            "rounds.prompt_tokens_estimate": prompt.tokens,
        }
        with (
            telemetry.span("rounds.diagnose") as span,
            scratch_folder() as scratch,
        ):
            # Dotted attribute names go through `set`, which takes nothing but attributes.
            span.set(**call)
            outcome = self._run(request, prompt, Path(scratch))
            span.set(
                **{
                    "rounds.status": outcome.status,
                    "gen_ai.response.model": outcome.model,
                    "gen_ai.usage.input_tokens": outcome.tokens.input_tokens,
                    "gen_ai.usage.output_tokens": outcome.tokens.output_tokens,
                    "rounds.cache_read_tokens": outcome.tokens.cache_read_input_tokens,
                    "rounds.cache_creation_tokens": outcome.tokens.cache_creation_input_tokens,
                    "rounds.turns": outcome.turns,
                    "rounds.cost_usd": outcome.cost_usd,
                    "rounds.cost_is_estimate": outcome.cost_is_estimate,
                }
            )
        return outcome

    # ------------------------------------------------------------------ building the run

    def _prompt(self, request: DiagnosisRequest) -> Prompt:
        context = build_context(request, budget_tokens=self.context_budget_tokens)
        library = PromptLibrary.for_checkout(request.checkout)
        return library.render(context, tools=self._tools())

    def _tools(self) -> list[str]:
        mcp_tools = tool_names(MCP_SERVER_NAME) if self.incident_tools else []
        return [*READ_ONLY_TOOLS, *mcp_tools]

    def command_line(self, prompt: Prompt, mcp_config_path: Path) -> tuple[list[str], str | None]:
        """The argv, and the text to pipe on stdin (None: stdin closed)."""
        argv = [
            self.cli.binary,
            "-p",
            *(["--output-format", "stream-json", "--verbose"] if self.stream else []),
            *([] if self.stream else ["--output-format", "json"]),
            "--restricted",
            "--tools",
            ",".join(self._tools()),
            "--strict-mcp-config",
            "--mcp-config",
            str(mcp_config_path),
            "--json-schema",
            json.dumps(diagnosis_json_schema(), separators=(",", ":")),
            *self.cli.limit_arguments(),
            "--append-system-prompt",
            prompt.system,
        ]
        mcp_tools = [tool for tool in self._tools() if tool.startswith("mcp__")]
        if mcp_tools:
            # MCP tools need permission in print mode; these are the only ones pre-approved.
            argv += ["--allowedTools", ",".join(mcp_tools)]
        return prompt_argument(argv, prompt.user, MAX_PROMPT_ARGUMENT_BYTES)

    def environment(self, home: Path) -> dict[str, str]:
        """The CLI's whole environment: an allow-list, never a copy with secrets deleted."""
        return self.cli.environment(home)

    def _run(self, request: DiagnosisRequest, prompt: Prompt, scratch: Path) -> DiagnosisOutcome:
        mcp_config_path = scratch / "mcp.json"
        servers: dict[str, Any] = {}
        if self.incident_tools is not None:
            scope_path = scratch / "incident-scope.json"
            scope = scope_for_request(request, backend=self.incident_tools.backend)
            scope = scope.model_copy(update={"journal": str(scratch / "lookups.jsonl")})
            scope_path.write_text(scope.model_dump_json(), encoding="utf-8")
            servers[MCP_SERVER_NAME] = server_config(self.incident_tools, scope_path)
        # The server's entry may carry the telemetry back-end's key in its `env` (McpLaunch.for_signoz
        # says why there): readable by this user only, outside the checkout, gone with `scratch`.
        mcp_config_path.touch(mode=0o600)
        mcp_config_path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

        argv, stdin_text = self.command_line(prompt, mcp_config_path)
        stream = StreamWatcher(self.on_progress) if self.stream else None
        finished = self.cli.run(
            argv,
            cwd=request.checkout,
            scratch=scratch,
            stdin_text=stdin_text,
            on_stdout_line=stream.feed if stream else None,
        )
        return self._outcome(request, prompt, finished, stream, journal.read(scratch / "lookups.jsonl"))

    # ------------------------------------------------------------------ reading the result

    def _outcome(
        self,
        request: DiagnosisRequest,
        prompt: Prompt,
        finished: Finished,
        stream: StreamWatcher | None,
        lookups: list[LookupAnswer],
    ) -> DiagnosisOutcome:
        if finished.timed_out:
            return self._timeout_outcome(prompt, finished, stream)
        result = find_result(finished.stdout_lines)
        problem = result_problem(finished.stdout_lines) if result is None else None
        if problem is not None:
            # the run ended and printed its answer, out of bounds: the answer is bad, not the API
            return DiagnosisOutcome(
                status="invalid_answer",
                detail=problem,
                model=self.cli.model,
                duration_seconds=finished.seconds,
            )
        if result is None:
            return DiagnosisOutcome(
                status="api_error",
                detail=no_result_detail(finished),
                model=self.cli.model,
                duration_seconds=finished.seconds,
            )
        return outcome_from_result(
            result,
            request,
            duration_seconds=finished.seconds,
            fallback_model=self.cli.model,
            lookups=lookups,
        )

    def _timeout_outcome(
        self, prompt: Prompt, finished: Finished, stream: StreamWatcher | None
    ) -> DiagnosisOutcome:
        detail = f"no answer within {self.cli.timeout_seconds:g} s; the CLI was stopped"
        if stream is not None and stream.turns:
            usage = stream.usage()
            cost = spent(usage, self.price)
            return DiagnosisOutcome(
                status="timeout",
                detail=detail + f" after {stream.turns} model turns",
                cost_usd=min(cost, self.cli.max_budget_usd),
                cost_is_estimate=True,
                turns=stream.turns,
                tokens=usage,
                model=self.cli.model,
                duration_seconds=finished.seconds,
            )
        # Nothing tells what was spent: book the estimate, bounded by what the CLI may spend.
        shape = CallShape(context_tokens=prompt.tokens, expected_turns=self.expected_turns)
        return DiagnosisOutcome(
            status="timeout",
            detail=detail,
            cost_usd=min(estimate_cost(shape, self.price), self.cli.max_budget_usd),
            cost_is_estimate=True,
            model=self.cli.model,
            duration_seconds=finished.seconds,
        )
