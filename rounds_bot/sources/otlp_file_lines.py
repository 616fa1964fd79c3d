"""The lines of an OTLP/JSON file as they are found on disk, not only as the exporter meant to write them.

- A gzip file is read member after member; one cut short (a copy still being compressed, or damaged) gives
  every line before the cut, and the cut is named by its line (`RawLines.damage`), not the whole file lost.
- NUL bytes are never JSON text (RFC 8259 allows no unescaped control character, and none outside a string):
  a run of them is a hole, the one logrotate's `copytruncate` leaves when the writer keeps its offset, or a
  crash's unwritten blocks. The text on either side of a run is read as lines of their own.
- The last line without a line end is marked (`Line.open_end`): the exporter may be writing it.
- A file in a format rounds does not read is named by what it is (the file exporter's `format: proto`, its
  `compression: zstd`, a zstd-compressed copy), so the fix is the setting to change.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NamedTuple

UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PROBE_BYTES = 65_536
# a plain file through a large buffer: an export line is often longer than the default 8 KiB, and such a
# line is put together from as many reads
_READ_BUFFER = 1 << 20
# gzip: compressed bytes read at once, and text let out of one inflate call at most (a highly compressed
# block would otherwise inflate to many times its size in one piece)
_GZIP_CHUNK = 1 << 16
_GZIP_OUT = 1 << 20
#: wbits for zlib that reads a gzip member (header and trailer)
_GZIP_WBITS = 16 + zlib.MAX_WBITS


class NotText(Exception):
    """The file is not text: why, in words a user can act on."""


class Line(NamedTuple):
    """A line's number (lines split by a NUL run share it), where it begins in the uncompressed text, its
    bytes, and whether it is the file's last and has no line end (a tuple: one is made for every line)."""

    number: int
    offset: int
    raw: bytes
    open_end: bool


class RawLines:
    """The lines of one file (`lines()`), and after them, what stopped the text early (`damage`): the line
    it stopped in and why, or None when the file was read to its end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.damage: tuple[int, str] | None = None

    def gzipped(self) -> bool:
        try:
            with self.path.open("rb") as probe:
                return probe.read(len(GZIP_MAGIC)) == GZIP_MAGIC
        except OSError:
            return False  # `lines` says what is wrong with the file

    def lines(self) -> Iterator[Line]:
        """Raises OSError when the file cannot be read, NotText when it is not text."""
        gzipped = self.gzipped()
        with self.path.open("rb", buffering=_READ_BUFFER) as handle:
            gunzip = _Gunzip(handle) if gzipped else None
            text: IO[bytes] = io.BufferedReader(gunzip, _READ_BUFFER) if gunzip else handle
            head = text.peek(PROBE_BYTES)[:PROBE_BYTES] if isinstance(text, io.BufferedReader) else b""
            if gunzip is not None and not head and gunzip.damage is not None:
                raise NotText(f"it is a damaged gzip file ({gunzip.damage})")
            why = not_text(head)
            if why is not None:
                raise NotText(why)
            yield from self._split(text, gunzip)

    def _split(self, text: IO[bytes], gunzip: _Gunzip | None) -> Iterator[Line]:
        offset = 0
        pending: tuple[int, int, bytes] | None = None  # a line is yielded once the next is known
        for number, raw in enumerate(text, start=1):
            if pending is not None:
                yield from _pieces(*pending, open_end=False)
            pending = (number, offset, raw)
            offset += len(raw)
        if pending is None:
            return
        if gunzip is not None and gunzip.damage is not None:
            last, _, raw = pending
            if raw.endswith(b"\n"):
                yield from _pieces(*pending, open_end=False)
                last += 1
            self.damage = (last, gunzip.damage)
            return
        yield from _pieces(*pending, open_end=not pending[2].endswith(b"\n"))


def _pieces(number: int, offset: int, raw: bytes, *, open_end: bool) -> Iterator[Line]:
    """The line, or the text between its runs of NUL bytes, each a line of its own; none is empty."""
    if b"\x00" not in raw:
        yield Line(number, offset, raw, open_end)
        return
    at = 0
    for piece in raw.split(b"\x00"):
        if piece.strip():
            yield Line(number, offset + at, piece, open_end and at + len(piece) == len(raw))
        at += len(piece) + 1


class _Gunzip(io.RawIOBase):
    """The text of a gzip file, one member after another, as far as its data goes: where it stops early or
    is damaged, the text ends there and `damage` says why (Python's gzip module raises instead, and what it
    had inflated of the last lines is lost with the exception)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self._inflate = zlib.decompressobj(_GZIP_WBITS)
        self._fed = False  # the current member has had input
        self._carry = b""  # input read but not yet given to the inflater
        self._out = b""
        self.damage: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        while not self._out:
            more = self._inflated()
            if more is None:
                return 0
            self._out = more
        size = min(len(buffer), len(self._out))
        buffer[:size] = self._out[:size]
        self._out = self._out[size:]
        return size

    def _inflated(self) -> bytes | None:
        """The next piece of text (possibly empty), or None at the end of the data."""
        data = self._carry or self._inflate.unconsumed_tail or self._handle.read(_GZIP_CHUNK)
        self._carry = b""
        if not data:
            if self._fed and not self._inflate.eof:
                self.damage = (
                    "the gzip stream ends before its end marker (a copy cut short, or still written)"
                )
            return None
        self._fed = True
        try:
            out = self._inflate.decompress(data, _GZIP_OUT)
        except zlib.error as error:
            self.damage = f"damaged gzip data ({error})"
            return None
        if self._inflate.eof:  # the member is whole; another may follow (gzip files may be concatenated)
            self._carry = self._inflate.unused_data
            self._inflate = zlib.decompressobj(_GZIP_WBITS)
            self._fed = False
        return out


def not_text(head: bytes) -> str | None:
    """Why a file beginning with `head` is not text, or None when it is. NUL bytes (holes) are not counted
    against it; a character cut at the head's end is not binary."""
    if head.startswith(ZSTD_MAGIC):
        return "it is zstd-compressed (rounds reads plain and gzip-compressed files: `zstd -d` it first)"
    framed = _framed(head)
    if framed is not None:
        return framed
    text = head.replace(b"\x00", b"") if b"\x00" in head else head
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(text) - 4:
            return "it holds binary data (bytes that are not UTF-8)"
    return None


def _framed(head: bytes) -> str | None:
    """What the file exporter wrote when each request follows its length (4 bytes, big-endian), as it does
    for `format: proto` and for any `compression`: which setting made it."""
    if len(head) < 5 or head[0] != 0 or int.from_bytes(head[:4], "big") == 0:
        return None
    fix = "set the file exporter's `format: json` and remove its `compression`, as rounds reads JSON lines"
    if head[4:8] == ZSTD_MAGIC:
        return f"the file exporter wrote it with `compression: zstd` (length-prefixed zstd frames); {fix}"
    if head[4] == 0x0A:  # protobuf field 1, length-delimited: resource_spans, resource_logs, resource_metrics
        return f"the file exporter wrote it with `format: proto` (length-prefixed protobuf); {fix}"
    return None
