"""Compiled scan databases are kept between processes (`redact/scan_cache.py`): a cached database scans as
the compiled one does; one that is not whole, or is for another platform, is refused and compiled again; a
cache that cannot be read or written costs a compile, never a round."""

from __future__ import annotations

import os
import time
from pathlib import Path

import hyperscan
import pytest

from rounds_bot.redact import scan_cache
from rounds_bot.redact.text import _rules
from tests import security_corpus

# a small set of the kinds of pattern the prefilter compiles: a rule's, a keyword's, a gate with a length
EXPRESSIONS = [rb"(?i)password\s*[:=]", rb"(?i)\btoken\b", rb"[0-9A-Fa-f]{32}", rb"[0-9+/_-]{20}"]
IDS = [0, 1, 40, 41]
FLAGS = [0, hyperscan.HS_FLAG_SINGLEMATCH, hyperscan.HS_FLAG_SINGLEMATCH, hyperscan.HS_FLAG_SINGLEMATCH]
LENGTHS = [0, 0, 0, 20]


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "rounds" / "hyperscan"


def _texts() -> list[str]:
    texts = [planted.carrier for planted in security_corpus.corpus()] + security_corpus.KEPT
    return [text for text in texts if text.isascii()] + ["4bf92f3577b34da6a3ce929d0e0e4736", "x"]


def _hits(database: object, texts: list[str]) -> list[list[tuple[int, int]]]:
    found = []
    for text in texts:
        hits: list[tuple[int, int]] = []
        database.scan(  # type: ignore[attr-defined]
            text.encode("ascii"),
            match_event_handler=lambda rule, _start, end, _flags, into: into.append((rule, end)),
            context=hits,
        )
        found.append(hits)
    return found


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the compiles `scan_cache.database` makes from here on."""
    made: list[int] = []
    compile_now = scan_cache._compile

    def counted(*args: object) -> object:
        made.append(1)
        return compile_now(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_cache, "_compile", counted)
    return made


def _cached(cache_home: Path) -> Path:
    (path,) = cache_home.glob("*" + scan_cache.SUFFIX)
    return path


def test_a_database_from_the_cache_scans_as_the_compiled_one(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiles = _compiles(monkeypatch)
    compiled = scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    loaded = scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    assert len(compiles) == 1 and loaded is not compiled
    texts = _texts()
    assert _hits(loaded, texts) == _hits(compiled, texts)
    assert any(_hits(loaded, texts))


def test_the_redaction_rules_database_loads_from_the_cache_and_scans_alike(cache_home: Path) -> None:
    from rounds_bot.redact import decode, phrases
    from rounds_bot.redact.scan import Prefilter

    gates = {**decode.SCAN_GATES, **phrases.SCAN_GATES}
    compiled, loaded = Prefilter.of(_rules("all"), gates), Prefilter.of(_rules("all"), gates)
    assert compiled is not None and loaded is not None
    assert len(list(cache_home.glob("*" + scan_cache.SUFFIX))) == 1
    for text in _texts():
        assert loaded.scan(text) == compiled.scan(text), text


def test_a_database_with_other_patterns_or_flags_is_cached_apart(cache_home: Path) -> None:
    scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    scan_cache.database(EXPRESSIONS[:3], IDS[:3], FLAGS[:3], LENGTHS[:3])
    scan_cache.database(EXPRESSIONS, IDS, [0] * 4, LENGTHS)
    scan_cache.database(EXPRESSIONS, IDS, FLAGS, [0, 0, 32, 20])
    assert len(list(cache_home.glob("*" + scan_cache.SUFFIX))) == 4


@pytest.mark.parametrize(
    "spoil",
    [
        lambda blob: blob[: len(blob) // 2],  # cut short
        lambda blob: blob[:-1] + bytes([blob[-1] ^ 1]),  # one bit of the database flipped
        lambda blob: b"something else" + blob[14:],  # not one of ours
        lambda blob: b"",
    ],
)
def test_a_cached_database_that_is_not_whole_is_compiled_again_and_written_over(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, spoil: object
) -> None:
    expected = _hits(scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS), _texts())
    path = _cached(cache_home)
    whole = path.read_bytes()
    path.write_bytes(spoil(whole))  # type: ignore[operator]
    compiles = _compiles(monkeypatch)
    assert _hits(scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS), _texts()) == expected
    assert len(compiles) == 1 and path.read_bytes() == whole


def test_a_database_whose_digest_matches_but_hyperscan_refuses_is_compiled_again(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes written whole by someone else (the digest is no signature): Hyperscan's own checks refuse
    them, and they are compiled again."""
    import hashlib

    scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    path = _cached(cache_home)
    payload = b"\x00" * 4096
    path.write_bytes(scan_cache.MAGIC + hashlib.sha256(payload).digest() + payload)
    compiles = _compiles(monkeypatch)
    scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    assert len(compiles) == 1


def test_a_cached_database_for_another_platform_is_refused(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database reports the platform it was built for (version, CPU features, mode); one that is not this
    process's is never used, whatever file it is found in."""
    scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    path = _cached(cache_home)
    assert scan_cache._load(path) is not None
    here = scan_cache.host_platform()
    assert here.startswith(b"Version: ") and b"Mode: BLOCK" in here
    elsewhere = here.replace(b"Features: ", b"Features: AVX512 ") if b"AVX512" not in here else b"x"
    monkeypatch.setattr(scan_cache, "host_platform", lambda: elsewhere)
    assert scan_cache._load(path) is None


def test_the_key_holds_the_platform_and_the_library_version(monkeypatch: pytest.MonkeyPatch) -> None:
    key = scan_cache._key(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    monkeypatch.setattr(scan_cache, "host_platform", lambda: b"Version: 5.4.12 Features: AVX2 Mode: BLOCK")
    assert scan_cache._key(EXPRESSIONS, IDS, FLAGS, LENGTHS) != key
    monkeypatch.undo()
    monkeypatch.setattr(hyperscan, "__version__", "0.0.1", raising=False)
    assert scan_cache._key(EXPRESSIONS, IDS, FLAGS, LENGTHS) != key


def test_a_cache_that_cannot_be_written_costs_a_compile_never_a_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    compiles = _compiles(monkeypatch)
    first = scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    second = scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    assert len(compiles) == 2
    assert _hits(first, _texts()) == _hits(second, _texts())
    assert blocked.read_text() == "not a directory"


def test_a_cache_entry_that_cannot_be_read_costs_a_compile(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    path = _cached(cache_home)
    path.unlink()
    path.mkdir()  # where the file was, something that does not read as one
    compiles = _compiles(monkeypatch)
    assert _hits(scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS), ["password=x"]) == [[(0, 9)]]
    assert len(compiles) == 1


def test_the_cache_is_in_the_users_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert scan_cache.cache_directory() == tmp_path / "xdg" / "rounds" / "hyperscan"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the specification: ignored
    assert scan_cache.cache_directory() == tmp_path / ".cache" / "rounds" / "hyperscan"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert scan_cache.cache_directory() == tmp_path / ".cache" / "rounds" / "hyperscan"


def test_databases_nobody_used_for_a_month_are_removed_when_another_is_written(cache_home: Path) -> None:
    scan_cache.database(EXPRESSIONS, IDS, FLAGS, LENGTHS)
    old = _cached(cache_home)
    scan_cache.database(EXPRESSIONS[:2], IDS[:2], FLAGS[:2], LENGTHS[:2])
    assert old.exists()  # used recently: kept
    month_ago = time.time() - scan_cache.STALE_SECONDS - 60
    os.utime(old, (month_ago, month_ago))
    scan_cache.database(EXPRESSIONS[:1], IDS[:1], FLAGS[:1], LENGTHS[:1])
    assert not old.exists()
    assert len(list(cache_home.glob("*" + scan_cache.SUFFIX))) == 2
