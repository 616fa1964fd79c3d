"""A command's modules are imported with the cyclic garbage collector off, and the collector is as it was
afterwards, whether the import worked or not; what the first import of a command made is frozen."""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from rounds_bot.cli.app import Lazy, LazyGroup, collector_held_back, main


@pytest.fixture
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.fixture
def unfrozen_after() -> Iterator[None]:
    """What a test froze is handed back to the collector (as the oldest generation) afterwards."""
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("collector_restored")
@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after_even_a_failure(enabled_before: bool) -> None:
    if enabled_before:
        gc.enable()
    else:
        gc.disable()
    with collector_held_back():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled_before
    with pytest.raises(ImportError), collector_held_back():
        raise ImportError("a command's module failed to import")
    assert gc.isenabled() is enabled_before


@pytest.mark.usefixtures("collector_restored")
def test_resolving_a_command_imports_it_with_the_collector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    real_import = importlib.import_module

    def recording_import(name: str) -> object:
        seen.append(gc.isenabled())
        return real_import(name)

    monkeypatch.setattr("rounds_bot.cli.app.importlib.import_module", recording_import)
    gc.enable()
    command = main.get_command(click.Context(main), "run")
    assert command is not None and command.name == "run"
    assert seen == [False]
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_restored", "unfrozen_after")
def test_what_a_successful_import_made_is_frozen_and_nothing_after_a_failure() -> None:
    gc.unfreeze()
    with pytest.raises(ImportError), collector_held_back(freeze=True):
        raise ImportError("a command's module failed to import")
    assert gc.get_freeze_count() == 0
    with collector_held_back():
        kept = [[n] for n in range(100)]
    assert gc.get_freeze_count() == 0 and len(kept) == 100
    with collector_held_back(freeze=True):
        made = [[n] for n in range(100)]
    assert gc.get_freeze_count() >= len(made)
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_restored", "unfrozen_after")
def test_a_command_is_frozen_when_first_imported_and_not_when_resolved_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rounds_probe_command.py").write_text(
        "import click\n\n@click.command('probe')\ndef probe() -> None:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rounds_probe_command", raising=False)
    monkeypatch.setitem(LazyGroup.lazy_commands, "probe", Lazy("rounds_probe_command:probe", "A probe."))
    gc.unfreeze()
    assert main.get_command(click.Context(main), "probe") is not None
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert main.get_command(click.Context(main), "probe") is not None
    assert gc.get_freeze_count() == frozen
