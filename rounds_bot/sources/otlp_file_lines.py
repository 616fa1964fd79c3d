"""The lines of an OTLP/JSON file as they are found on disk, not only as the exporter meant to write them.

- A gzip file is read member after member; one cut short (a copy still being compressed, or damaged) gives
  every line before the cut, and the cut is named by its line (`RawLines.damage`), not the whole file lost.
- NUL bytes are never JSON text (RFC 8259 allows no unescaped control character, and none outside a string):
  a run of them is a hole, the one logrotate's `copytruncate` leaves when the writer keeps its offset, or a
  crash's unwritten blocks. The text on either side of a run is read as lines of their own, and the run is
  passed over as it is read, never held: a hole may be as large as the file was before its truncation.
- A line (a piece between holes) is held up to `MAX_LINE` bytes; a longer one is let go as it is read, and
  stands as a `Line` marked `too_long`, so that neither a hole nor a file without line ends is held whole.
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
# the text is read in chunks of this size (a plain file through a buffer as large): an export line is often
# longer than the default 8 KiB, and such a line is put together from as many reads
_READ_BUFFER = 1 << 20
# gzip: compressed bytes read at once, and text let out of one inflate call at most (a highly compressed
# block would otherwise inflate to many times its size in one piece)
_GZIP_CHUNK = 1 << 16
_GZIP_OUT = 1 << 20
#: wbits for zlib that reads a gzip member (header and trailer)
_GZIP_WBITS = 16 + zlib.MAX_WBITS
#: The longest line read. The file exporter writes one export request per line, and bounds none; what bounds
#: a request is the receiver it came through: 4 MiB by default over gRPC (`max_recv_msg_size_mib`), 20 MiB
#: over HTTP (`max_request_body_size`), in protobuf, which JSON spells in up to about three times as many
#: bytes (hex ids, field names, quoted 64-bit integers). 64 MiB holds the largest such request, and a line
#: that long is still parsed in a few hundred MB.
MAX_LINE = 64 << 20
#: NUL bytes to compare a chunk's runs of them with (memcmp: a regular expression walks a run byte by byte,
#: 7 s a GiB, where a hole may be as large as the file was)
_NULS = memoryview(bytes(_READ_BUFFER))
_LINE_END = ord("\n")


class NotText(Exception):
    """The file is not text: why, in words a user can act on."""


class Line(NamedTuple):
    """A line's number (lines split by a NUL run share it), where it begins in the uncompressed text, its
    bytes, whether it is the file's last and has no line end, and whether it was longer than `MAX_LINE`
    (then its bytes are not kept: `raw` is empty). A tuple: one is made for every line."""

    number: int
    offset: int
    raw: bytes
    open_end: bool
    too_long: bool = False


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
        cutter = _Cutter()
        while chunk := text.read(_READ_BUFFER):
            yield from cutter.feed(chunk)
        if gunzip is not None and gunzip.damage is not None:
            # the piece the text stops in is not whole: it is not read, and damage names its line
            self.damage = (cutter.number, gunzip.damage)
            return
        last = cutter.end()
        if last is not None:
            yield last


class _Cutter:
    """Cuts text fed to it in chunks into lines, and a line into the pieces between its runs of NUL bytes.
    It holds at most one piece of up to `MAX_LINE` bytes: NUL bytes are passed over where they are found,
    and a longer piece is let go as it grows (a `Line` with `too_long` set stands for it)."""

    def __init__(self) -> None:
        self.number = 1  # the line being read
        self._at = 0  # where the chunk being fed begins in the text
        self._start: int | None = None  # where the piece being read begins, None between pieces
        self._parts: list[bytes] = []
        self._size = 0
        self._too_long = False

    def feed(self, chunk: bytes) -> Iterator[Line]:
        holes = b"\x00" in chunk  # most chunks have none: no search for them, line after line
        pos, size = 0, len(chunk)
        while pos < size:
            stop = chunk.find(b"\n", pos)
            stop = size if stop < 0 else stop + 1
            nul = chunk.find(b"\x00", pos, stop) if holes else -1
            if nul >= 0:  # a hole: the piece before it ends there, and its NUL bytes are passed over
                self._take(chunk, pos, nul)
                yield from self._finish(open_end=False)
                pos = _after_nuls(chunk, nul)
                continue
            self._take(chunk, pos, stop)
            pos = stop
            if chunk[stop - 1] == _LINE_END:
                yield from self._finish(open_end=False)
                self.number += 1
        self._at += size

    def end(self) -> Line | None:
        """The piece the text ends in without a line end (the exporter may be writing it), if any."""
        return next(self._finish(open_end=True), None)

    def _take(self, chunk: bytes, begin: int, end: int) -> None:
        if begin == end:
            return
        if self._start is None:
            self._start = self._at + begin
        self._size += end - begin
        if self._too_long:
            return
        if self._size > MAX_LINE:  # let go of it now: held to its end, it could be as long as the file
            self._parts.clear()
            self._too_long = True
            return
        self._parts.append(chunk if end - begin == len(chunk) else chunk[begin:end])

    def _finish(self, *, open_end: bool) -> Iterator[Line]:
        """The piece read so far, unless it is blank; the next piece begins after it."""
        start, parts, too_long = self._start, self._parts, self._too_long
        self._start, self._parts, self._size, self._too_long = None, [], 0, False
        if start is None:
            return
        if too_long:
            yield Line(self.number, start, b"", open_end, too_long=True)
            return
        raw = parts[0] if len(parts) == 1 else b"".join(parts)
        if raw.strip():
            yield Line(self.number, start, raw, open_end)


def _after_nuls(chunk: bytes, at: int) -> int:
    """Where the run of NUL bytes that begins at `at` ends in `chunk` (at most `_READ_BUFFER` bytes long): a
    halving search, each step one comparison with `_NULS`."""
    end = len(chunk)
    if chunk.startswith(_NULS[: end - at], at):
        return end
    known, beyond = at + 1, end  # chunk[at:known] is all NUL, chunk[at:beyond] is not
    while beyond - known > 1:
        middle = (known + beyond) // 2
        if chunk.startswith(_NULS[: middle - at], at):
            known = middle
        else:
            beyond = middle
    return known


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
