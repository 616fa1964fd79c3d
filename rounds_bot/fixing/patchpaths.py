"""Which paths a fix may touch: plain, relative, normalised, no `.git` in any spelling, nothing protected.

path_problems("a/../b")            # why a path is not plain (none when it is)
protection(".github/x.yml", [...])  # the rule that protects a path, or None
show(text)                          # a path or name as a problem's sentence can quote it
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

#: never edited by a fix, whatever the settings say: CI, git, and rounds' and the CLI's own configuration
ALWAYS_PROTECTED = (".github/", ".git", ".rounds/", ".claude/", ".mcp.json", ".gitmodules")

#: paths from the repository's root (like ALWAYS_PROTECTED) that decide who must review a change. GitHub reads
#: the first CODEOWNERS it finds in `.github/` (protected whole above), at the root, then in `docs/` (GitHub's
#: "About code owners"): a fix that edits it, once merged, changes who must review every later change
REVIEW_CONFIG: tuple[tuple[str, str], ...] = (
    ("CODEOWNERS", "it names who must review a change"),
    ("docs/CODEOWNERS", "it names who must review a change"),
)

#: file names (globs; one with a folder matches a path's end), in any folder, that are test, build, install
#: or CI configuration: code that runs when the tests or a workflow run, what an install fetches and runs, or
#: what decides which tests run. A fix does not need them; a steered model would use them.
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
    # Python's lock and requirement files: what the job's install step (and every later install) fetches, from
    # where (`--index-url`, a URL, a `git+` requirement), and runs (an sdist's build); like package-lock.json
    ("requirements*.txt", "pip installs what it names, from where it says"),
    ("requirements/*.txt", "pip installs what it names, from where it says"),
    ("uv.lock", "uv installs what it names, from where it says"),
    ("poetry.lock", "poetry installs what it names, from where it says"),
    ("Pipfile", "pipenv installs what it names, from where it says"),
    ("Pipfile.lock", "pipenv installs what it names, from where it says"),
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
    # an action of the repository's own: a workflow runs it (`uses: ./` for the root's, `uses: ./path` for
    # another folder's) with the job's token and the secrets it is given, on the fix's own branch too
    ("action.yml", "a workflow runs it (`uses: ./…`), with the job's secrets"),
    ("action.yaml", "a workflow runs it (`uses: ./…`), with the job's secrets"),
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

#: code points HFS+ ignores in names, so `.g\u200cit` is `.git` there (git's own `is_hfs_dotgit`)
_IGNORABLE = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF], None
)


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
    from the repository's root), REVIEW_CONFIG (from the root), then TEST_CONFIG (file names in any folder);
    without case."""
    rule = protected_by(path, [*ALWAYS_PROTECTED, *protected])
    if rule is not None:
        return rule
    for pattern, why in REVIEW_CONFIG:
        if protected_by(path, [pattern]) is not None:
            return f"{pattern}: {why}"
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
