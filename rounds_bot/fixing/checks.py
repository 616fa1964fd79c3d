"""rounds checks the model's result itself, before any test runs or anything is committed.

    guard   = Guard.before(checkout, tree)       what must not change: the checkout, the worktree's `.git`
                                                 file, git's own files, files that symlinks in the worktree
                                                 point at, files git ignores (the tests would run them, a
                                                 commit would not carry them)
    checked = check_changes(tree, guard, ...)    everything changed is staged and written as a tree; the
                                                 patch from the base to that tree is checked by
                                                 `patchcheck.check_patch` (paths, protected paths, links,
                                                 binaries, sizes in lines and bytes, deleted or skipped tests)
                                                 and its sha256 recorded
    guard.after_tests(tree)                      git's own files as before the tests (put back if not)

The commit of exactly the checked patch is made in the publishing stage, in a fresh repository
(`freshclone.commit_patch`), its patch hashed again and refused unless it is the checked one.

The CLI already refuses writes outside the worktree; these checks do not rely on it. Every git command here
runs with no fsmonitor, no replace objects, no hooks and no token in its environment.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from rounds_bot.errors import FixError
from rounds_bot.fixing.git import NO_HOOKS, TIMEOUT_SECONDS, Git
from rounds_bot.fixing.patchcheck import DIFF_OPTIONS, GIT_CONFIG, check_patch
from rounds_bot.fixing.patchpaths import ALWAYS_PROTECTED, protected_by, show
from rounds_bot.fixing.worktree import Worktree
from rounds_bot.models import Frozen

__all__ = [
    "ALWAYS_PROTECTED",
    "Checked",
    "Guard",
    "check_changes",
    "protected_by",
]

#: ROUNDS_FIX_MAX_DIFF_BYTES' default
DEFAULT_MAX_DIFF_BYTES = 65_536
#: git's own files that configure what git runs or reads, relative to the common git folder; a change to
#: one (`core.fsmonitor`, `remote.origin.url = ext::...`, `objects/info/alternates`) runs code or swaps
#: content in rounds' later git commands
_COMMON_FILES = (
    "config",
    "config.worktree",
    "info/attributes",
    "info/exclude",
    "info/grafts",
    "objects/info/alternates",
    "shallow",
)
_WORKTREE_FILES = ("config.worktree", "commondir", "gitdir")
#: what rounds' git commands here inherit: where git and its helpers are and the user's own configuration;
#: never a token (`GIT_CONFIG_COUNT` and the rest of `remote_auth_env` are for fetch and push only)
_GIT_ENVIRONMENT = (
    "PATH",
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
)


class Checked(Frozen):
    """What the model changed, and what is wrong with it (nothing, when `ok`)."""

    files: list[str] = Field(default_factory=list)
    added: int = 0
    deleted: int = 0
    bytes_added: int = 0
    problems: list[str] = Field(default_factory=list)
    base: str = Field(default="", description="the commit the patch starts from")
    tree: str = Field(default="", description="the tree that was checked: the commit's tree")
    patch_sha256: str = Field(
        default="", description="sha256 of the checked patch (`patchcheck.DIFF_OPTIONS`)"
    )

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.files)

    @property
    def lines(self) -> int:
        return self.added + self.deleted


@dataclass
class Guard:
    """Fingerprints of what lies outside the model's reach, taken before it runs."""

    checkout: str
    dot_git: str
    outside_targets: dict[str, str] = field(default_factory=dict)
    git_files: dict[Path, bytes | None] = field(default_factory=dict)
    ignored: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def before(cls, checkout: Git, tree: Worktree) -> Guard:
        return cls(
            _checkout_state(checkout),
            _digest(tree.path / ".git"),
            _outside_targets(tree.path),
            {path: _read(path) for path in _git_files(tree)},
            _ignored(tree),
        )

    def breaches(self, checkout: Git, tree: Worktree) -> list[str]:
        found = self._git_files_changed(tree)  # first: the git commands below would read them
        if _checkout_state(checkout) != self.checkout:
            found.append(f"files changed in the checkout {checkout.cwd}, outside the worktree")
        if _digest(tree.path / ".git") != self.dot_git:
            found.append("the worktree's `.git` file was changed")
        for link, digest in self.outside_targets.items():
            if _digest(Path(os.path.realpath(tree.path / link))) != digest:
                found.append(f"a file outside the worktree was changed through the symlink `{link}`")
        for path, stat in _ignored(tree).items():
            if self.ignored.get(path) != stat:
                found.append(f"`{show(path)}` is ignored by git: the tests would run it, a commit would not")
        return found

    def after_tests(self, tree: Worktree) -> list[str]:
        """git's own files and the worktree's `.git` file as they were before the tests; each one the tests
        changed is named and put back (before any git command reads it)."""
        return self._git_files_changed(tree)

    def _git_files_changed(self, tree: Worktree) -> list[str]:
        found = []
        for path, content in self.git_files.items():
            if _read(path) != content:
                _put_back(path, content)
                if path == tree.path / ".git":
                    found.append("the worktree's `.git` file was changed; rounds put it back")
                else:
                    found.append(f"git's own `{_label(path)}` was changed; rounds put it back")
        return found


def check_changes(
    tree: Worktree,
    guard: Guard,
    checkout: Git,
    *,
    protected: list[str],
    max_diff_lines: int,
    max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES,
) -> Checked:
    """The changed paths and their size; problems that forbid committing them."""
    problems = guard.breaches(checkout, tree)
    if not tree.git.changed_paths():
        return Checked(problems=problems)
    base = _git(tree.git, "rev-parse", "--verify", "HEAD^{commit}").decode().strip()
    _git(tree.git, "add", "--all")
    staged = _git(tree.git, "write-tree").decode().strip()
    found = check_patch(
        patch(tree.git, base, staged),
        protected=protected,
        max_diff_lines=max_diff_lines,
        max_bytes=max_diff_bytes,
    )
    problems += [problem for problem in found.problems if problem not in problems]
    return Checked(
        files=found.files,
        added=found.added,
        deleted=found.deleted,
        bytes_added=found.bytes_added,
        problems=problems,
        base=base,
        tree=staged,
        patch_sha256=found.sha256,
    )


def patch(git: Git, base: str, change: str) -> bytes:
    """The patch from `base` to `change` (commits or trees) that `patchcheck.check_patch` reads."""
    return _git(git, "diff", *DIFF_OPTIONS, base, change, "--")


def _git(git: Git, *args: str, stdin: bytes | None = None) -> bytes:
    """`git args` in `git.cwd`, as bytes, with no fsmonitor, hooks or replace objects, and an environment
    with nothing secret in it: what git needs to find its programs and the user's configuration."""
    env = {name: os.environ[name] for name in _GIT_ENVIRONMENT if name in os.environ}
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "GIT_PAGER": "cat"})
    try:
        done = subprocess.run(
            ["git", *NO_HOOKS, *GIT_CONFIG, *args],
            cwd=git.cwd,
            env=env,
            input=stdin,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise FixError(f"`git {' '.join(args[:3])}` could not run in {git.cwd}: {error}") from error
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise FixError(
            f"`git {' '.join(args[:3])}` failed in {git.cwd}: {said[-1] if said else done.returncode}"
        )
    return done.stdout


def _git_files(tree: Worktree) -> list[Path]:
    """The worktree's `.git` file and git's own files that say what git runs or reads."""
    listed = _git(tree.git, "rev-parse", "--git-dir", "--git-common-dir").decode().splitlines()
    git_dir, common = (tree.path / line.strip() for line in listed[:2])
    return [
        tree.path / ".git",
        *(common / name for name in _COMMON_FILES),
        *(git_dir / name for name in _WORKTREE_FILES),
    ]


def _label(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[parts.index(".git") :]) if ".git" in parts else path.name


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _put_back(path: Path, content: bytes | None) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            return  # never a folder before: `_read` found a file or nothing
        if content is None:
            path.unlink(missing_ok=True)
        else:
            path.unlink(missing_ok=True)
            path.write_bytes(content)
    except OSError as error:
        raise FixError(f"git's own {path} was changed and cannot be put back: {error}") from error


def _ignored(tree: Worktree) -> dict[str, tuple[int, ...]]:
    """Files git ignores in the worktree, each with what changes when anyone writes it (ctime included)."""
    listed = _git(tree.git, "ls-files", "-z", "--others", "--ignored", "--exclude-standard")
    found: dict[str, tuple[int, ...]] = {}
    for raw in listed.split(b"\0"):
        if raw:
            path = raw.decode("utf-8", "surrogateescape")
            try:
                stat = os.lstat(tree.path / path)
            except OSError:
                continue
            found[path] = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_mode)
    return found


def _checkout_state(checkout: Git) -> str:
    status = checkout.run(
        "-c", "core.fsmonitor=false", "status", "--porcelain=v1", "-z", "--untracked-files=all"
    )
    return hashlib.sha256((checkout.head() + "\0" + status).encode()).hexdigest()


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "missing"


def _outside_targets(root: Path) -> dict[str, str]:
    """Symlinks in the worktree that resolve outside it, with the content they point at."""
    found = {}
    real_root = os.path.realpath(root)
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name != ".git"]
        for name in [*files, *folders]:
            path = Path(folder) / name
            if path.is_symlink():
                target = os.path.realpath(path)
                if os.path.commonpath([real_root, target]) != real_root:
                    found[str(path.relative_to(root))] = _digest(Path(target))
    return found
