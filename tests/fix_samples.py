"""A small real application for the fix tests: a git repository with a known bug and its own test suite,
a bare repository as the push remote, a checkout of it for rounds, an issue filed for the bug on the fake
GitHub, and scripts for the fake Messages API that make the real CLI edit the code."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from fake_github.rounds import START, quick_options, round_against, settings_for
from fake_github.server import FakeGitHub
from fake_messages_api import FakeMessagesApi, Text, ToolUse, Turn, turn

from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome, Evidence, EvidenceCheck
from rounds_bot.fixing import setup
from rounds_bot.fixing.proposals import FixRun
from rounds_bot.fixing.requests import Trigger, record_request
from rounds_bot.github.pulls import pulls_api_from_settings
from rounds_bot.models import ErrorEvent
from rounds_bot.settings import Settings
from rounds_bot.store import DiagnosisRecord, Store

BUGGY = '''"""Prices."""


def average_price(prices):
    """The mean of a list of prices; 0 for an empty list."""
    return sum(prices) / len(prices)
'''
BUGGY_LINE = "    return sum(prices) / len(prices)"
FIXED_LINE = "    return sum(prices) / len(prices) if prices else 0"
APP_TESTS = """import unittest

from app.pricing import average_price


class AveragePrice(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(average_price([1, 2, 3]), 2)
"""
NEW_TEST = """
    def test_empty(self):
        self.assertEqual(average_price([]), 0)
"""
TEST_COMMAND = f"{sys.executable} -m unittest discover -s tests -t ."
# The same interpreter without its site-packages (`-S`): pytest is not installed for it, as in a fix job
# that installed rounds but not the repository's own dependencies.
NO_PYTEST_COMMAND = f"{sys.executable} -S -m pytest -x -q"
# A test on main that fails without any change: the base is broken before rounds touches it.
BROKEN_TEST_PATH = "tests/test_totals.py"
BROKEN_TEST = """import unittest

from app.pricing import average_price


class Totals(unittest.TestCase):
    def test_pair(self):
        self.assertEqual(average_price([2, 4]), 4)
"""
TRACE = """Traceback (most recent call last):
  File "app/pricing.py", line 6, in average_price
    return sum(prices) / len(prices)
ZeroDivisionError: division by zero"""


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
    env.update({"GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com"})
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@dataclass(frozen=True)
class App:
    remote: Path  # the bare repository fixes are pushed to
    checkout: Path  # what rounds works in (ROUNDS_REPO_PATH), a clone of the remote

    def branches(self) -> dict[str, str]:
        listed = git(self.remote, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
        return dict(line.split() for line in listed.splitlines())

    def file_at(self, ref: str, path: str) -> str:
        return git(self.remote, "show", f"{ref}:{path}")

    def commit_to_main(self, path: str, content: str | None, message: str) -> str:
        """A person's commit on the remote's main (`content=None` deletes the file); its sha."""
        scratch = Path(tempfile.mkdtemp(prefix="person-", dir=self.remote.parent)) / "clone"
        git(self.remote.parent, "clone", "--quiet", str(self.remote), str(scratch))
        target = scratch / path
        if content is None:
            git(scratch, "rm", "--quiet", path)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            git(scratch, "add", path)
        git(scratch, "commit", "--quiet", "-m", message)
        git(scratch, "push", "--quiet", "origin", "main")
        return git(scratch, "rev-parse", "HEAD")

    def reject_pushes(self) -> None:
        hook = self.remote / "hooks" / "pre-receive"
        hook.write_text("#!/bin/sh\necho 'protected: pushes to this remote are refused' >&2\nexit 1\n")
        hook.chmod(0o755)


def make_app(root: Path) -> App:
    """The application's repository on a bare remote, and a clone of it to work in."""
    dev, remote, checkout = root / "dev", root / "remote.git", root / "checkout"
    (dev / "app").mkdir(parents=True)
    (dev / "tests").mkdir()
    (dev / ".github" / "workflows").mkdir(parents=True)
    (dev / "app" / "__init__.py").write_text("")
    (dev / "app" / "pricing.py").write_text(BUGGY)
    (dev / "tests" / "__init__.py").write_text("")
    (dev / "tests" / "test_pricing.py").write_text(APP_TESTS)
    (dev / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    (dev / ".gitignore").write_text("__pycache__/\n")
    git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    git(root, "init", "--quiet", "--initial-branch=main", str(dev))
    git(dev, "add", ".")
    git(dev, "commit", "--quiet", "-m", "An app with prices")
    git(dev, "push", "--quiet", str(remote), "main")
    git(root, "clone", "--quiet", str(remote), str(checkout))
    return App(remote=remote, checkout=checkout)


def pricing_events(count: int = 12, *, version: str = "1.0.0", at: datetime = START) -> list[ErrorEvent]:
    return [
        ErrorEvent(
            event_id=f"evt-pricing-{version}-{at:%H%M}-{n}",
            timestamp=at + timedelta(seconds=20 * n),
            service="shop",
            error_type="ZeroDivisionError",
            message="division by zero",
            stacktrace=TRACE,
            service_version=version,
        )
        for n in range(count)
    ]


def fix_settings(
    tmp_path: Path, fake: FakeGitHub, app: App, claude_bin: str, api: FakeMessagesApi, **more: Any
) -> Settings:
    values = {
        "ROUNDS_REPO_PATH": str(app.checkout),
        "ROUNDS_FIX_TEST_COMMAND": TEST_COMMAND,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": api.url,
        "ROUNDS_CLAUDE_BIN": claude_bin,
        "ROUNDS_CLAUDE_MAX_RETRIES": "0",
        "ROUNDS_DIAGNOSER": "off",
        # the in-process runs hold the fake GitHub's token and a key: all stages in one process, opted in
        # (the stages apart, no token in the test stage: test_fix_stages.py and test_fix_adoption.py)
        "ROUNDS_FIX_LOCAL_TESTS_WITH_TOKENS": "true",
        **more,
    }
    return settings_for(tmp_path, fake, **values)


def file_pricing_issue(fake: FakeGitHub, tmp_path: Path) -> tuple[str, int]:
    """A round that files the pricing bug's issue; its signature and issue number."""
    round_against(fake, tmp_path, pricing_events(), 10, settings={"ROUNDS_DIAGNOSER": "off"})
    store = Store.open(tmp_path / "rounds.db")
    try:
        [signature] = store.signatures()
    finally:
        store.close()
    assert signature.issue_ref is not None
    return signature.id, int(signature.issue_ref.lstrip("#"))


def diagnose(store: Store, signature_id: str) -> None:
    """The diagnosis an earlier round made (the fix prompt and the pull request show it)."""
    diagnosis = Diagnosis(
        classification="server_bug",
        root_cause="average_price divides by the number of prices, which is 0 for an empty list.",
        suggested_fix="Return 0 when there are no prices.",
        confidence="high",
        evidence=[Evidence(kind="file", path="app/pricing.py", line=6, explanation="the division")],
    )
    verified = [EvidenceCheck(index=0, verified=True, reason="app/pricing.py:6 exists")]
    with store.transaction():
        store.record_diagnosis(
            DiagnosisRecord(
                cache_key=f"{signature_id}:r1",
                signature_id=signature_id,
                revision="r1",
                at=START.isoformat(),
                status="ok",
                outcome=DiagnosisOutcome(status="ok", diagnosis=diagnosis, evidence_checks=verified),
            )
        )


def ask_for_fix(
    store: Store,
    signature_id: str,
    issue: int,
    origin: str = "1",
    at: datetime = START,
    *,
    trigger: Trigger = "command",
) -> None:
    """`/rounds fix` from alice, or (`trigger="auto"`) rounds' own choice."""
    with store.transaction():
        record_request(
            store,
            origin=origin,
            signature_id=signature_id,
            issue_number=issue,
            by="rounds" if trigger == "auto" else "alice",
            trigger=trigger,
            at=at,
        )


def fix_run(settings: Settings, store: Store, now: datetime) -> FixRun:
    """`setup.fix_run`, without waiting between GitHub writes."""
    return setup.fix_run(settings, store, now, pulls_api_from_settings(settings, quick_options()))


def read_then_edit(path: str, old: str, new: str) -> list[Turn]:
    return [
        turn(ToolUse("Read", {"file_path": path})),
        turn(ToolUse("Edit", {"file_path": path, "old_string": old, "new_string": new})),
    ]


def good_fix() -> list[Turn]:
    """The model reads the code, fixes it, adds a test, and says what it did."""
    return [
        *read_then_edit("app/pricing.py", BUGGY_LINE, FIXED_LINE),
        *read_then_edit("tests/test_pricing.py", "        self.assertEqual(average_price([1, 2, 3]), 2)\n",
                        "        self.assertEqual(average_price([1, 2, 3]), 2)\n" + NEW_TEST),
        turn(Text("average_price now returns 0 for an empty list; a test covers it.")),
    ]  # fmt: skip


def worktrees(app: App) -> list[str]:
    return [
        line
        for line in git(app.checkout, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]
