"""From a frame as the runtime printed it to a file in the repository.

Runtimes print paths where the code ran (`/srv/app/checkout/pricing.py`, `/app/.venv/.../site-packages/x.py`,
`/build/internal/labels/batcher.go`) or, for Java-like runtimes, a class and a bare file name
(`com.acme.inventory.Warehouse` in `Warehouse.java`). The mapping is inferred from the checkout: the
repository file whose path is the longest suffix of the frame's path wins (for Java, the package as folders
plus the file name, wherever the source root is: `src/main/java/...`, `app/src/...`; for Dart, a `package:`
URI as the `lib/` folder of a folder of the package's name, so a repository of one package matches by `lib/`
and one of several by the package's folder: `package:shop/cart.dart` is `lib/cart.dart` or
`packages/shop/lib/cart.dart`). A frame that maps to no file, or to more than one equally well, stays
unmapped. Explicit `runtime-prefix=repo-prefix` rules (the `ROUNDS_CODE_MAPPINGS` setting) are tried first.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rounds_bot.errors import ConfigError
from rounds_bot.grouping.stacktrace.model import Frame

# Installed code is never the repository's, even when a file of the same name exists there.
_INSTALLED = (
    "site-packages/",
    "dist-packages/",
    "node_modules/",
    "/usr/lib/",
    "/usr/local/go/src/",
    "/rubygems/",
)
_JAVA_LIKE = (".java", ".kt", ".scala", ".groovy", ".cs")
#: a Dart library's URI: `package:shop/cart.dart` is `lib/cart.dart` of the package `shop`
_DART_PACKAGE = re.compile(r"^package:(?P<name>[\w.]{1,256})/")
#: frames' paths a map remembers mapped (cleared whole when full): a round's frames name a few files
#: again and again (4,182 answers worked out for 100,000 records with 2,000 bugs, 4,390 with this size)
FOUND_MEMO_SIZE = 2_048


@dataclass(frozen=True)
class PathRule:
    """`runtime_prefix` in a frame's path is `repo_prefix` in the repository."""

    runtime_prefix: str
    repo_prefix: str

    @classmethod
    def parse(cls, text: str) -> PathRule:
        runtime, sep, repo = text.partition("=")
        if not sep or not runtime.strip():
            raise ConfigError(
                f"code mapping {text!r} is not of the form RUNTIME_PREFIX=REPO_PREFIX",
                hint="e.g. ROUNDS_CODE_MAPPINGS='/srv/app/=src/,/usr/src/app/='",
            )
        return cls(runtime.strip(), repo.strip().lstrip("/"))


class CodeMap:
    """The repository's files, indexed by name, and the rules that map runtime paths onto them."""

    def __init__(self, files: list[str], rules: tuple[PathRule, ...] = ()) -> None:
        self.files = frozenset(files)
        self.rules = rules
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in files:
            self._by_name[PurePosixPath(path).name].append(path)
        self._found: dict[tuple[str | None, str | None], str | None] = {}

    @classmethod
    def of_checkout(cls, checkout: Path, rules: tuple[PathRule, ...] = ()) -> CodeMap:
        """The files git tracks in `checkout` (none when it is not a git checkout)."""
        try:
            listed = subprocess.run(
                ["git", "ls-files", "-z"], cwd=checkout, capture_output=True, timeout=30, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return cls([], rules)
        return cls([p for p in listed.stdout.decode("utf-8", "replace").split("\0") if p], rules)

    def repo_path(self, frame: Frame) -> str | None:
        """The repository file the frame ran, or None. Remembered per printed path (and module, which
        places a Java-like bare file name): the answer depends on them and on the files and rules, which
        never change, so a remembered one cannot go stale; a round's frames name the same files again and
        again."""
        key = (frame.filename, frame.module)
        if key not in self._found:
            if len(self._found) >= FOUND_MEMO_SIZE:
                self._found.clear()
            self._found[key] = self._repo_path(frame)
        return self._found[key]

    def _repo_path(self, frame: Frame) -> str | None:
        printed = (frame.filename or "").replace("\\", "/").removeprefix("file://")
        for rule in self.rules:
            if printed.startswith(rule.runtime_prefix):
                candidate = rule.repo_prefix + printed[len(rule.runtime_prefix) :]
                return candidate if candidate in self.files else None
        if not printed or any(marker in printed for marker in _INSTALLED):
            return None
        printed = _DART_PACKAGE.sub(r"\g<name>/lib/", printed)
        name = printed.rstrip("/").rpartition("/")[2]
        if name not in ("", ".", "..") and name not in self._by_name:
            # the file name a suffix match ends with (`_wanted_suffix`'s last part, read here without
            # splitting the path) names no file of the checkout: no candidate, as the match would find
            return None
        wanted = _wanted_suffix(frame, printed)
        return self._longest_suffix_match(wanted)

    def _longest_suffix_match(self, wanted: tuple[str, ...]) -> str | None:
        if not wanted:
            return None
        best: list[str] = []
        best_depth = 0
        for candidate in self._by_name.get(wanted[-1], []):
            depth = _common_suffix(PurePosixPath(candidate).parts, wanted)
            if depth > best_depth:
                best, best_depth = [candidate], depth
            elif depth == best_depth:
                best.append(candidate)
        # A file name alone is weak evidence (every project has a `config.py`): a path of two parts or more
        # must agree on its folder too; and two equally good candidates are no answer.
        if len(best) != 1 or best_depth < min(2, len(wanted)):
            return None
        return best[0]


def _wanted_suffix(frame: Frame, printed: str) -> tuple[str, ...]:
    """The path parts to look for: the printed path, or for a Java-like bare file name, its package."""
    parts = tuple(part for part in PurePosixPath(printed).parts if part not in ("/", ".", ".."))
    if len(parts) == 1 and printed.endswith(_JAVA_LIKE) and frame.module and "." in frame.module:
        package = frame.module.split(".")[:-1]
        return (*package, parts[0])
    return parts


def _common_suffix(candidate: tuple[str, ...], wanted: tuple[str, ...]) -> int:
    depth = 0
    for mine, theirs in zip(reversed(candidate), reversed(wanted), strict=False):
        if mine != theirs:
            break
        depth += 1
    return depth
