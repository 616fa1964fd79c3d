"""The cases' upstream sources, committed once each: a content-addressed store and one manifest per case.

    <cases>/_sources/<sha256[:2]>/<sha256>        a file's bytes, named by their SHA-256
    <cases>/_sources/licences/<project>/...       each upstream project's licence (and NOTICE) files
    <cases>/<case-id>/sources.json                {"format": 1, "revision": ..., "files": {path: sha256}}

A file identical at several revisions (most of a project's files between two bugs) is stored once. The
manifest holds the fault's files and the project's files on the crash stack, innermost first, up to
`STACK_FILES`; `rounds_bot/eval/store.py` reads it back into a checkout under the eval's output folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from rounds_bot.code.mapping import CodeMap
from rounds_bot.grouping.stacktrace import parse_stacktrace

STORE = "_sources"
MANIFEST = "sources.json"
LICENCES = "licences"
#: the project's files on the crash stack kept beyond the fault's files (innermost first)
STACK_FILES = 1
_LICENCE_NAMES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "NOTICE", "NOTICE.txt")


class SourceStore:
    """Writes objects and manifests under one case folder; counts what it stored."""

    def __init__(self, cases: Path) -> None:
        self.root = cases / STORE
        self.added: set[str] = set()

    def clear(self) -> None:
        if self.root.is_dir():
            shutil.rmtree(self.root)

    def add(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.root / digest[:2] / digest
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        self.added.add(digest)
        return digest

    def write_case(self, case: dict[str, Any], folder: Path, git_dir: Path) -> int:
        """The case's needed files at its revision into the store and its manifest; how many were found."""
        revision = case["repository"]["revision"]
        files = {}
        for path in needed_files(case):
            data = show_bytes(git_dir, revision, path)
            if data is not None:
                files[path] = self.add(data)
        manifest = {"format": 1, "revision": revision, "files": dict(sorted(files.items()))}
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        return len(files)

    def write_licences(self, project: str, git_dir: Path) -> list[str]:
        """The project's licence files, as its default branch has them."""
        written = []
        for name in _LICENCE_NAMES:
            data = show_bytes(git_dir, "HEAD", name)
            if data is not None:
                target = self.root / LICENCES / project / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.append(name)
        return written

    def size(self) -> int:
        return sum(path.stat().st_size for path in self.root.rglob("*") if path.is_file())


def needed_files(case: dict[str, Any]) -> list[str]:
    """The fault's files, then the project's files on the crash stack, innermost first, the first few."""
    faults = [fault["path"] for fault in case["truth"]["faults"]]
    stack = [path for path in stack_files(case) if path not in faults]
    return list(dict.fromkeys([*faults, *stack[:STACK_FILES]]))


def stack_files(case: dict[str, Any]) -> list[str]:
    """The case's files its first trace's frames map to, innermost first (as the issue links frames)."""
    text = next((event["stacktrace"] for event in case["telemetry"] if event.get("stacktrace")), None)
    trace = parse_stacktrace(text)
    if trace is None:
        return []
    code = CodeMap(case["repository"]["files"])
    found = [code.repo_path(frame) for exception in trace.exceptions for frame in exception.frames]
    return list(dict.fromkeys(path for path in found if path is not None))


def show_bytes(git_dir: Path, revision: str, path: str) -> bytes | None:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{revision}:{path}"], capture_output=True, timeout=60
    )
    return done.stdout if done.returncode == 0 else None


def has_commit(git_dir: Path, revision: str) -> bool:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{revision}^{{commit}}"],
        capture_output=True,
        timeout=60,
    )
    return done.returncode == 0
