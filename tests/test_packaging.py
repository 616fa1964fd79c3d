"""What the wheel holds: the package with its data and templates, and no test double or maintainer tool.

The wheel is built offline from a copy of the source tree (so no `build/` left over from an earlier build can
leak into it, and the working tree is not written to), with the installed setuptools.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# setuptools builds wheels without the `wheel` package from 70.1 on
MIN_SETUPTOOLS = (70, 1)
_NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".ci",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "node_modules",
    "rounds.db*",
    "rounds-out",
)
_DIST_INFO = re.compile(r"^rounds_bot-[^/]+\.dist-info/")


def _setuptools_version() -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", metadata.version("setuptools"))[:2])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    if _setuptools_version() < MIN_SETUPTOOLS:
        pytest.fail(
            f"setuptools {metadata.version('setuptools')} cannot build the wheel offline; "
            "install the test extra (pip install -e '.[test]'), which pins a newer one",
            pytrace=False,
        )
    source = tmp_path_factory.mktemp("source") / "rounds"
    shutil.copytree(PROJECT_ROOT, source, ignore=_NOT_SOURCES)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation"]
    built = subprocess.run(
        [*command, "--no-index", "--quiet", "--wheel-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("rounds_bot-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def _source_files(folder: str, pattern: str) -> set[str]:
    return {
        path.relative_to(PROJECT_ROOT).as_posix()
        for path in (PROJECT_ROOT / folder).rglob(pattern)
        if "__pycache__" not in path.parts
    }


def test_the_wheel_holds_only_the_package_and_its_metadata(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    strays = [n for n in names if not n.startswith("rounds_bot/") and not _DIST_INFO.match(n)]
    assert strays == []
    assert not [n for n in names if n.startswith(("tests/", "tools/", "bench/"))]


def test_the_wheel_holds_no_emulator_and_no_demo_generator(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert not [n for n in names if "emulator" in n]
    demo = sorted(n for n in names if n.startswith("rounds_bot/demo/"))
    assert demo == ["rounds_bot/demo/__init__.py"]  # the bug list and the data path, not the generator
    generator = ("generate.py", "fleet.py", "plan.py", "stacktraces.py", "scenarios/")
    assert not [n for n in names if any(part in n for part in generator)]


def test_the_wheel_holds_every_module_the_demo_data_and_the_templates(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "rounds_bot/data/demo.otlp.jsonl" in names
    for package in ("cli", "round", "github", "commands", "render", "store", "sources/signoz"):
        assert f"rounds_bot/{package}/__init__.py" in names
    templates = _source_files("rounds_bot/templates", "*.*")
    assert {"rounds_bot/templates/issue.md.j2", "rounds_bot/templates/prompts/system.md.j2"} <= templates
    assert templates <= names
    assert _source_files("rounds_bot", "*.py") <= names
    assert wheel.getinfo("rounds_bot/data/demo.otlp.jsonl").file_size == (
        (PROJECT_ROOT / "rounds_bot" / "data" / "demo.otlp.jsonl").stat().st_size
    )


def test_the_wheel_installs_the_rounds_command(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if _DIST_INFO.match(n) and n.endswith("entry_points.txt")]
    assert "rounds = rounds_bot.cli.console:console" in wheel.read(entry_points).decode()


def test_the_demo_generator_rewrites_the_bundled_demo_data_by_default() -> None:
    from rounds_bot.demo import demo_data_path
    from tools.demo.generate import _default_output, _default_truth

    assert _default_output() == demo_data_path() == PROJECT_ROOT / "rounds_bot" / "data" / "demo.otlp.jsonl"
    assert _default_truth() == PROJECT_ROOT / "tests" / "fixtures" / "demo_truth.json"
