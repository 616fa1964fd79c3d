"""The diagnosis settings, a part of the one settings object (`Settings` in
`settings/model.py` inherits them).

Each field is an environment variable documented in docs/settings.md like every other setting.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings

from rounds_bot.settings.fields import env


class DiagnosisSettings(BaseSettings):
    """Who diagnoses, with which model, within which limits and budgets."""

    claude_model: str = Field(
        default="sonnet",
        validation_alias=env("CLAUDE_MODEL"),
        description="Model given to the Claude Code CLI (`--model`).",
    )
    claude_max_budget_usd: float = Field(
        default=0.50,
        gt=0,
        le=100,
        validation_alias=env("CLAUDE_MAX_BUDGET_USD"),
        description="Cap in USD for one diagnosis (`--max-budget-usd`).",
    )

    eval_max_cost_usd: float = Field(
        default=5.0,
        ge=0,
        le=1000,
        validation_alias=env("ROUNDS_EVAL_MAX_COST_USD"),
        description="Cap in USD on the model spend of one `rounds eval --live` run, all cases together.",
    )

    diagnoser: Literal["auto", "off", "claude-code", "openai"] = Field(
        default="auto",
        validation_alias=env("ROUNDS_DIAGNOSER"),
        description="Who diagnoses: `claude-code` (the `claude` CLI, read-only), `openai` (any "
        "OpenAI-compatible chat-completions endpoint, context only), `off`, or `auto` (claude-code when "
        "ANTHROPIC_API_KEY is set, else off; the report says which).",
    )
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=env("ANTHROPIC_API_KEY"),
        description="Key for the Claude Code CLI; the only secret the model's process receives.",
    )
    anthropic_base_url: str | None = Field(
        default=None,
        validation_alias=env("ANTHROPIC_BASE_URL"),
        description="Messages API base URL for the CLI (a gateway); default: Anthropic's.",
    )
    claude_bin: str = Field(
        default="claude",
        validation_alias=env("ROUNDS_CLAUDE_BIN"),
        description=(
            "The Claude Code CLI executable (name on PATH or a path); install the pinned one with npm ci "
            "from `rounds pins claude-code` (docs/diagnosis.md)."
        ),
    )
    claude_max_turns: int = Field(
        default=12,
        ge=1,
        le=100,
        validation_alias=env("ROUNDS_CLAUDE_MAX_TURNS"),
        description="`--max-turns` for one diagnosis.",
    )
    claude_max_retries: int | None = Field(
        default=None,
        ge=0,
        le=20,
        validation_alias=env("ROUNDS_CLAUDE_MAX_RETRIES"),
        description="How often the CLI retries a failed API request (`CLAUDE_CODE_MAX_RETRIES`). "
        "Default: the CLI's own (10, with backoff).",
    )
    diagnosis_timeout_seconds: int = Field(
        default=600,
        ge=10,
        le=3_600,
        validation_alias=env("ROUNDS_DIAGNOSIS_TIMEOUT_SECONDS"),
        description="Wall-clock limit for one diagnosis; the process is killed after it.",
    )
    round_budget_usd: float = Field(
        default=5.0,
        ge=0,
        validation_alias=env("ROUNDS_ROUND_BUDGET_USD"),
        description="Cap in USD on model spend in one round.",
    )
    monthly_budget_usd: float = Field(
        default=50.0,
        ge=0,
        validation_alias=env("ROUNDS_MONTHLY_BUDGET_USD"),
        description="Cap in USD on model spend in a calendar month (UTC), from the ledger.",
    )
    diagnose_threshold: int = Field(
        default=10,
        ge=1,
        validation_alias=env("ROUNDS_DIAGNOSE_THRESHOLD"),
        description="A new signature is diagnosed once it has this many occurrences within "
        "ROUNDS_DIAGNOSE_WINDOW_MINUTES (any fatal occurrence is enough).",
    )
    diagnose_window_minutes: int = Field(
        default=5,
        ge=1,
        le=1_440,
        validation_alias=env("ROUNDS_DIAGNOSE_WINDOW_MINUTES"),
        description="The window of ROUNDS_DIAGNOSE_THRESHOLD.",
    )
    openai_base_url: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_OPENAI_BASE_URL"),
        description="Base URL of an OpenAI-compatible API (e.g. `http://localhost:11434/v1`), for "
        "ROUNDS_DIAGNOSER=openai.",
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=env("ROUNDS_OPENAI_API_KEY"),
        description="Bearer key for that endpoint, if it needs one.",
    )
    openai_model: str | None = Field(
        default=None,
        validation_alias=env("ROUNDS_OPENAI_MODEL"),
        description="Model name for that endpoint.",
    )

    @model_validator(mode="after")
    def _openai_needs_an_endpoint(self) -> DiagnosisSettings:
        if self.diagnoser == "openai" and not (self.openai_base_url and self.openai_model):
            raise ValueError("ROUNDS_DIAGNOSER=openai needs ROUNDS_OPENAI_BASE_URL and ROUNDS_OPENAI_MODEL")
        return self
