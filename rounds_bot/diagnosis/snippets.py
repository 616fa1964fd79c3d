"""Source snippets from the checkout, read at the frames a stack trace points at.

A trace prints paths of the machine it ran on (often absolute, or only a file name for the JVM);
`CheckoutIndex` matches them to the checkout's files by their longest common path suffix, and a
path that matches several files equally well is left out. Each snippet is a few numbered lines
around the frame's line, crash site first. (The model reads the same checkout with its own tools.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from pydantic import Field

from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.models import Frozen

MAX_SNIPPETS = 6
SNIPPET_RADIUS = 4
#: files indexed in a checkout to resolve frame paths; deeper trees resolve fewer frames
MAX_INDEXED_FILES = 50_000
_SKIPPED_DIRECTORIES = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist"}


class SourceSnippet(Frozen):
    path: str = Field(description="relative to the checkout root")
    line: int
    function: str | None = None
    text: str = Field(description="numbered source lines, the frame's line marked with >")


class FrameRef(Frozen):
    """A place in the code a trace points at, before it is resolved against the checkout."""

    path: str
    line: int
    function: str | None = None
    module: str | None = None


_SIMPLE_FRAME_PATTERNS = (
    re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>\S+))?'),
    re.compile(r"at (?P<function>[\w$.<>]+)\((?P<path>[\w$.-]+\.\w+):(?P<line>\d+)\)"),
    re.compile(r"(?P<path>(?:[\w.@~+-]*/)*[\w.@~+-]+\.\w{1,6}):(?P<line>\d+)"),
)


def parse_frames(stacktrace: str | None) -> list[FrameRef]:
    """The frames of a trace, crash site first, with a path and a line each.

    Uses the grouping engine's per-runtime parsers (which already put the crash site first for
    every runtime, Python included); a trace they do not understand falls back to
    plain `path:line`, `File "x", line N` and `(File.java:N)` patterns.
    """
    if not stacktrace:
        return []
    parsed = parse_stacktrace(stacktrace)
    frames: list[FrameRef] = []
    if parsed is not None:
        for exception in parsed.exceptions:
            for frame in exception.frames:
                if frame.filename and frame.lineno and frame.in_app is not False:
                    frames.append(
                        FrameRef(
                            path=frame.filename,
                            line=frame.lineno,
                            function=frame.function,
                            module=frame.module,
                        )
                    )
        if frames:
            return frames
    return _simple_frames(stacktrace)


def _simple_frames(stacktrace: str) -> list[FrameRef]:
    frames: list[FrameRef] = []
    for raw_line in stacktrace.splitlines():
        for pattern in _SIMPLE_FRAME_PATTERNS:
            match = pattern.search(raw_line)
            if match:
                groups = match.groupdict()
                frames.append(
                    FrameRef(
                        path=groups["path"],
                        line=int(groups["line"]),
                        function=groups.get("function"),
                    )
                )
                break
    return frames


class CheckoutIndex:
    """The files of a checkout, for matching the paths a trace prints (often absolute, from the
    machine it ran on) to files in the repository by their longest common suffix."""

    def __init__(self, root: Path, files: Sequence[PurePosixPath]) -> None:
        self.root = root
        self._by_name: dict[str, list[PurePosixPath]] = {}
        for file in files:
            self._by_name.setdefault(file.name, []).append(file)

    @classmethod
    def scan(cls, root: Path) -> CheckoutIndex:
        files: list[PurePosixPath] = []
        if root.is_dir():
            for directory, subdirectories, names in os.walk(root):
                subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRECTORIES)
                relative = PurePosixPath(Path(directory).relative_to(root).as_posix())
                files.extend(relative / name for name in sorted(names))
                if len(files) >= MAX_INDEXED_FILES:
                    break
        return cls(root, files[:MAX_INDEXED_FILES])

    def resolve(self, frame: FrameRef) -> PurePosixPath | None:
        """The checkout file `frame` points at, or None when no file matches unambiguously."""
        wanted = _frame_path_parts(frame)
        if not wanted:
            return None
        candidates = self._by_name.get(wanted[-1], [])
        best: list[PurePosixPath] = []
        best_score = 0
        for candidate in candidates:
            score = _common_suffix(candidate.parts, wanted)
            if score > best_score:
                best, best_score = [candidate], score
            elif score == best_score:
                best.append(candidate)
        if len(best) != 1:
            return None  # a bare file name shared by several files proves nothing
        return best[0]


def _frame_path_parts(frame: FrameRef) -> tuple[str, ...]:
    path = frame.path.replace("\\", "/")
    parts = tuple(part for part in PurePosixPath(path).parts if part not in {"/", ".", ""})
    if len(parts) == 1 and frame.module and "." in frame.module and "/" not in frame.module:
        # A JVM frame prints only `Foo.java`; its class names the package directories.
        package = frame.module.split(".")[:-1]
        parts = (*package, parts[0])
    return parts


def _common_suffix(left: tuple[str, ...], right: tuple[str, ...]) -> int:
    count = 0
    for a, b in zip(reversed(left), reversed(right), strict=False):
        if a != b:
            break
        count += 1
    return count


def source_snippets(stacktrace: str | None, checkout: Path) -> list[SourceSnippet]:
    """Up to MAX_SNIPPETS snippets of `checkout` at the frames of `stacktrace`, crash site first."""
    frames = parse_frames(stacktrace)
    if not frames:
        return []
    index = CheckoutIndex.scan(checkout)
    snippets: list[SourceSnippet] = []
    seen: set[tuple[str, int]] = set()
    for frame in frames:
        resolved = index.resolve(frame)
        if resolved is None or (str(resolved), frame.line) in seen:
            continue
        text = _read_snippet(checkout / resolved, frame.line)
        if text is None:
            continue
        seen.add((str(resolved), frame.line))
        snippets.append(
            SourceSnippet(path=str(resolved), line=frame.line, function=frame.function, text=text)
        )
        if len(snippets) == MAX_SNIPPETS:
            break
    return snippets


def _read_snippet(path: Path, line: int) -> str | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if not 1 <= line <= len(lines):
        return None
    first = max(1, line - SNIPPET_RADIUS)
    last = min(len(lines), line + SNIPPET_RADIUS)
    width = len(str(last))
    numbered = [
        f"{'>' if number == line else ' '} {number:>{width}} | {lines[number - 1]}"
        for number in range(first, last + 1)
    ]
    return "\n".join(numbered)
