"""Shared fixtures: a fresh signature database, clean settings, the real CLI, the shared data sets, and what a
run of the workflows meets (the fake GitHub with the Actions routes, the SigNoz emulator, rounds' sources
committed as the caller's workflow pins them)."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from diagnosis_samples import require_claude
from fake_github.actions_routes import ActionsFakeGitHub, running_actions_fake
from signoz_emulator import SignozEmulator
from workflow_harness import Sources, commit_sources, recent_signoz

from rounds_bot.settings import Settings
from rounds_bot.settings.names import NOT_SETTINGS, NOT_SETTINGS_PREFIXES
from rounds_bot.store import Store

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
# the data sets in it that tests read
SHARED_DATA_SETS = ("loghub_2k", "defects4j_traces")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data` beside the checkout (the labelled data sets); a skip when it is not there.

    CI (`CI=true`) has it beside the checkout, so there a missing folder fails the test instead of skipping
    it: a silent skip would hide that the acceptance figures were never checked. The one CI without it is the
    project's own GitHub workflow (`.github/workflows/ci.yml`: the labelled sets are not published with the
    code), which says so with ROUNDS_SHARED_DATA=absent: there the tests skip, saying why.
    """
    missing = [name for name in SHARED_DATA_SETS if not (SHARED_DATA / name).is_dir()]
    if not missing:
        return SHARED_DATA
    why = f"labelled data not present: {', '.join(missing)} missing from {SHARED_DATA} (../shared/data)"
    declared_absent = os.environ.get("ROUNDS_SHARED_DATA") == "absent"
    if os.environ.get("CI", "").lower() == "true" and not declared_absent:
        pytest.fail(f"{why}; in CI (CI=true) the shared data must be beside the checkout", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session", autouse=True)
def own_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The tests' compiled redaction databases (`redact/scan_cache.py`) in a folder of the session's, not in
    the user cache of the machine running them: tests build hundreds of rule sets nobody runs again. Rounds
    run in subprocesses inherit it."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Only reference counting frees anything while a test runs (as in a round between rare collections)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


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
    for name in list(os.environ):  # nor a name that looks like one (an unknown setting is an error)
        if name.startswith(("ROUNDS_", "SIGNOZ_")) and name not in NOT_SETTINGS:
            if name.startswith(NOT_SETTINGS_PREFIXES):
                continue
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return monkeypatch


@pytest.fixture(scope="module")
def claude_bin() -> str:
    """The real Claude Code CLI (see `diagnosis_samples.find_claude`)."""
    return require_claude()


@pytest.fixture
def fake() -> Iterator[ActionsFakeGitHub]:
    """The fake GitHub with the Actions routes (a module that needs another fake declares its own `fake`)."""
    yield from running_actions_fake()


@pytest.fixture
def signoz(tmp_path: Path) -> Iterator[SignozEmulator]:
    """The SigNoz emulator with spans that end a minute ago (see `workflow_harness.recent_signoz`)."""
    yield from recent_signoz(tmp_path)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    """rounds' sources as they are in this checkout, committed to a repository of their own, once a module."""
    return commit_sources(tmp_path_factory.mktemp("octo-rounds"))
