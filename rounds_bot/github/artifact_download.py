"""A saved database's artifact, downloaded and unpacked: only the one file a restore reads.

    download(artifact, token, spend=...)        the artifact's zip
    extract(archive, member, target)            the member named like the database file, to `target`
    read_small_member(archive, member, limit)   a small member (the signature) as bytes

The download: `GET archive_download_url` with the token; GitHub answers 302 with a signed URL on another host
that is valid for about a minute. httpx follows it and drops the Authorization header on a cross-origin
redirect, so the token never reaches the storage host. 410 Gone means the artifact expired.

Only the zip member named like the database file is read (nothing else from the archive touches the disk).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx

from rounds_bot.errors import StoreError, TrackerError
from rounds_bot.github.actions import Artifact

# A signature database is a few megabytes; refuse to unpack anything absurd.
MAX_DATABASE_BYTES = 1 << 30
DOWNLOAD_TIMEOUT_SECONDS = 60.0


class ArtifactGone(TrackerError):
    """The artifact expired or was deleted between listing and download (404/410)."""


def download(
    artifact: Artifact,
    token: str,
    *,
    transport: httpx.BaseTransport | None = None,
    spend: Callable[[str], None],
) -> bytes:
    """The artifact's zip. The token goes to the API host only; the signed redirect is followed without it."""
    spend(f"download artifact {artifact.id}")
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "User-Agent": "rounds-bot",
    }
    try:
        with httpx.Client(
            transport=transport, follow_redirects=True, timeout=DOWNLOAD_TIMEOUT_SECONDS, headers=headers
        ) as client:
            response = client.get(artifact.archive_download_url)
    except httpx.HTTPError as exc:
        raise TrackerError(
            f"could not download artifact {artifact.id} ({artifact.name}): {exc.__class__.__name__}: {exc}",
            hint="a network problem; the state is rebuilt from the issues this time",
        ) from exc
    if response.status_code in (404, 410):
        raise ArtifactGone(f"artifact {artifact.id} ({artifact.name}) is gone: {response.status_code}")
    if response.status_code in (401, 403):
        raise TrackerError(
            f"GitHub refused to hand out artifact {artifact.id}: {response.status_code}",
            hint="the workflow job needs `actions: read` in its `permissions:`",
        )
    if response.status_code != 200:
        raise TrackerError(f"downloading artifact {artifact.id} answered {response.status_code}")
    return response.content


def extract(archive: bytes, member: str, target: Path) -> None:
    """Write the one member named `member` (at any depth) to `target`; nothing else is unpacked."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            entries = [e for e in zipped.infolist() if not e.is_dir() and Path(e.filename).name == member]
            if not entries:
                names = ", ".join(e.filename for e in zipped.infolist()[:5]) or "nothing"
                raise StoreError(f"the artifact holds no {member} (it holds {names})")
            entry = min(entries, key=lambda e: e.filename.count("/"))
            if entry.file_size > MAX_DATABASE_BYTES:
                raise StoreError(
                    f"{entry.filename} in the artifact is {entry.file_size:,} bytes: too big to restore"
                )
            with zipped.open(entry) as source, target.open("wb") as out:
                while chunk := source.read(1 << 20):
                    out.write(chunk)
    except (zipfile.BadZipFile, OSError) as exc:
        raise StoreError(f"the artifact is not a readable zip: {exc}") from exc


def read_small_member(archive: bytes, member: str, limit: int) -> bytes | None:
    """The bytes of the member named `member` nearest the root, or None when there is none (or it is larger
    than `limit`, which no caller's file would be)."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            entries = [e for e in zipped.infolist() if not e.is_dir() and Path(e.filename).name == member]
            if not entries:
                return None
            entry = min(entries, key=lambda e: e.filename.count("/"))
            if entry.file_size > limit:
                return b"\0" * (limit + 1)
            with zipped.open(entry) as source:
                return source.read(limit + 1)
    except (zipfile.BadZipFile, OSError):
        return None
