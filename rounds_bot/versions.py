"""Which `service.version` is newer than which, as far as versions can tell.

Versions that read as PEP 440 or semantic versions (`1.4.2`, `v2.0.0-rc.1`) are ordered. Others (a commit
hash, a build number with words in it) cannot be ordered: a version not seen before the merge then counts as
newer, and as carrying the fix.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version


def parsed(version: str) -> Version | None:
    try:
        return Version(version.strip())
    except InvalidVersion:
        return None


def is_newer(version: str, before: Iterable[str]) -> bool:
    """`version` is newer than every version in `before` (unseen, when they cannot be ordered)."""
    known = set(before)
    if version in known:
        return False
    mine, theirs = parsed(version), [parsed(v) for v in known]
    if mine is None or any(v is None for v in theirs):
        return True
    return all(mine > v for v in theirs if v is not None)


def at_or_above(version: str, release: str, before: Iterable[str]) -> bool:
    """`version` is the release that carries the fix, or a later one."""
    if version == release:
        return True
    if version in set(before):
        return False
    mine, released = parsed(version), parsed(release)
    if mine is None or released is None:
        return True  # a version unseen before the merge: the fix is in it
    return mine >= released


def ordered(versions: Iterable[str]) -> list[str]:
    """Oldest first when every version can be ordered; otherwise in text order."""
    found = sorted(set(versions))
    keyed = {version: key for version in found if (key := parsed(version)) is not None}
    return sorted(found, key=keyed.__getitem__) if len(keyed) == len(found) else found
