"""Reading a patch as `git diff` writes it (git-diff(1), "Generating patch text with -p"), byte for byte.

    files = parse(patch)      # one FilePart per `diff --git` part; Unreadable when git would not write it

The patch is hostile: anything this parser does not fully understand raises `Unreadable` (the check then
refuses the change), never skipped. Paths are decoded from git's C quoting (`core.quotePath`); the extended
headers (modes, renames, copies, `GIT binary patch`) are kept so the rules in `patchcheck.py` can see them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_INDEX = re.compile(rb"^index ([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})(?: ([0-7]{6}))?$")
_EXTENDED = (
    b"old mode ",
    b"new mode ",
    b"deleted file mode ",
    b"new file mode ",
    b"copy from ",
    b"copy to ",
    b"rename from ",
    b"rename to ",
    b"similarity index ",
    b"dissimilarity index ",
    b"index ",
)
_UNESCAPE = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}


class Unreadable(Exception):
    """The patch is not what `git diff` writes."""


@dataclass
class FilePart:
    """One file's part of the patch, as read."""

    names: list[str] = field(default_factory=list)
    modes: list[tuple[str, str]] = field(default_factory=list)  # (header, mode)
    renamed: bool = False
    deleted_file: bool = False
    binary: str = ""
    added: int = 0
    deleted: int = 0
    bytes_added: int = 0
    longest: int = 0
    added_lines: list[str] = field(default_factory=list)
    removed_lines: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.names[0] if self.names else ""


def parse(patch: bytes) -> list[FilePart]:
    lines = patch.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif patch:
        raise Unreadable("it does not end with a new line")
    files: list[FilePart] = []
    at = 0
    while at < len(lines):
        if not lines[at].startswith(b"diff --git "):
            raise Unreadable(f"line {at + 1} is not where a file's part starts")
        part = FilePart()
        files.append(part)
        at = _read_file(lines, at, part)
    return files


def _read_file(lines: list[bytes], at: int, part: FilePart) -> int:
    """Read one file's part starting at its `diff --git` line; where the next one starts."""
    header = _header_names(lines[at][len(b"diff --git ") :], at)
    at += 1
    while at < len(lines) and lines[at].startswith(_EXTENDED):
        _extended(lines[at], at, part)
        at += 1
    if header is not None:
        part.names[:0] = [header[0], header[1]]
    if at < len(lines) and lines[at] == b"GIT binary patch":
        part.binary = "`GIT binary patch`"
        at += 1
        sizes = []  # the forward patch's, then the reverse one's
        while at < len(lines) and not lines[at].startswith(b"diff --git "):
            size = re.match(rb"^(?:literal|delta) (\d{1,12})$", lines[at])
            sizes += [int(size[1])] if size is not None else []
            at += 1
        part.bytes_added += sizes[0] if sizes else 0
    elif at < len(lines) and lines[at].startswith(b"Binary files ") and lines[at].endswith(b" differ"):
        part.binary = "`Binary files … differ`"
        at += 1
    elif at < len(lines) and lines[at].startswith(b"--- "):
        if at + 1 >= len(lines) or not lines[at + 1].startswith(b"+++ "):
            raise Unreadable(f"line {at + 2} should be the `+++` line")
        for line, prefix in ((lines[at], b"a/"), (lines[at + 1], b"b/")):
            name = _side_name(line[4:], at)
            if name != b"/dev/null":
                part.names.append(_strip(name, prefix, at))
        at += 2
        while at < len(lines) and lines[at].startswith(b"@@ "):
            at = _read_hunk(lines, at, part)
    if not part.names:
        raise Unreadable(f"the file's part at line {at} names no path")
    part.names = [*dict.fromkeys(part.names)]
    return at


def _extended(line: bytes, at: int, part: FilePart) -> None:
    for prefix in (b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode "):
        if line.startswith(prefix):
            part.modes.append((prefix.decode().strip(), _ascii(line[len(prefix) :])))
            part.deleted_file |= prefix == b"deleted file mode "
            return
    for prefix in (b"rename from ", b"rename to ", b"copy from ", b"copy to "):
        if line.startswith(prefix):
            part.renamed = True
            part.names.append(_decode(_side_name(line[len(prefix) :], at), at))
            return
    if line.startswith(b"index "):
        match = _INDEX.match(line)
        if match is None:
            raise Unreadable(f"line {at + 1} is an `index` line git does not write")
        if match[3] is not None:
            part.modes.append(("index", match[3].decode()))
        return
    part.renamed |= line.startswith((b"similarity index ", b"dissimilarity index "))


def _read_hunk(lines: list[bytes], at: int, part: FilePart) -> int:
    match = _HUNK.match(lines[at])
    if match is None:
        raise Unreadable(f"line {at + 1} is not a hunk header")
    old = int(match[2]) if match[2] is not None else 1
    new = int(match[4]) if match[4] is not None else 1
    at += 1
    last = b""
    while old > 0 or new > 0:
        if at >= len(lines):
            raise Unreadable("the patch ends inside a hunk")
        line = lines[at]
        kind = line[:1]
        if kind in (b" ", b""):
            old, new = old - 1, new - 1
        elif kind == b"-":
            old -= 1
            part.deleted += 1
            part.removed_lines.append(line[1:].decode("utf-8", "replace"))
        elif kind == b"+":
            new -= 1
            part.added += 1
            part.bytes_added += len(line)  # the content and its new line
            text = line[1:].decode("utf-8", "replace")
            part.longest = max(part.longest, len(text))
            part.added_lines.append(text)
        elif kind == b"\\":
            part.bytes_added -= 1 if last == b"+" else 0
        else:
            raise Unreadable(f"line {at + 1} is not a line of a hunk")
        if old < 0 or new < 0:
            raise Unreadable(f"the hunk at line {at + 1} has more lines than its header says")
        last = kind
        at += 1
    if at < len(lines) and lines[at].startswith(b"\\"):
        part.bytes_added -= 1 if last == b"+" else 0
        at += 1
    return at


def _header_names(rest: bytes, at: int) -> tuple[str, str] | None:
    """The two names of `diff --git a/X b/X`; None when unquoted names with spaces make it ambiguous."""
    if rest.startswith(b'"'):
        first, end = _unquote(rest, 0, at)
        if rest[end : end + 1] != b" ":
            raise Unreadable(f"line {at + 1} has no second name")
        second = _side_name(rest[end + 1 :], at)
        return _strip(first, b"a/", at), _strip(second, b"b/", at)
    if rest.endswith(b'"') and b' "' in rest:
        first, _, quoted = rest.rpartition(b' "')
        return _strip(first, b"a/", at), _strip(_side_name(b'"' + quoted, at), b"b/", at)
    size = (len(rest) - 1) // 2
    first, second = rest[:size], rest[size + 1 :]
    if len(rest) % 2 == 1 and rest[size : size + 1] == b" " and first[2:] == second[2:]:
        return _strip(first, b"a/", at), _strip(second, b"b/", at)
    return None


def _side_name(text: bytes, at: int) -> bytes:
    """A name on a `---`/`+++` line or after a header: quoted, or plain up to git's trailing tab."""
    if text.startswith(b'"'):
        name, end = _unquote(text, 0, at)
        if text[end:] not in (b"", b"\t"):
            raise Unreadable(f"line {at + 1} has text after a quoted name")
        return name
    return text[:-1] if text.endswith(b"\t") else text


def _unquote(text: bytes, start: int, at: int) -> tuple[bytes, int]:
    """A C-quoted name as git writes it (`core.quotePath`): its bytes and where the quote ends."""
    out = bytearray()
    index = start + 1
    while index < len(text):
        byte = text[index : index + 1]
        if byte == b'"':
            return bytes(out), index + 1
        if byte != b"\\":
            out += byte
            index += 1
            continue
        escape = text[index + 1 : index + 2]
        if escape in _UNESCAPE:
            out.append(_UNESCAPE[escape])
            index += 2
        elif re.fullmatch(rb"[0-3][0-7][0-7]", text[index + 1 : index + 4]):
            out.append(int(text[index + 1 : index + 4], 8))
            index += 4
        else:
            raise Unreadable(f"line {at + 1} has an escape git does not write")
    raise Unreadable(f"line {at + 1} has an unclosed quote")


def _strip(name: bytes, prefix: bytes, at: int) -> str:
    if not name.startswith(prefix):
        raise Unreadable(f"line {at + 1} names a path without git's `{prefix.decode()}` prefix")
    return _decode(name[len(prefix) :], at)


def _decode(name: bytes, at: int) -> str:
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable(f"line {at + 1} names a path that is not UTF-8") from None


def _ascii(mode: bytes) -> str:
    return mode.decode("ascii", "replace")[:12]
