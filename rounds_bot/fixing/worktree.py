"""A git worktree for one fix attempt, outside the checkout, removed however the attempt ends.

    with open_worktree(git, branch, start) as tree:     # a new folder on `branch`, at commit `start`
        ... edit, check, test, commit in tree.path ...
        tree.keep_branch = True                          # only when the user asked to keep failed attempts

The folder lives in the system's temporary folder, so the model working in it cannot see the checkout. The
local branch is deleted with the folder unless it is kept; a pushed branch lives on in the remote.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from rounds_bot.errors import FixError
from rounds_bot.fixing.git import Git


@dataclass
class Worktree:
    path: Path
    branch: str
    git: Git
    keep_branch: bool = False


@contextmanager
def open_worktree(git: Git, branch: str, start: str) -> Iterator[Worktree]:
    """A worktree on a local `branch` (reset to `start`), deleted on the way out, whatever happens."""
    parent = Path(tempfile.mkdtemp(prefix="rounds-fix-"))
    path = parent / "worktree"
    git.run("worktree", "add", "--quiet", "--force", "-B", branch, str(path), start)
    tree = Worktree(path=path, branch=branch, git=git.at(path))
    try:
        yield tree
    finally:
        _remove(git, tree, parent)


def _remove(git: Git, tree: Worktree, parent: Path) -> None:
    with suppress(FixError):
        git.run("worktree", "remove", "--force", "--force", str(tree.path))
    shutil.rmtree(parent, ignore_errors=True)
    with suppress(FixError):
        git.run("worktree", "prune")
    if not tree.keep_branch:
        with suppress(FixError):
            git.run("branch", "--quiet", "-D", tree.branch)
