"""Whether fix pull requests can be proposed with these settings (light: `rounds command` asks it too).

The key and the CLI belong to the job that writes fixes; the job that answers `/rounds fix` may hold neither
(the action gives the model key to the round's step only, and the fix job is another job). So a request is
refused at once only for what every job shares, the test command; the fix job reports the rest.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rounds_bot.settings import Settings


def requests_off(settings: Settings) -> str | None:
    """Why a `/rounds fix` cannot be accepted with these settings, or None when it can."""
    if not settings.fix_test_command:
        return "ROUNDS_FIX_TEST_COMMAND (the repository's own test command) is not set"
    return None


def fixes_off(settings: Settings) -> str | None:
    """Why fix pull requests cannot be proposed with these settings, or None when they can."""
    off = requests_off(settings)
    if off is not None:
        return off
    if settings.anthropic_api_key is None:
        return "ANTHROPIC_API_KEY is not set (the Claude Code CLI writes the fix)"
    if shutil.which(settings.claude_bin) is None:
        return f"the Claude Code CLI `{settings.claude_bin}` was not found (set ROUNDS_CLAUDE_BIN)"
    return None
