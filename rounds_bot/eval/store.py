"""Cases' sources kept once in the case folder: a content-addressed store and one manifest per case.

    <cases>/_sources/<sha256[:2]>/<sha256>        a file's bytes, named by their SHA-256
    <cases>/<case-id>/sources.json                {"format": 1, "revision": ..., "files": {path: sha256}}

A file identical at several revisions is stored once. Before a run, each case's files are written out of the
store into a checkout under the eval's output folder (the diagnosis reads a real folder), each checked
against its hash; a manifest that names a missing or altered object leaves the case's sources missing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import Field, ValidationError, field_validator

from rounds_bot.models import Frozen

MANIFEST = "sources.json"
STORE = "_sources"


class SourceManifest(Frozen):
    format: Literal[1] = 1
    revision: str = ""
    files: dict[str, str] = Field(description="repository path -> SHA-256 of its bytes at the revision")

    @field_validator("files")
    @classmethod
    def _safe(cls, files: dict[str, str]) -> dict[str, str]:
        for path, digest in files.items():
            parts = PurePosixPath(path).parts
            if not parts or path.startswith("/") or ".." in parts or "\\" in path:
                raise ValueError(f"{path!r} is not a relative path inside the repository")
            if len(digest) != 64 or any(char not in "0123456789abcdef" for char in digest):
                raise ValueError(f"the hash of {path} is not a SHA-256 in hex")
        return files


def read_manifest(case_folder: Path) -> SourceManifest | None:
    """The case's manifest, or None when it has none or it cannot be read (its sources are then missing)."""
    path = case_folder / MANIFEST
    if not path.is_file():
        return None
    try:
        return SourceManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError):
        return None


def object_path(store: Path, digest: str) -> Path:
    return store / digest[:2] / digest


def complete(manifest: SourceManifest, store: Path, needed: list[str]) -> bool:
    """Whether the manifest names every needed path and the store holds each object it names."""
    return all(path in manifest.files for path in needed) and all(
        object_path(store, digest).is_file() for digest in manifest.files.values()
    )


def check_out(manifest: SourceManifest, store: Path, into: Path) -> bool:
    """Write the manifest's files under `into`; False (and nothing kept) when an object is not what its
    hash says."""
    for path, digest in manifest.files.items():
        data = object_path(store, digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            return False
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return True
