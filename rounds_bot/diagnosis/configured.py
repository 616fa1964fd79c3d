"""The diagnoser the settings ask for, and the code revision diagnoses are cached against."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess

from rounds_bot.diagnosis.base import Diagnoser
from rounds_bot.settings import Settings

#: What turns the incident look-ups on when it is missing (they need the `mcp` package).
LOOKUPS_MISSING = (
    "the incident look-ups are not installed: install rounds with the `diagnosis` extra "
    "(pip install 'rounds-bot[diagnosis]')"
)


def incident_lookups_installed() -> bool:
    """The incident look-ups' MCP server can start (its package is installed beside rounds)."""
    return importlib.util.find_spec("mcp") is not None


def diagnosis_off(settings: Settings) -> str | None:
    """Why no round diagnoses with these settings, and how to turn diagnosis on; None when they ask for it.

    Light (`rounds command` asks it): only the settings, not whether the CLI is installed."""
    if settings.diagnoser == "off":
        return (
            "ROUNDS_DIAGNOSER=off; to turn it on, set ROUNDS_DIAGNOSER=auto (the default) and add the "
            "ANTHROPIC_API_KEY secret, or use an OpenAI-compatible endpoint (ROUNDS_DIAGNOSER=openai)"
        )
    if settings.diagnoser == "auto" and settings.anthropic_api_key is None:
        return (
            "ROUNDS_DIAGNOSER=auto and ANTHROPIC_API_KEY is not set; to turn it on, add the "
            "ANTHROPIC_API_KEY secret (or set ROUNDS_DIAGNOSER=openai with an OpenAI-compatible endpoint)"
        )
    return None


def build_diagnoser(settings: Settings) -> tuple[Diagnoser | None, str]:
    """The configured diagnoser, or None with the reason diagnosis is off."""
    choice = settings.diagnoser
    if choice == "auto":
        if settings.anthropic_api_key is None:
            return None, "diagnosis off: ROUNDS_DIAGNOSER=auto and ANTHROPIC_API_KEY is not set"
        choice = "claude-code"
    if choice == "off":
        return None, "diagnosis off (ROUNDS_DIAGNOSER=off)"
    if choice == "openai":
        from rounds_bot.diagnosis.openai_compat import OpenAICompatDiagnoser

        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        assert settings.openai_base_url and settings.openai_model  # checked by Settings
        return OpenAICompatDiagnoser(
            base_url=settings.openai_base_url,
            model=settings.openai_model,
            api_key=key,
            timeout_seconds=settings.diagnosis_timeout_seconds,
        ), "diagnosis by an OpenAI-compatible endpoint"
    from rounds_bot.diagnosis.claude_cli import CLAUDE_INSTALL_HINT, ClaudeCli
    from rounds_bot.diagnosis.claude_code import ClaudeCodeDiagnoser
    from rounds_bot.diagnosis.mcp_server import McpLaunch

    binary = settings.claude_bin
    if shutil.which(binary) is None:
        return None, (f"diagnosis off: the Claude Code CLI `{binary}` was not found ({CLAUDE_INSTALL_HINT})")
    credentials = {}
    if settings.anthropic_api_key is not None:
        credentials["ANTHROPIC_API_KEY"] = settings.anthropic_api_key.get_secret_value()
    if settings.anthropic_base_url:
        credentials["ANTHROPIC_BASE_URL"] = settings.anthropic_base_url
    # The incident look-ups: SigNoz when it is configured, else the incident's own samples. Without their
    # package the server could not start and the model would silently lose them: the report says so instead.
    incident_tools = None
    if incident_lookups_installed():
        incident_tools = (
            McpLaunch.for_signoz(settings.signoz_api_url, settings.signoz_api_key)
            if settings.signoz_api_url
            else McpLaunch()
        )
    cli = ClaudeCli(
        binary=binary,
        model=settings.claude_model,
        credentials=credentials,
        inherited_env=os.environ,
        max_turns=settings.claude_max_turns,
        max_retries=settings.claude_max_retries,
        max_budget_usd=settings.claude_max_budget_usd,
        timeout_seconds=settings.diagnosis_timeout_seconds,
    )
    mode = f"diagnosis by the Claude Code CLI ({settings.claude_model})"
    if incident_tools is None:
        mode += f", without incident look-ups: {LOOKUPS_MISSING}"
    return ClaudeCodeDiagnoser(cli, incident_tools=incident_tools), mode


def code_revision(settings: Settings) -> str:
    """The checkout's revision: diagnoses are cached per revision."""
    if settings.code_revision:
        return settings.code_revision
    try:
        found = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=settings.repo_path,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return found.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return os.environ.get("GITHUB_SHA", "unknown")
