"""The architecture's floors (docs/architecture.md) are the layers contract CI checks (pyproject.toml)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def contract_layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers"]
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


def documented_floors() -> list[list[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1]
    floors = []
    for row in re.findall(r"^\| (`.+?) \| ", section, flags=re.MULTILINE):
        names = re.findall(r"`([a-z_]+)(?:/|\.py)`", row)
        floors.append(names)
    return floors


def test_the_documented_floors_are_the_checked_layers_in_order():
    assert documented_floors() == contract_layers()


def test_every_top_level_module_and_package_has_a_layer():
    placed = {name for layer in contract_layers() for name in layer}
    package = ROOT / "rounds_bot"
    present = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    present |= {p.parent.name for p in package.glob("*/__init__.py")}
    assert present == placed


def test_the_readmes_architecture_draws_the_checked_layers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    drawn = readme.split("## Architecture", 1)[1].split("```", 2)[1].strip().splitlines()
    assert [[name.strip() for name in line.split("|")] for line in drawn] == contract_layers()
