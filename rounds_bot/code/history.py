"""What git knows about a line: the revision that ran it, and the last commit that touched it before a problem
began (the suspect commit). Read-only; every git call is bounded in time and a failure means "not known"."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from rounds_bot.models import Frozen

GIT_TIMEOUT_SECONDS = 20


class Commit(Frozen):
    """A commit as an issue shows it."""

    sha: str
    title: str
    author: str
    date: datetime


def git(checkout: Path, *args: str) -> str | None:
    """`git args...` in the checkout; its output, or None when git fails or is not there."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=checkout, capture_output=True, timeout=GIT_TIMEOUT_SECONDS, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace")


def resolve_revision(checkout: Path, *, vcs_revision: str | None, service_version: str | None) -> str | None:
    """The commit that produced the code: the telemetry's `vcs.ref.head.revision` when the checkout has it,
    else a tag named like the service version (`1.4.2` or `v1.4.2`), else None (the caller falls back)."""
    candidates = [vcs_revision] if vcs_revision else []
    if service_version:
        candidates += [f"refs/tags/{service_version}", f"refs/tags/v{service_version.removeprefix('v')}"]
    for candidate in candidates:
        found = git(checkout, "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}")
        if found and found.strip():
            return found.strip()
    return None


def head_revision(checkout: Path) -> str | None:
    found = git(checkout, "rev-parse", "HEAD")
    return found.strip() if found and found.strip() else None


def suspect_commit(checkout: Path, path: str, line: int, *, revision: str, before: datetime) -> Commit | None:
    """The last commit before `before` that touched `path:line`, as of `revision`."""
    moment = before.astimezone(UTC).isoformat()
    base = git(checkout, "rev-list", "-1", f"--before={moment}", revision)
    if not base or not base.strip():
        return None
    porcelain = git(checkout, "blame", "--porcelain", "-L", f"{line},{line}", base.strip(), "--", path)
    return _read_porcelain(porcelain) if porcelain else None


def _read_porcelain(text: str) -> Commit | None:
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        return None
    sha = lines[0].split()[0]
    fields: dict[str, str] = {}
    for line in lines[1:]:
        key, _, value = line.partition(" ")
        fields.setdefault(key, value)
    if not set(sha) <= set("0123456789abcdef") or set(sha) == {"0"}:
        return None  # not committed yet
    try:
        date = datetime.fromtimestamp(int(fields.get("author-time", "0")), UTC)
    except ValueError:
        return None
    return Commit(sha=sha, title=fields.get("summary", ""), author=fields.get("author", ""), date=date)
