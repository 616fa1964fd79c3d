"""The parts a run of `rounds fix` (or of one of its stages) is built from: the confined editor, git with its
credentials, GitHub, and the remote's URL, read from the checkout before any code of the repository runs."""

from __future__ import annotations

import os
from datetime import datetime

from rounds_bot.diagnosis.budget import price_for
from rounds_bot.diagnosis.claude_cli import ClaudeCli
from rounds_bot.fixing.editor import FixEditor
from rounds_bot.fixing.freshclone import remote_url
from rounds_bot.fixing.git import Git, remote_auth_env
from rounds_bot.fixing.run import FixRun
from rounds_bot.github.pulls import PullsApi
from rounds_bot.settings import Settings
from rounds_bot.store import Store


def fix_editor(settings: Settings) -> FixEditor:
    """The CLI with the same model, credentials, limits and isolation as a diagnosis."""
    credentials = {}
    if settings.anthropic_api_key is not None:
        credentials["ANTHROPIC_API_KEY"] = settings.anthropic_api_key.get_secret_value()
    if settings.anthropic_base_url:
        credentials["ANTHROPIC_BASE_URL"] = settings.anthropic_base_url
    cli = ClaudeCli(
        binary=settings.claude_bin,
        model=settings.claude_model,
        credentials=credentials,
        inherited_env=os.environ,
        max_turns=settings.claude_max_turns,
        max_budget_usd=settings.claude_max_budget_usd,
        timeout_seconds=settings.diagnosis_timeout_seconds,
        max_retries=settings.claude_max_retries,
    )
    return FixEditor(cli, price_for(settings.claude_model))


def fix_run(settings: Settings, store: Store, now: datetime, pulls: PullsApi) -> FixRun:
    """Everything one run of `rounds fix` works with; the token reaches git and GitHub, never the model."""
    token = settings.github_token.get_secret_value() if settings.github_token else None
    checkout = Git(settings.repo_path, remote_env=remote_auth_env(settings.github_server_url, token))
    return FixRun(
        settings=settings,
        store=store,
        pulls=pulls,
        checkout=checkout,
        editor=fix_editor(settings),
        now=now,
        inherited_env=os.environ,
        remote_url=remote_url(checkout, settings.fix_remote),
    )
