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
  it does not need.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rounds_bot import telemetry
from rounds_bot.diagnosis._process import Finished, run_with_deadline
from rounds_bot.diagnosis.budget import CallShape, ModelPrice, estimate_cost, price_for
from rounds_bot.diagnosis.context import DEFAULT_BUDGET_TOKENS, build_context
from rounds_bot.diagnosis.evidence import check_evidence
from rounds_bot.diagnosis.mcp_server import (
    McpLaunch,
    scope_for_request,
    server_config,
    tool_names,
)
from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisOutcome,
    DiagnosisRequest,
    OutcomeStatus,
    TokenUsage,
    diagnosis_json_schema,
)
from rounds_bot.diagnosis.prompting import Prompt, PromptLibrary
from rounds_bot.errors import ConfigError, DiagnosisError

READ_ONLY_TOOLS = ("Read", "Grep", "Glob")
MCP_SERVER_NAME = "rounds"

#: variables the CLI may inherit from rounds' own environment: locale, certificates, proxies
INHERITED_VARIABLES = frozenset(
    {
        "PATH",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NO_PROXY",
        "https_proxy",
        "http_proxy",
        "no_proxy",
    }
)
#: the only credentials the CLI needs, passed explicitly by the caller
CREDENTIAL_VARIABLES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CUSTOM_HEADERS",
    }
)
#: above this many bytes the prompt goes on stdin: one command-line argument is limited to 128 KiB
MAX_PROMPT_ARGUMENT_BYTES = 100_000

ProgressCallback = Callable[[dict[str, Any]], None]


class ClaudeCodeDiagnoser:
    """A `Diagnoser` that runs the `claude` binary. Every value is passed in; nothing is read
    from the environment here (pass `inherited_env=os.environ` to let PATH and proxies through)."""

    name = "claude-code"

    def __init__(
        self,
        *,
        binary: str | Path,
        model: str,
        credentials: Mapping[str, str],
        inherited_env: Mapping[str, str] | None = None,
        max_turns: int = 12,
        max_budget_usd: float = 1.0,
        timeout_seconds: float = 600.0,
        context_budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        max_retries: int | None = None,
        incident_tools: McpLaunch | None = None,
        stream: bool = False,
        on_progress: ProgressCallback | None = None,
        price: ModelPrice | None = None,
        expected_turns: int = 4,
    ) -> None:
        unknown = sorted(set(credentials) - CREDENTIAL_VARIABLES)
        if unknown:
            raise ConfigError(
                f"credentials for the Claude Code CLI may only set {sorted(CREDENTIAL_VARIABLES)}, "
                f"not {unknown}",
                hint="pass other settings as constructor arguments",
            )
        if max_turns < 1 or max_budget_usd <= 0 or timeout_seconds <= 0:
            raise ConfigError(
                "max_turns, max_budget_usd and timeout_seconds must be positive "
                f"(got {max_turns}, {max_budget_usd}, {timeout_seconds})"
            )
        # A relative path is the caller's, not the checkout's (the CLI runs with cwd=checkout).
        self.binary = str(Path(binary).absolute()) if "/" in str(binary) else str(binary)
        self.model = model
        self._credentials = dict(credentials)
        self._inherited = {
            key: value for key, value in (inherited_env or {}).items() if key in INHERITED_VARIABLES
        }
        self.max_turns = max_turns
        self.max_budget_usd = max_budget_usd
        self.timeout_seconds = timeout_seconds
        self.context_budget_tokens = context_budget_tokens
        self.max_retries = max_retries
        self.incident_tools = incident_tools
        self.stream = stream
        self.on_progress = on_progress
        self.price = price or price_for(model)
        self.expected_turns = min(expected_turns, max_turns)

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
        with (
            telemetry.span(
                "rounds.diagnose",
                **{
                    "gen_ai.system": "anthropic",
                    "gen_ai.request.model": self.model,
                    "rounds.diagnoser": self.name,
                    "rounds.signature_id": request.signature_id,
                    "rounds.prompt_tokens_estimate": prompt.tokens,
                },
            ) as span,
            tempfile.TemporaryDirectory(prefix="rounds-claude-") as scratch,
        ):
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
            self.binary,
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
            "--max-turns",
            str(self.max_turns),
            "--max-budget-usd",
            f"{self.max_budget_usd:.4f}",
            "--model",
            self.model,
            "--no-session-persistence",
            "--append-system-prompt",
            prompt.system,
        ]
        mcp_tools = [tool for tool in self._tools() if tool.startswith("mcp__")]
        if mcp_tools:
            # MCP tools need permission in print mode; these are the only ones pre-approved.
            argv += ["--allowedTools", ",".join(mcp_tools)]
        if len(prompt.user.encode()) <= MAX_PROMPT_ARGUMENT_BYTES:
            return [*argv, "--", prompt.user], None
        return argv, prompt.user

    def environment(self, home: Path) -> dict[str, str]:
        """The CLI's whole environment: an allow-list, never a copy with secrets deleted."""
        env = {
            **self._inherited,
            **self._credentials,
            "HOME": str(home),
            "TMPDIR": str(home / "tmp"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        env.setdefault("PATH", "/usr/bin:/bin")
        if self.max_retries is not None:
            env["CLAUDE_CODE_MAX_RETRIES"] = str(self.max_retries)
        return env

    def _run(self, request: DiagnosisRequest, prompt: Prompt, scratch: Path) -> DiagnosisOutcome:
        home = scratch / "home"
        (home / "tmp").mkdir(parents=True)
        mcp_config_path = scratch / "mcp.json"
        servers: dict[str, Any] = {}
        if self.incident_tools is not None:
            scope_path = scratch / "incident-scope.json"
            scope = scope_for_request(request, backend=self.incident_tools.backend)
            scope_path.write_text(scope.model_dump_json(), encoding="utf-8")
            servers[MCP_SERVER_NAME] = server_config(self.incident_tools, scope_path)
        # The server's entry may carry the telemetry back-end's key in its `env` (McpLaunch.for_signoz
        # says why there): readable by this user only, outside the checkout, gone with `scratch`.
        mcp_config_path.touch(mode=0o600)
        mcp_config_path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

        argv, stdin_text = self.command_line(prompt, mcp_config_path)
        stream = _StreamWatcher(self.on_progress) if self.stream else None
        try:
            finished = run_with_deadline(
                argv,
                cwd=request.checkout,
                env=self.environment(home),
                timeout_seconds=self.timeout_seconds,
                stdin_text=stdin_text,
                on_stdout_line=stream.feed if stream else None,
            )
        except OSError as error:
            raise DiagnosisError(
                f"the Claude Code CLI could not be started as {self.binary!r}: {error}",
                hint="install it (npm install @anthropic-ai/claude-code) or set its path",
            ) from error
        return self._outcome(request, prompt, finished, stream)

    # ------------------------------------------------------------------ reading the result

    def _outcome(
        self,
        request: DiagnosisRequest,
        prompt: Prompt,
        finished: Finished,
        stream: _StreamWatcher | None,
    ) -> DiagnosisOutcome:
        if finished.timed_out:
            return self._timeout_outcome(prompt, finished, stream)
        result = find_result(finished.stdout_lines)
        if result is None:
            return DiagnosisOutcome(
                status="api_error",
                detail=_no_result_detail(finished),
                model=self.model,
                duration_seconds=finished.seconds,
            )
        return outcome_from_result(
            result, request, duration_seconds=finished.seconds, fallback_model=self.model
        )

    def _timeout_outcome(
        self, prompt: Prompt, finished: Finished, stream: _StreamWatcher | None
    ) -> DiagnosisOutcome:
        detail = f"no answer within {self.timeout_seconds:g} s; the CLI was stopped"
        if stream is not None and stream.turns:
            usage = stream.usage()
            cost = _cost_of(usage, self.price)
            return DiagnosisOutcome(
                status="timeout",
                detail=detail + f" after {stream.turns} model turns",
                cost_usd=min(cost, self.max_budget_usd),
                cost_is_estimate=True,
                turns=stream.turns,
                tokens=usage,
                model=self.model,
                duration_seconds=finished.seconds,
            )
        # Nothing tells what was spent: book the estimate, bounded by what the CLI may spend.
        shape = CallShape(context_tokens=prompt.tokens, expected_turns=self.expected_turns)
        return DiagnosisOutcome(
            status="timeout",
            detail=detail,
            cost_usd=min(estimate_cost(shape, self.price), self.max_budget_usd),
            cost_is_estimate=True,
            model=self.model,
            duration_seconds=finished.seconds,
        )


# ---------------------------------------------------------------------- result parsing

_SUBTYPE_STATUS: dict[str, OutcomeStatus] = {
    "error_max_turns": "turn_limit",
    "error_max_budget_usd": "budget_exhausted",
    "error_max_structured_output_retries": "invalid_answer",
}


def find_result(stdout_lines: list[str]) -> dict[str, Any] | None:
    """The final `{"type":"result",...}` object of json or stream-json output, if any."""
    for line in reversed(stdout_lines):
        candidate = _json_object(line.strip())
        if candidate is not None and candidate.get("type") == "result":
            return candidate
    whole = _json_object("".join(stdout_lines).strip())
    if whole is not None and whole.get("type") == "result":
        return whole
    return None


def outcome_from_result(
    result: dict[str, Any],
    request: DiagnosisRequest,
    *,
    duration_seconds: float | None = None,
    fallback_model: str | None = None,
) -> DiagnosisOutcome:
    """Map the CLI's result object to an outcome; validate the answer either way it came."""
    common: dict[str, Any] = {
        "cost_usd": max(float(result.get("total_cost_usd") or 0.0), 0.0),
        "turns": int(result.get("num_turns") or 0),
        "tokens": _usage(result.get("usage")),
        "model": _model(result) or fallback_model,
        "duration_seconds": duration_seconds,
        "denied_tools": [
            str(denial.get("tool_name"))
            for denial in result.get("permission_denials") or []
            if isinstance(denial, dict)
        ],
    }
    subtype = str(result.get("subtype") or "")
    if subtype in _SUBTYPE_STATUS:
        return DiagnosisOutcome(
            status=_SUBTYPE_STATUS[subtype], detail=_error_detail(result, subtype), **common
        )
    if subtype.startswith("error") or result.get("is_error"):
        return DiagnosisOutcome(status="api_error", detail=_error_detail(result, subtype), **common)

    answer = result.get("structured_output")
    source = "structured_output"
    if not isinstance(answer, dict):
        answer = parse_json_answer(str(result.get("result") or ""))
        source = "result text (no structured_output)"
    if answer is None:
        return DiagnosisOutcome(
            status="invalid_answer",
            detail="the answer held no JSON object: " + _excerpt(str(result.get("result") or "")),
            **common,
        )
    try:
        diagnosis = Diagnosis.model_validate(answer)
    except ValidationError as error:
        return DiagnosisOutcome(
            status="invalid_answer",
            detail=f"the answer from {source} does not match the schema: {_errors(error)}",
            **common,
        )
    return DiagnosisOutcome(
        status="ok",
        diagnosis=diagnosis,
        detail=f"answer read from {source}",
        evidence_checks=check_evidence(diagnosis, request),
        **common,
    )


_FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_json_answer(text: str) -> dict[str, Any] | None:
    """A JSON object from model text: the whole text, a fenced block, or the outermost braces."""
    text = text.strip()
    candidates = [text]
    candidates += [match.group(1) for match in _FENCED_JSON.finditer(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        parsed = _json_object(candidate)
        if parsed is not None:
            return parsed
    return None


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usage(raw: Any) -> TokenUsage:
    if not isinstance(raw, dict):
        return TokenUsage()
    return TokenUsage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_input_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_creation_input_tokens=int(raw.get("cache_creation_input_tokens") or 0),
    )


def _model(result: dict[str, Any]) -> str | None:
    usage = result.get("modelUsage")
    if isinstance(usage, dict) and usage:
        return ",".join(sorted(str(name) for name in usage))
    return None


def _error_detail(result: dict[str, Any], subtype: str) -> str:
    parts = [f"subtype {subtype or 'unknown'}"]
    if result.get("terminal_reason"):
        parts.append(f"terminal reason {result['terminal_reason']}")
    if result.get("api_error_status"):
        parts.append(f"API status {result['api_error_status']}")
    message = result.get("result") or "; ".join(str(e) for e in result.get("errors") or [])
    if message:
        parts.append(_excerpt(str(message)))
    if "Not logged in" in str(message):
        parts.append("no credentials reached the CLI: set ANTHROPIC_API_KEY")
    return ", ".join(parts)


def _no_result_detail(finished: Finished) -> str:
    stdout = "".join(finished.stdout_lines).strip()
    what = "printed no result object" if not stdout else "printed output that is not a result"
    stderr = _excerpt(finished.stderr.strip()) if finished.stderr.strip() else "empty stderr"
    return f"the CLI exited {finished.returncode} and {what}; stderr: {stderr}"


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _errors(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'answer'}: {item['msg']}"
        for item in error.errors()[:5]
    )


def _cost_of(usage: TokenUsage, price: ModelPrice) -> float:
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_input_tokens * price.cache_read
        + usage.cache_creation_input_tokens * price.cache_write
    ) / 1_000_000


class _StreamWatcher:
    """Follows stream-json output: forwards events for progress and keeps the token usage, so a
    run stopped by the timeout can still book what it spent."""

    def __init__(self, on_progress: ProgressCallback | None) -> None:
        self._on_progress = on_progress
        self._usage_by_message: dict[str, dict[str, Any]] = {}

    @property
    def turns(self) -> int:
        return len(self._usage_by_message)

    def feed(self, line: str) -> None:
        event = _json_object(line.strip())
        if event is None:
            return
        if event.get("type") == "assistant":
            message = event.get("message") or {}
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                key = str(message.get("id") or len(self._usage_by_message))
                self._usage_by_message[key] = message["usage"]
        if self._on_progress is not None:
            self._on_progress(event)

    def usage(self) -> TokenUsage:
        totals = [_usage(raw) for raw in self._usage_by_message.values()]
        return TokenUsage(
            input_tokens=sum(u.input_tokens for u in totals),
            output_tokens=sum(u.output_tokens for u in totals),
            cache_read_input_tokens=sum(u.cache_read_input_tokens for u in totals),
            cache_creation_input_tokens=sum(u.cache_creation_input_tokens for u in totals),
        )
