"""Whether fix pull requests can be proposed with these settings (light: `rounds command` asks it too)."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rounds_bot.config import Settings


def fixes_off(settings: Settings) -> str | None:
    """Why fix pull requests cannot be proposed with these settings, or None when they can."""
    if not settings.fix_test_command:
        return "ROUNDS_FIX_TEST_COMMAND (the repository's own test command) is not set"
    if settings.anthropic_api_key is None:
        return "ANTHROPIC_API_KEY is not set (the Claude Code CLI writes the fix)"
    if shutil.which(settings.claude_bin) is None:
        return f"the Claude Code CLI `{settings.claude_bin}` was not found (set ROUNDS_CLAUDE_BIN)"
    return None
