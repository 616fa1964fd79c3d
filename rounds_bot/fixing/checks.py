"""rounds checks the model's result itself, before any test runs or anything is committed.

    guard   = Guard.before(checkout, tree)       what must not change: the checkout, the worktree's `.git`
                                                 file, files that symlinks in the worktree point at
    checked = check_changes(tree, guard, ...)    every changed path inside the worktree, none protected
                                                 (`.github/` and the rest of ALWAYS_PROTECTED, then the
                                                 setting's), no symlink, at most `max_diff_lines` lines

The CLI already refuses writes outside the worktree; these checks do not rely on it. What passes is staged, so
the commit holds exactly what was checked, whatever the test command writes afterwards.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from rounds_bot.fixing.git import Git
from rounds_bot.fixing.worktree import Worktree
from rounds_bot.models import Frozen

#: never edited by a fix, whatever the settings say: CI, git, and rounds' and the CLI's own configuration
ALWAYS_PROTECTED = (".github/", ".git", ".rounds/", ".claude/", ".mcp.json", ".gitmodules")


class Checked(Frozen):
    """What the model changed, and what is wrong with it (nothing, when `ok`)."""

    files: list[str] = Field(default_factory=list)
    added: int = 0
    deleted: int = 0
    problems: list[str] = Field(default_factory=list)

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

    @classmethod
    def before(cls, checkout: Git, tree: Worktree) -> Guard:
        return cls(_checkout_state(checkout), _digest(tree.path / ".git"), _outside_targets(tree.path))

    def breaches(self, checkout: Git, tree: Worktree) -> list[str]:
        found = []
        if _checkout_state(checkout) != self.checkout:
            found.append(f"files changed in the checkout {checkout.cwd}, outside the worktree")
        if _digest(tree.path / ".git") != self.dot_git:
            found.append("the worktree's `.git` file was changed")
        for link, digest in self.outside_targets.items():
            if _digest(Path(os.path.realpath(tree.path / link))) != digest:
                found.append(f"a file outside the worktree was changed through the symlink `{link}`")
        return found


def check_changes(
    tree: Worktree, guard: Guard, checkout: Git, *, protected: list[str], max_diff_lines: int
) -> Checked:
    """The changed paths and their size; problems that forbid committing them."""
    problems = guard.breaches(checkout, tree)
    files = tree.git.changed_paths()
    patterns = [*ALWAYS_PROTECTED, *protected]
    for path in files:
        rule = protected_by(path, patterns)
        if rule is not None:
            problems.append(f"`{path}` is protected ({rule})")
        elif (tree.path / path).is_symlink():
            problems.append(f"`{path}` is a symbolic link")
    if problems or not files:
        return Checked(files=files, problems=problems)
    tree.git.stage(files)
    counts = tree.git.staged_line_counts()
    added, deleted = sum(a for a, _ in counts.values()), sum(d for _, d in counts.values())
    if added + deleted > max_diff_lines:
        problems.append(f"the change is {added + deleted} lines; at most {max_diff_lines} are allowed")
    return Checked(files=files, added=added, deleted=deleted, problems=problems)


def protected_by(path: str, patterns: list[str]) -> str | None:
    """The first pattern that protects `path`: a folder (`docs/`), a file, or a glob (`*.lock`)."""
    for pattern in patterns:
        bare = pattern.rstrip("/")
        if path == bare or path.startswith(bare + "/") or fnmatch.fnmatch(path, pattern):
            return pattern
    return None


def _checkout_state(checkout: Git) -> str:
    status = checkout.run("status", "--porcelain=v1", "-z", "--untracked-files=all")
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
