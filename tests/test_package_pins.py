"""The Claude Code CLI's lockfile ships in the package, and `rounds pins claude-code` finds it wherever rounds
is installed: the wheel and the sdist hold the repository's files byte for byte, and the `rounds` of an
installed wheel (unpacked, as pip installs it, and run by the tests' Python with only it on PYTHONPATH) prints
a folder of that installation holding them. An installation without them exits 2 and says so, printing no
folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from test_packaging import _NOT_SOURCES, PROJECT_ROOT, wheel  # noqa: F401 (the module's wheel, built once)

PINS = PROJECT_ROOT / "rounds_bot" / "pins" / "claude-code"
FILES = ("package.json", "package-lock.json")
# rounds' own code from the unpacked wheel; its dependencies from the tests' environment
RUN_ROUNDS = "import sys; sys.argv[0] = 'rounds'; from rounds_bot.cli.app import main; main()"


def test_the_wheel_holds_the_repositorys_lockfile(wheel: zipfile.ZipFile) -> None:  # noqa: F811
    for name in FILES:
        assert wheel.read(f"rounds_bot/pins/claude-code/{name}") == (PINS / name).read_bytes(), name


def test_the_sdist_holds_the_repositorys_lockfile(tmp_path: Path) -> None:
    source = tmp_path / "rounds"
    shutil.copytree(PROJECT_ROOT, source, ignore=_NOT_SOURCES)
    out = tmp_path / "sdist"
    built = subprocess.run(
        [sys.executable, "-c", f"import setuptools.build_meta as b; print(b.build_sdist({str(out)!r}))"],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("rounds_bot-*.tar.gz")
    with tarfile.open(path) as archive:
        members = {
            Path(m.name).relative_to(Path(m.name).parts[0]).as_posix(): m for m in archive.getmembers()
        }
        for name in FILES:
            member = archive.extractfile(members[f"rounds_bot/pins/claude-code/{name}"])
            assert member is not None and member.read() == (PINS / name).read_bytes(), name


@pytest.fixture
def installed(wheel: zipfile.ZipFile, tmp_path: Path) -> Path:  # noqa: F811
    """The wheel's files as pip lays them out in site-packages."""
    site = tmp_path / "site-packages"
    wheel.extractall(site)
    return site


def rounds(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the tests' environment without any other rounds_bot (this checkout's, an editable install's finder path)
    others = [entry for entry in sys.path if entry and not (Path(entry) / "rounds_bot").exists()]
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join([str(site), *others])}
    return subprocess.run(
        [sys.executable, "-c", RUN_ROUNDS, *args],
        cwd=site.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_installed_rounds_names_its_own_lockfile(installed: Path) -> None:
    done = rounds(installed, "pins", "claude-code")
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder == installed / "rounds_bot" / "pins" / "claude-code"
    for name in FILES:
        assert (folder / name).read_bytes() == (PINS / name).read_bytes(), name


def test_an_installation_without_the_lockfile_says_so_and_names_no_folder(installed: Path) -> None:
    (installed / "rounds_bot" / "pins" / "claude-code" / "package-lock.json").unlink()
    done = rounds(installed, "pins", "claude-code")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "error: this installation of rounds has no package-lock.json" in done.stderr


def test_only_the_lockfiles_rounds_ships_are_named(installed: Path) -> None:
    done = rounds(installed, "pins", "left-pad")
    assert done.returncode == 2 and done.stdout == ""
