"""Compiled Hyperscan databases kept between processes, so a round loads in a millisecond what takes a second
or more to compile.

    database(expressions, ids, flags, lengths) -> hyperscan.Database   loaded when cached, else compiled
    cached(expressions, ids, flags, lengths) -> hyperscan.Database | None   loaded when cached, else None

A database is cached under a key made of everything it depends on: the patterns, their ids, flags and least
lengths, the mode, the Hyperscan library and binding versions, the machine, and the platform Hyperscan
compiles for on this processor (its version, CPU features and mode, as a database of one pattern reports
them). A cached database is used only when its bytes are whole (a digest of them is kept beside them, and
Hyperscan checks its own), it loads, and it reports that very platform: one built elsewhere (another
processor, another library) is refused and rebuilt, never trusted. The cache lives in the user's cache
directory (`$XDG_CACHE_HOME/rounds/hyperscan`, by default `~/.cache/rounds/hyperscan`); a cache that cannot be
read or written costs a compile, never a round.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import tempfile
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import hyperscan

log = logging.getLogger(__name__)

#: what a cache file begins with (a file that does not is not one of ours: rebuilt over)
MAGIC = b"rounds-hyperscan-1\n"
_DIGEST_BYTES = 32
#: a cached database not used for this long is removed when another is written (old rule sets, upgrades)
STALE_SECONDS = 30 * 24 * 3600
SUFFIX = ".hsdb"


def cache_directory() -> Path:
    """Where compiled databases are kept: the XDG base directory specification's user cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"  # the spec ignores a relative path
    return root / "rounds" / "hyperscan"


@cache
def host_platform() -> bytes:
    """The platform Hyperscan compiles for in this process: version, CPU features and mode, as a database
    compiled here reports them (`Database.info`)."""
    probe = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    probe.compile(expressions=[b"rounds"])
    return _platform_of(probe)


def _platform_of(compiled: Any) -> bytes:
    """A database's `info()`: its Hyperscan version, CPU features and mode (bytes, whatever its stubs say)."""
    info: Any = compiled.info()
    return info if isinstance(info, bytes) else str(info).encode()


def database(
    expressions: Sequence[bytes], ids: Sequence[int], flags: Sequence[int], lengths: Sequence[int]
) -> Any:
    """A block-mode database of the patterns: from the cache when a valid one is there, else compiled (and
    cached for the next process)."""
    path = cache_directory() / (_key(expressions, ids, flags, lengths) + SUFFIX)
    loaded = _load(path)
    if loaded is not None:
        return loaded
    compiled = _compile(expressions, ids, flags, lengths)
    _store(path, hyperscan.dumpb(compiled))
    return compiled


def cached(
    expressions: Sequence[bytes], ids: Sequence[int], flags: Sequence[int], lengths: Sequence[int]
) -> Any | None:
    """The database of the patterns when a valid one is in the cache; None (nothing compiled) when not."""
    return _load(cache_directory() / (_key(expressions, ids, flags, lengths) + SUFFIX))


def _key(
    expressions: Sequence[bytes], ids: Sequence[int], flags: Sequence[int], lengths: Sequence[int]
) -> str:
    digest = hashlib.sha256()
    for part in (
        MAGIC,
        str(getattr(hyperscan, "__version__", "unknown")).encode(),  # the binding's (not in its stubs)
        platform.machine().encode(),
        host_platform(),
        repr((list(ids), list(flags), list(lengths), hyperscan.HS_MODE_BLOCK)).encode(),
    ):
        digest.update(len(part).to_bytes(8, "big") + part)
    for expression in expressions:
        digest.update(len(expression).to_bytes(8, "big") + expression)
    return digest.hexdigest()


def _compile(
    expressions: Sequence[bytes], ids: Sequence[int], flags: Sequence[int], lengths: Sequence[int]
) -> Any:
    extensions = [
        hyperscan.ExpressionExt(  # type: ignore[attr-defined]  # in the module, not in its stubs
            hyperscan.HS_EXT_FLAG_MIN_LENGTH if least else 0, 0, 0, least, 0, 0
        )
        for least in lengths
    ]
    compiled = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    compiled.compile(
        expressions=list(expressions),
        ids=list(ids),
        elements=len(expressions),
        flags=list(flags),
        ext=extensions,
    )
    return compiled


def _load(path: Path) -> Any | None:
    """The database cached at `path`, or None when there is none, or it is not whole, or not for this
    platform (then it is compiled again and written over)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    header = len(MAGIC) + _DIGEST_BYTES
    payload = blob[header:]
    if blob[: len(MAGIC)] != MAGIC or blob[len(MAGIC) : header] != hashlib.sha256(payload).digest():
        log.debug("cached scan database %s is not whole: compiled again", path)
        return None
    try:
        loaded = hyperscan.loadb(payload, hyperscan.HS_MODE_BLOCK)
        if _platform_of(loaded) != host_platform():  # built for another processor, library or mode
            log.debug("cached scan database %s is for another platform: compiled again", path)
            return None
        loaded.scratch = hyperscan.Scratch(loaded)  # a loaded database comes without one
    except hyperscan.error as error:
        log.debug("cached scan database %s does not load (%s): compiled again", path, error)
        return None
    _touch(path)
    return loaded


def _store(path: Path, payload: bytes) -> None:
    """Writes the database whole or not at all (a temporary file renamed over), and removes databases
    nobody used for `STALE_SECONDS`; a failure is logged, never raised."""
    written: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
            written = handle.name
            handle.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(written, path)
    except OSError as error:
        log.debug("scan database not cached in %s: %s", path.parent, error)
        if written is not None:
            with contextlib.suppress(OSError):
                Path(written).unlink(missing_ok=True)
        return
    _remove_stale(path.parent, keep=path)


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only cache still serves; it only ages
        os.utime(path)


def _remove_stale(directory: Path, keep: Path) -> None:
    cutoff = time.time() - STALE_SECONDS
    try:
        for entry in directory.iterdir():
            if entry != keep and entry.suffix in (SUFFIX, ".tmp") and entry.stat().st_mtime < cutoff:
                entry.unlink(missing_ok=True)
    except OSError as error:
        log.debug("stale scan databases not removed from %s: %s", directory, error)
