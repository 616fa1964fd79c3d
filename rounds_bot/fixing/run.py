"""What a run of the fix stages works with, and what each request came to.

    FixRun        the settings, the database, GitHub, the checkout (git with its credentials), the editor,
                  the clock, and the remote's URL as the checkout named it before any repository code ran
    FixOutcome    one request's end: a draft pull request proposed or updated, a branch offered, a failure
                  reported on the issue, a request left waiting (blocked, or for the next run), or skipped
                  (another run answered it first)

`setup.fix_run` builds a `FixRun`; the edit and publishing stages (`editing.py`, `publishing.py`) and the
all-in-one `proposals.propose_fixes` take one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from rounds_bot.fixing.attempt import Rules
from rounds_bot.fixing.editor import FixEditor
from rounds_bot.fixing.git import Git
from rounds_bot.github.pulls import PullsApi
from rounds_bot.models import Frozen
from rounds_bot.settings import Settings
from rounds_bot.store import Store

Status = Literal["proposed", "updated", "offered", "failed", "blocked", "waiting", "skipped"]


@dataclass
class FixRun:
    """What carrying out fix requests works with, for one run of `rounds fix` (or of one of its stages)."""

    settings: Settings
    store: Store
    pulls: PullsApi
    checkout: Git
    editor: FixEditor
    now: datetime
    inherited_env: Mapping[str, str]
    notes: list[str] = field(default_factory=list)
    spent_usd: float = 0.0
    remote_url: str = ""  # the remote's URL, read before any repository code ran (`freshclone.py`)

    def rules(self) -> Rules:
        return rules_from(self.settings, self.inherited_env)


def rules_from(settings: Settings, inherited_env: Mapping[str, str]) -> Rules:
    """How a change is judged, from the settings: the test command and the limits on the change."""
    s = settings
    assert s.fix_test_command is not None  # fixes are off without it (`enabled.fixes_off`)
    return Rules(
        test_command=s.fix_test_command,
        test_timeout_seconds=s.fix_test_timeout_seconds,
        protected=list(s.fix_protected_paths),
        max_diff_lines=s.fix_max_diff_lines,
        author=s.fix_author(),
        inherited_env=inherited_env,
        max_diff_bytes=s.fix_max_diff_bytes,
    )


class FixOutcome(Frozen):
    signature_id: str
    issue_number: int
    status: Status
    pr_number: int | None = None
    url: str = ""
    branch: str = ""
    reason: str = ""
