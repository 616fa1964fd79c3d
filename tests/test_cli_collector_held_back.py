"""A command's modules are imported with the cyclic garbage collector off, and the collector is as it was
afterwards, whether the import worked or not."""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterator

import click
import pytest

from rounds_bot.cli.app import collector_held_back, main


@pytest.fixture
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


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
