"""The one check of a proposed change, on the patch itself: what is committed and pushed is what passed here.

    found = check_patch(patch, protected=[...], max_diff_lines=200, max_bytes=65_536)
    found.ok, found.problems, found.files, found.added, found.deleted, found.bytes_added, found.sha256

`patch` is the output of `git diff --binary --no-renames --full-index <base> <change>` (`DIFF_OPTIONS`). The
same function checks it wherever it is handled, so a patch that crosses from one process or job to another
is checked again where it is applied; `sha256` ties the commit to the patch that was checked.

Pure: no git, no files, no clock. The patch is treated as hostile: anything this parser does not understand
is a problem (the change is refused), never skipped and never an exception. It is parsed here with the
standard library rather than with a diff library from PyPI (unidiff and whatthepatch were considered): those
are built to read or apply a diff leniently, while this check must refuse what it does not fully understand,
decode git's C-quoted paths byte for byte, and see git's extended headers (modes, `GIT binary patch`,
renames); git's patch format for this one command is small and specified (git-diff(1), "Generating patch
text with -p"), and a new runtime dependency in the fix path would be one more thing to vet and pin.

The rules, each problem naming the file and what is wrong:
- every path plain, relative and normalised: not absolute, no `..`, `.` or empty component, no backslash or
  control character, valid UTF-8, no `.git` component in any spelling git itself refuses on some system
  (`.GIT`, `.git.`, `git~1`, with ignorable Unicode); one path per file (no renames or copies);
- no protected path: ALWAYS_PROTECTED (root-anchored, like the setting's own patterns), TEST_CONFIG (the
  test configuration that runs code, in any folder), and the setting's; all compared without case;
- no symbolic link (mode 120000), no submodule (160000), no file made executable, no binary content;
- at most `max_diff_lines` lines added plus deleted and `max_bytes` bytes added; no added line longer than
  `max_line_chars` characters (minified or generated code is not a fix);
- no test deleted or skipped: no deleted test file (the test-file conventions of `grouping/inapp.py`), no
  removed test definition that is not added back somewhere in the patch, no added skip marker.

The rules' homes: the parser in `patchparse.py`, the path rules in `patchpaths.py`, test tampering in
`patchtests.py`; this module applies them and the size limits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from rounds_bot.fixing.patchparse import FilePart, Unreadable, parse
from rounds_bot.fixing.patchpaths import path_problems, protection, show
from rounds_bot.fixing.patchtests import is_test_file, test_problems

#: how rounds computes the patch it checks: explicit wherever git's configuration could change the output
DIFF_OPTIONS = (
    "--binary",
    "--no-renames",
    "--full-index",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--submodule=short",
    "--ignore-submodules=none",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
    "--diff-algorithm=myers",
    "-O/dev/null",
)
#: `git -c ...` for every command rounds runs on a patch: no fsmonitor command, octal-quoted paths
GIT_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.quotePath=true", "--no-replace-objects")
MAX_LINE_CHARS = 1_000


@dataclass(frozen=True)
class PatchCheck:
    """What a patch changes, and what is wrong with it (nothing, when `ok`)."""

    files: list[str]
    added: int
    deleted: int
    bytes_added: int
    problems: list[str]
    sha256: str

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.files)

    @property
    def lines(self) -> int:
        return self.added + self.deleted


def check_patch(
    patch: bytes,
    *,
    protected: Sequence[str],
    max_diff_lines: int,
    max_bytes: int,
    max_line_chars: int = MAX_LINE_CHARS,
) -> PatchCheck:
    """The files, size and problems of `patch` (`git diff --binary --no-renames --full-index`)."""
    problems: list[str] = []
    try:
        files = parse(patch)
    except Unreadable as error:
        files, problems = [], [f"the patch cannot be read: {error}"]
    for part in files:
        problems += _file_problems(part, list(protected), max_line_chars)
    problems += test_problems(files)
    added, deleted = sum(f.added for f in files), sum(f.deleted for f in files)
    bytes_added = sum(f.bytes_added for f in files)
    if added + deleted > max_diff_lines:
        problems.append(f"the change is {added + deleted} lines; at most {max_diff_lines} are allowed")
    if bytes_added > max_bytes:
        problems.append(f"the change adds {bytes_added:,} bytes; at most {max_bytes:,} are allowed")
    return PatchCheck(
        files=sorted({f.path for f in files if f.path}),
        added=added,
        deleted=deleted,
        bytes_added=bytes_added,
        problems=list(dict.fromkeys(problems)),
        sha256=hashlib.sha256(patch).hexdigest(),
    )


def _file_problems(part: FilePart, protected: list[str], max_line_chars: int) -> list[str]:
    shown = show(part.path)
    problems = [problem for name in dict.fromkeys(part.names) for problem in path_problems(name)]
    if len(set(part.names)) > 1 or part.renamed:
        others = ", ".join(f"`{show(name)}`" for name in dict.fromkeys(part.names))
        problems.append(f"the patch renames or copies a file ({others}); rounds' patches never do")
    for name in dict.fromkeys(part.names):
        rule = protection(name, protected)
        if rule is not None:
            problems.append(f"`{show(name)}` is protected ({rule})")
    modes = {mode for _, mode in part.modes}
    if "120000" in modes:
        problems.append(f"`{shown}` is a symbolic link")
    if "160000" in modes:
        problems.append(f"`{shown}` is a submodule (mode 160000)")
    for header, mode in part.modes:
        if mode not in ("100644", "100755", "120000", "160000"):
            problems.append(f"`{shown}` has an unknown file mode {mode}")
        elif mode == "100755" and header in ("new mode", "new file mode"):
            problems.append(f"`{shown}` is made executable (mode 100755)")
    if part.binary:
        problems.append(f"`{shown}` is a binary file ({part.binary})")
    if part.longest > max_line_chars:
        problems.append(
            f"`{shown}` adds a line of {part.longest:,} characters; at most {max_line_chars:,} "
            "(minified or generated code is not a fix)"
        )
    if part.deleted_file and is_test_file(part.path):
        problems.append(f"`{shown}` is a test file and the change deletes it")
    return problems
