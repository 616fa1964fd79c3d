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
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from rounds_bot.grouping.inapp import is_test_code
from rounds_bot.grouping.stacktrace.model import Runtime

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

#: never edited by a fix, whatever the settings say: CI, git, and rounds' and the CLI's own configuration
ALWAYS_PROTECTED = (".github/", ".git", ".rounds/", ".claude/", ".mcp.json", ".gitmodules")

#: file names (globs; one with a folder matches a path's end), in any folder, that are test or build
#: configuration: code that runs when the tests run, or that decides which tests run. A fix does not need
#: them; a steered model would use them.
TEST_CONFIG: tuple[tuple[str, str], ...] = (
    # pytest imports every conftest.py on the way to a test: plain code, run by the test command
    ("conftest.py", "pytest runs it"),
    # pytest's configuration files: `addopts = -p plugin` imports code, `python_files`, `testpaths` and
    # `collect_ignore` decide which tests run; setup.cfg and pyproject.toml also hold the build's hooks
    ("pytest.ini", "pytest's configuration"),
    ("tox.ini", "tox's commands and pytest's configuration"),
    ("setup.cfg", "pytest's and setuptools' configuration"),
    ("pyproject.toml", "pytest's configuration and the build backend"),
    # Python run by the test or install command itself
    ("noxfile.py", "nox runs it"),
    ("setup.py", "an install runs it"),
    # executed at interpreter start: `import` lines of a .pth in a site folder, and the site hooks
    ("*.pth", "Python runs its `import` lines at start-up"),
    ("sitecustomize.py", "Python imports it at start-up"),
    ("usercustomize.py", "Python imports it at start-up"),
    # npm: `scripts` (`test`, `pretest`, `posttest`, `prepare`) are commands; the lock file decides which
    # packages (and their install scripts) are installed; .npmrc can set `node-options=--require ...`
    ("package.json", "npm runs its scripts"),
    ("package-lock.json", "npm installs what it names, with their install scripts"),
    ("npm-shrinkwrap.json", "npm installs what it names, with their install scripts"),
    (".npmrc", "npm's configuration (node options, script shell)"),
    # JavaScript test runners load these as code
    ("jest.config.*", "jest runs it"),
    ("vitest.config.*", "vitest runs it"),
    ("vite.config.*", "vitest runs it"),
    (".mocharc.*", "mocha's `require`"),
    ("karma.conf.*", "karma runs it"),
    # make's recipes are commands (`make test`)
    ("Makefile", "make runs its recipes"),
    ("makefile", "make runs its recipes"),
    ("GNUmakefile", "make runs its recipes"),
    # git: filter, diff and merge drivers; `-diff` and `linguist-generated` hide a change from review;
    # .gitignore hides files from `git status`, so from rounds' checks, while the tests still run them
    (".gitattributes", "git's drivers, and what a review shows"),
    (".gitignore", "it hides files from rounds' checks"),
    # run by pre-commit (and pre-commit.ci on the pull request) and by direnv on a developer's machine
    (".pre-commit-config.yaml", "pre-commit runs its hooks"),
    (".envrc", "direnv runs it"),
    # JVM: plugins and tasks run at `gradle test` / `mvn test`; the wrapper downloads and runs any build
    ("build.gradle", "gradle runs it"),
    ("build.gradle.kts", "gradle runs it"),
    ("settings.gradle", "gradle runs it"),
    ("settings.gradle.kts", "gradle runs it"),
    ("gradle.properties", "gradle's JVM options"),
    ("gradle-wrapper.properties", "it names the gradle that runs"),
    ("pom.xml", "maven runs its plugins"),
    (".mvn/extensions.xml", "maven loads its extensions"),
    (".mvn/jvm.config", "maven's JVM options"),
    (".mvn/maven.config", "maven's options"),
    # Rust: build.rs runs before the tests compile; Cargo.toml names build scripts and patched crates;
    # .cargo/config.toml can set a `runner` that every test binary is run through
    ("Cargo.toml", "cargo runs its build scripts"),
    ("build.rs", "cargo runs it before the tests"),
    (".cargo/config.toml", "cargo's `runner` runs every test binary"),
    (".cargo/config", "cargo's `runner` runs every test binary"),
    # Go: a `toolchain` line makes `go test` fetch and run another Go; `replace` swaps the code compiled
    ("go.mod", "it picks the Go toolchain and the code compiled"),
    # Ruby, PHP, Elixir, .NET: code or commands run by the test command
    ("Gemfile", "bundler runs it"),
    ("Rakefile", "rake runs it"),
    (".rspec", "rspec's `--require`"),
    ("composer.json", "composer runs its scripts"),
    ("phpunit.xml*", "phpunit runs its bootstrap"),
    ("mix.exs", "mix runs it"),
    ("Directory.Build.*", "msbuild runs its targets"),
)

#: how each runtime's source files end, to ask `grouping/inapp.py` whether a deleted file is a test
_RUNTIMES: dict[str, Runtime] = {
    **dict.fromkeys(("py",), "python"),
    **dict.fromkeys(("js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"), "node"),
    **dict.fromkeys(("go",), "go"),
    **dict.fromkeys(("rb",), "ruby"),
    **dict.fromkeys(("rs",), "rust"),
    **dict.fromkeys(("php",), "php"),
    **dict.fromkeys(("ex", "exs"), "elixir"),
    **dict.fromkeys(("java", "kt", "kts", "scala", "groovy"), "java"),
    **dict.fromkeys(("cs", "fs", "vb"), "dotnet"),
}

#: a test definition on a line: (what it is, its name when the line names it)
_TEST_DEFINITIONS = (
    ("def test", re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(")),  # pytest, unittest
    ("func Test", re.compile(r"^\s*func\s+(Test\w*)\s*\(")),  # go test
    ("it(", re.compile(r"(?<![\w.$])(?:it|test|specify)\s*\(\s*(['\"`])(.*?)\1")),  # jest, mocha, vitest
    ("@Test", re.compile(r"^\s*@Test\b()")),  # JUnit
    ("#[test]", re.compile(r"^\s*#\[(?:tokio::)?test\b()")),  # cargo test
)
#: a marker that skips a test (or every other test, `.only`), or makes a failure count as a pass
_SKIP_MARKERS = re.compile(
    r"@pytest\.mark\.(?:skip|skipif|xfail)\b"
    r"|\bpytest\.(?:skip|xfail|importorskip)\s*\("
    r"|@unittest\.(?:skip\w*|expectedFailure)\b"
    r"|\.skipTest\s*\(|\braise\s+(?:unittest\.)?SkipTest\b"
    r"|^\s*__test__\s*=\s*False\b"
    r"|\b(?:it|test|describe|context|suite|specify)\.(?:skip|only)\b"
    r"|\bthis\.skip\s*\("
    r"|(?<![\w.$])(?:xit|xtest|xdescribe|xcontext|fit|fdescribe)\s*\("
    r"|@Disabled\w*|@Ignore\b|\[Ignore\b|\bSkip\s*=\s*\""
    r"|\b(?:t|b|tb)\.Skip(?:f|Now)?\s*\("
    r"|#\[ignore\b"
    r"|\bmarkTest(?:Skipped|Incomplete)\s*\("
)
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
#: code points HFS+ ignores in names, so `.g\u200cit` is `.git` there (git's own `is_hfs_dotgit`)
_IGNORABLE = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF], None
)
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


class Unreadable(Exception):
    """The patch is not what `git diff` writes."""


@dataclass
class _File:
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
        files = _parse(patch)
    except Unreadable as error:
        files, problems = [], [f"the patch cannot be read: {error}"]
    for part in files:
        problems += _file_problems(part, list(protected), max_line_chars)
    problems += _test_problems(files)
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


# --- the rules ------------------------------------------------------------------------------------------
def _file_problems(part: _File, protected: list[str], max_line_chars: int) -> list[str]:
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


def _test_problems(files: list[_File]) -> list[str]:
    """Test definitions removed and not added back anywhere in the patch; skip markers added."""
    removed: Counter[tuple[str, str]] = Counter()
    added: Counter[tuple[str, str]] = Counter()
    for part in files:
        if not (part.deleted_file and is_test_file(part.path)):  # reported as a deleted test file
            removed.update(_definitions(part.removed_lines))
        added.update(_definitions(part.added_lines))
    missing = removed - added
    problems = []
    for part in files:
        for kind, name in _definitions(part.removed_lines):
            if missing[(kind, name)] > 0 and not (part.deleted_file and is_test_file(part.path)):
                missing[(kind, name)] -= 1
                what = f"the test `{show(name)}`" if name else f"a test (`{kind}`)"
                problems.append(f"`{show(part.path)}` removes {what} and does not add it back")
        markers = Counter(_markers(part.added_lines)) - Counter(_markers(part.removed_lines))
        problems += [f"`{show(part.path)}` adds a skip marker: `{marker}`" for marker in markers]
    return problems


def _definitions(lines: list[str]) -> list[tuple[str, str]]:
    found = []
    for line in lines:
        for kind, pattern in _TEST_DEFINITIONS:
            match = pattern.search(line)
            if match is not None:
                found.append((kind, match.group(match.lastindex or 0)[:120]))
                break
    return found


def _markers(lines: list[str]) -> list[str]:
    return [match.group(0).strip()[:40] for line in lines for match in _SKIP_MARKERS.finditer(line)]


def is_test_file(path: str) -> bool:
    """A test by the conventions of the runtimes' test runners (`grouping/inapp.py`), from its path."""
    stem, dot, extension = path.rpartition(".")
    runtime = _RUNTIMES.get(extension.lower()) if dot else None
    return runtime is not None and is_test_code(stem.replace("/", "."), path, runtime)


def path_problems(path: str) -> list[str]:
    """Why `path` is not a plain, relative, normalised path inside the repository (none when it is)."""
    shown = show(path)
    if not path:
        return ["the patch names an empty path"]
    if path.startswith("/"):
        return [f"`{shown}` is an absolute path"]
    parts = path.split("/")
    if ".." in parts:
        return [f"`{shown}` leaves the repository (`..`)"]
    if "\\" in path or any(ord(c) < 0x20 or ord(c) == 0x7F for c in path) or "" in parts or "." in parts:
        return [f"`{shown}` is not a plain normalised path"]
    for part in parts:
        if _is_dot_git(part):
            return [f"`{shown}` has a `.git` component (`{show(part)}`)"]
    return []


def _is_dot_git(part: str) -> bool:
    """`.git` as git refuses it on any system: any case, NTFS's trailing dots and spaces and short name,
    HFS+'s ignorable code points."""
    bare = part.translate(_IGNORABLE).rstrip(". ").casefold()
    return bare in (".git", "git~1")


def protection(path: str, protected: list[str]) -> str | None:
    """The rule that protects `path`, if any: ALWAYS_PROTECTED and `protected` (folders, files and globs
    from the repository's root), then TEST_CONFIG (file names in any folder); without case."""
    rule = protected_by(path, [*ALWAYS_PROTECTED, *protected])
    if rule is not None:
        return rule
    parts = path.casefold().split("/")
    for pattern, why in TEST_CONFIG:
        wanted = pattern.casefold().split("/")
        tail = parts[-len(wanted) :]
        if len(tail) == len(wanted) and all(map(fnmatch.fnmatchcase, tail, wanted)):
            return f"{pattern}: {why}"
    return None


def protected_by(path: str, patterns: Sequence[str]) -> str | None:
    """The first pattern that protects `path`: a folder (`docs/`), a file, or a glob (`*.lock`), from the
    repository's root, without case (`.GitHub/` is `.github/` on the systems people check out on)."""
    folded = path.casefold()
    for pattern in patterns:
        bare = pattern.rstrip("/").casefold()
        if folded == bare or folded.startswith(bare + "/") or fnmatch.fnmatchcase(folded, pattern.casefold()):
            return pattern
    return None


def show(text: str) -> str:
    """`text` for a problem's sentence: control characters, backticks and odd bytes escaped, cut short."""
    escaped = "".join(
        c if c.isprintable() and c not in "`\\" else c.encode("unicode_escape").decode("ascii") for c in text
    ).replace("`", "\\x60")
    return escaped if len(escaped) <= 200 else escaped[:199] + "…"


# --- the parser ---------------------------------------------------------------------------------------
def _parse(patch: bytes) -> list[_File]:
    lines = patch.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif patch:
        raise Unreadable("it does not end with a new line")
    files: list[_File] = []
    at = 0
    while at < len(lines):
        if not lines[at].startswith(b"diff --git "):
            raise Unreadable(f"line {at + 1} is not where a file's part starts")
        part = _File()
        files.append(part)
        at = _read_file(lines, at, part)
    return files


def _read_file(lines: list[bytes], at: int, part: _File) -> int:
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


def _extended(line: bytes, at: int, part: _File) -> None:
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


def _read_hunk(lines: list[bytes], at: int, part: _File) -> int:
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
