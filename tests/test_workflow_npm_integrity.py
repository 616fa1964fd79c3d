"""`npm ci` from a lockfile installs only the bytes the lockfile's integrity hashes name, whatever npm's cache
holds: the fact the Claude Code CLI's install rests on (rounds_bot/pins/claude-code/package-lock.json, which
the installed rounds names with `rounds pins claude-code`, with the reusable workflow's `rounds-package` input
too).

With the real npm, offline (a package registry on 127.0.0.1 serves the first install only): a package with an
install script, pinned by a lockfile that, like rounds' own, gives every package's `integrity` and no
`resolved` URL. npm's cache is filled by one install, then

- its cached tarball is changed in place: npm finds it corrupted, and offline it has nothing else to install;
- or the cache is replaced by a self-consistent one (index and content agree) that holds another tarball of
  the same name and version, as code that can write a cache entry could plant: EINTEGRITY.

Either way the install fails and the planted install script never runs; the untouched cache installs.
npm documents it ("npm cache": all data that passes through the cache is verified for integrity on insertion
and extraction), and pacote checks every tarball it extracts against the integrity arborist takes from the
lockfile.

The reusable workflow's install step itself, as written, with a `rounds-package` rounds (a stand-in `rounds`
naming the folder of its shipped lockfile): a registry that serves the pinned tarball installs it; one whose
entry was replaced (another tarball, with its own hash in the packument, as a compromised registry or account
would serve) is refused, where `npm install NAME@VERSION` without a lockfile, what the step ran for
`rounds-package` before, installs it and runs its script. A rounds-bot without the lockfile (no `rounds pins`)
stops the step before npm asks the registry anything.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from workflow_files import load

NPM = shutil.which("npm")
pytestmark = pytest.mark.skipif(NPM is None, reason="needs npm, as bash .ci/run does")
NAME, VERSION = "pinned-tool", "1.0.0"
WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "rounds.yml"


def tarball(marker_suffix: str) -> bytes:
    """An npm package whose install script leaves `$MARK<suffix>` behind."""
    files = {
        "package.json": json.dumps(
            {"name": NAME, "version": VERSION, "scripts": {"postinstall": "node run.js"}}
        ),
        "run.js": f"require('fs').writeFileSync(process.env.MARK + '{marker_suffix}', 'ran')\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{path}")
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


PINNED = tarball(".pinned")
PLANTED = tarball(".planted")


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


class Registry(http.server.ThreadingHTTPServer):
    """A registry on 127.0.0.1 with one package, serving `self.served` as its tarball."""

    served = PINNED
    requests = 0

    def packument(self) -> bytes:
        url = f"http://127.0.0.1:{self.server_address[1]}/{NAME}/-/{NAME}-{VERSION}.tgz"
        dist = {"tarball": url, "integrity": integrity(self.served)}
        # a registry's version document is the package's package.json, its scripts with it
        scripts = {"postinstall": "node run.js"}
        version = {
            "name": NAME,
            "version": VERSION,
            "scripts": scripts,
            "hasInstallScript": True,
            "dist": dist,
        }
        return json.dumps(
            {"name": NAME, "dist-tags": {"latest": VERSION}, "versions": {VERSION: version}}
        ).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    server: Registry

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self.server.requests += 1
        if self.path.endswith(".tgz"):
            body = self.server.served
        elif self.path.strip("/") == NAME:
            body = self.server.packument()
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def registry() -> Iterator[Registry]:
    server = Registry(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def project(folder: Path) -> Path:
    """package.json and a lockfile pinning the package by integrity only, as rounds' own does."""
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(
        json.dumps({"name": "app", "version": "1.0.0", "private": True, "dependencies": {NAME: VERSION}})
    )
    lock = {
        "name": "app",
        "version": "1.0.0",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {
            "": {"name": "app", "version": "1.0.0", "dependencies": {NAME: VERSION}},
            f"node_modules/{NAME}": {
                "version": VERSION,
                "integrity": integrity(PINNED),
                "hasInstallScript": True,
            },
        },
    }
    (folder / "package-lock.json").write_text(json.dumps(lock))
    return folder


def npm(
    args: list[str], cwd: Path, cache: Path, registry: Registry, mark: Path
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cwd.parent / "home"),
        "MARK": str(mark),
        "npm_config_registry": f"http://127.0.0.1:{registry.server_address[1]}/",
        "npm_config_cache": str(cache),
        "npm_config_fetch_retries": "0",
        "npm_config_update_notifier": "false",
    }
    return subprocess.run(
        [str(NPM), *args, "--no-audit", "--no-fund"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def filled_cache(tmp_path: Path, registry: Registry) -> tuple[Path, Path]:
    """The cache of one online install of the pinned package, and the marker path its scripts write beside."""
    cache, mark = tmp_path / "cache", tmp_path / "mark"
    first = npm(["ci"], project(tmp_path / "first"), cache, registry, mark)
    assert first.returncode == 0, first.stderr
    assert Path(f"{mark}.pinned").exists()
    Path(f"{mark}.pinned").unlink()
    return cache, mark


def installed(folder: Path) -> str | None:
    script = folder / "node_modules" / NAME / "run.js"
    return script.read_text() if script.exists() else None


def test_the_untouched_cache_installs_the_pinned_package_offline(tmp_path, registry):
    cache, mark = filled_cache(tmp_path, registry)
    registry.served = PLANTED  # whatever the network would say now, offline npm does not ask it
    folder = project(tmp_path / "again")
    done = npm(["ci", "--offline"], folder, cache, registry, mark)
    assert done.returncode == 0, done.stderr
    assert Path(f"{mark}.pinned").exists() and not Path(f"{mark}.planted").exists()
    assert ".pinned" in (installed(folder) or "")


def test_a_cached_tarball_changed_in_place_is_refused(tmp_path, registry):
    cache, mark = filled_cache(tmp_path, registry)
    changed = 0
    for path in (cache / "_cacache" / "content-v2").rglob("*"):
        if path.is_file() and path.read_bytes() == PINNED:
            path.chmod(0o644)
            path.write_bytes(PLANTED)
            changed += 1
    assert changed == 1
    folder = project(tmp_path / "again")
    done = npm(["ci", "--offline"], folder, cache, registry, mark)
    assert done.returncode != 0
    assert "corrupted" in done.stderr, done.stderr  # npm's own verdict on the cached bytes
    assert not Path(f"{mark}.planted").exists() and not Path(f"{mark}.pinned").exists()
    assert installed(folder) is None


def test_a_planted_self_consistent_cache_entry_is_refused(tmp_path, registry):
    cache, mark = filled_cache(tmp_path, registry)
    shutil.rmtree(cache)
    registry.served = PLANTED  # the same name, version and URL, other bytes: npm's cache adds it as they are
    planted = npm(["cache", "add", f"{NAME}@{VERSION}"], tmp_path, cache, registry, mark)
    assert planted.returncode == 0, planted.stderr
    folder = project(tmp_path / "again")
    done = npm(["ci", "--offline"], folder, cache, registry, mark)
    assert done.returncode != 0
    assert "EINTEGRITY" in done.stderr, done.stderr
    assert not Path(f"{mark}.planted").exists() and not Path(f"{mark}.pinned").exists()
    assert installed(folder) is None


# --- the reusable workflow's install step, with rounds-package ----------------------------------------------

#: what `rounds` says in a rounds-bot that has no `pins` command (click's usage error)
OLD_ROUNDS = "echo \"Error: No such command '$1'.\" >&2; exit 2"


def install_step(
    tmp_path: Path, registry: Registry, rounds: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The round job's `install-claude` script from rounds.yml, run by bash as the runner does, with the real
    npm and `rounds` the given shell body; (the process, the marker path the package's scripts write
    beside)."""
    (step,) = [s for s in load(WORKFLOW)["jobs"]["round"]["steps"] if s.get("id") == "install-claude"]
    tools, home, temp = tmp_path / "tools", tmp_path / "home", tmp_path / "runner-temp"
    for folder in (tools, home, temp):
        folder.mkdir()
    (tools / "rounds").write_text(f"#!/usr/bin/env bash\n{rounds}\n")
    (tools / "rounds").chmod(0o755)
    mark = tmp_path / "mark"
    env = {
        "PATH": os.pathsep.join([str(tools), os.environ.get("PATH", "")]),
        "HOME": str(home),
        "RUNNER_TEMP": str(temp),
        "GITHUB_ENV": str(temp / "github_env"),
        "MARK": str(mark),
        "npm_config_registry": f"http://127.0.0.1:{registry.server_address[1]}/",
        "npm_config_fetch_retries": "0",
        "npm_config_update_notifier": "false",
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=180, check=False
    )
    return done, mark


def shipped_lockfile(tmp_path: Path) -> str:
    """A `rounds` that names the folder of its package's lockfile, as `rounds pins claude-code` does."""
    return f"echo {project(tmp_path / 'site-packages' / 'rounds_bot' / 'pins' / 'claude-code')}"


def test_the_workflow_installs_the_pinned_package_from_the_lockfile_rounds_ships(tmp_path, registry):
    done, mark = install_step(tmp_path, registry, shipped_lockfile(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert Path(f"{mark}.pinned").exists()
    assert ".pinned" in (installed(tmp_path / "home" / ".rounds" / "claude-code") or "")


def test_the_workflow_refuses_a_replaced_registry_entry(tmp_path, registry):
    registry.served = (
        PLANTED  # the packument's integrity is the planted tarball's: the registry vouches for it
    )
    done, mark = install_step(tmp_path, registry, shipped_lockfile(tmp_path))
    assert done.returncode != 0
    assert "EINTEGRITY" in done.stderr, done.stderr
    assert not Path(f"{mark}.planted").exists() and not Path(f"{mark}.pinned").exists()
    assert installed(tmp_path / "home" / ".rounds" / "claude-code") is None


def test_without_a_lockfile_npm_installs_the_replaced_entry(tmp_path, registry):
    """What the step ran for rounds-package before: the exact version, and whatever bytes the registry has."""
    registry.served = PLANTED
    folder, cache, mark = tmp_path / "cli", tmp_path / "cache", tmp_path / "mark"
    folder.mkdir()
    done = npm(
        ["install", "--prefix", str(folder), "--save-exact", f"{NAME}@{VERSION}"],
        folder,
        cache,
        registry,
        mark,
    )
    assert done.returncode == 0, done.stderr
    assert Path(f"{mark}.planted").exists() and ".planted" in (installed(folder) or "")


def test_a_rounds_without_the_lockfile_stops_the_step_before_npm_runs(tmp_path, registry):
    done, _ = install_step(tmp_path, registry, OLD_ROUNDS)
    assert done.returncode == 1
    assert "::error::" in done.stdout and "rounds pins claude-code" in done.stdout
    assert registry.requests == 0 and not list(tmp_path.glob("mark.*"))
    assert installed(tmp_path / "home" / ".rounds" / "claude-code") is None
