"""Shared fixtures: a fresh signature database, a clean environment for settings, the real CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from diagnosis_samples import require_claude

from rounds_bot.config import Settings
from rounds_bot.store import Store

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture
def fresh_db() -> Iterator[Store]:
    """An empty, migrated, in-memory signature database."""
    store = Store.memory()
    yield store
    store.close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No setting leaks in from the machine running the tests."""
    for field in Settings.model_fields.values():
        for name in field.validation_alias.choices:  # type: ignore[union-attr]
            monkeypatch.delenv(str(name), raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return monkeypatch


@pytest.fixture(scope="module")
def claude_bin() -> str:
    """The real Claude Code CLI (see `diagnosis_samples.find_claude`)."""
    return require_claude()
